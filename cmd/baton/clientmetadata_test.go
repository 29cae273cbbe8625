package main

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	sdkauth "github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/oauth2"

	"github.com/baton-run/baton/gateway/auth"
	"github.com/baton-run/baton/gateway/oauth"
)

// The dance against `baton dev` by a client known by its Client ID
// Metadata Document, as current MCP clients prefer: the authorization
// server advertises client_id_metadata_document_supported, the client skips
// registration and sends the https URL of its document as client_id, the
// server fetches the document (from a local https server with a test
// certificate) and holds the redirect to it, and the token works.
func TestDevOAuthClientMetadataDocument(t *testing.T) {
	const redirect = "http://127.0.0.1:1/callback"
	var fetches atomic.Int64
	docs := httptest.NewUnstartedServer(nil)
	docs.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/oauth/client.json" {
			http.NotFound(w, r)
			return
		}
		fetches.Add(1)
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{
			"client_id": "https://" + r.Host + r.URL.Path, "client_name": "Metadata document client",
			"redirect_uris": []string{redirect}, "grant_types": []string{"authorization_code", "refresh_token"},
			"token_endpoint_auth_method": "none",
		})
	})
	docs.StartTLS()
	defer docs.Close()
	roots := x509.NewCertPool()
	roots.AddCert(docs.Certificate())
	clientID := docs.URL + "/oauth/client.json"

	d := startDev(t, func(c *devConfig) { c.clientMetadataRoots = roots })
	rec := &recorder{}
	hc := &http.Client{Transport: rec, Timeout: 30 * time.Second}
	handler, err := sdkauth.NewAuthorizationCodeHandler(&sdkauth.AuthorizationCodeHandlerConfig{
		ClientIDMetadataDocumentConfig: &sdkauth.ClientIDMetadataDocumentConfig{URL: clientID},
		RedirectURL:                    redirect,
		AuthorizationCodeFetcher:       signInAs(hc, url.Values{"kind": {"person"}, "id": {"mira@example.com"}}),
		Client:                         hc,
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	cl := mcp.NewClient(&mcp.Implementation{Name: "baton-dev-cimd-test", Version: "0"}, nil)
	cs, err := cl.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: d.mcpURL, HTTPClient: hc, OAuthHandler: handler, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatalf("connect with a client metadata document: %v\nrequests:\n%s", err, hopList(rec.list()))
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "get_work", Arguments: map[string]any{}})
	if err != nil || res.IsError {
		t.Fatalf("get_work: %v %+v", err, res)
	}

	hops := rec.list()
	want := []struct {
		method, url string
		status      int
	}{
		{"POST", d.mcpURL, 401},
		{"GET", strings.TrimSuffix(d.mcpURL, "/mcp") + auth.MetadataPath, 200},
		{"GET", strings.TrimSuffix(d.mcpURL, "/mcp") + oauth.MetadataPath + oauthPath, 200},
		// No registration: the authorization request names the document.
		{"GET", d.asURL + oauth.AuthorizePath, 200},
		{"POST", d.asURL + oauth.AuthorizePath, 303},
		{"POST", d.asURL + oauth.TokenPath, 200},
		{"POST", d.mcpURL, 200},
	}
	if len(hops) < len(want) {
		t.Fatalf("requests:\n%s", hopList(hops))
	}
	for i, w := range want {
		if h := hops[i]; h.method != w.method || h.url != w.url || h.status != w.status {
			t.Fatalf("request %d is %v, want %s %s -> %d; all requests:\n%s", i, h, w.method, w.url, w.status, hopList(hops))
		}
	}
	if got := hops[5].clientID; got != clientID {
		t.Errorf("the token request named client %q, want the document's URL %s", got, clientID)
	}
	if n := fetches.Load(); n != 1 {
		t.Errorf("the document was fetched %d times, want once: the token request uses the cached copy", n)
	}
	issuer, err := auth.LoadOrCreateDevKey(d.data)
	if err != nil {
		t.Fatal(err)
	}
	id, _, err := issuer.VerifierFor(d.mcpURL)(ctx, hops[len(hops)-1].bearer)
	if err != nil || id.ID != "mira@example.com" || id.Kind != auth.KindPerson {
		t.Errorf("the token names %+v (%v), want person mira@example.com", id, err)
	}

	// A redirect URI the document does not list gets no code.
	challenge := oauth2.S256ChallengeFromVerifier(oauth2.GenerateVerifier())
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noFollow.Get(d.asURL + oauth.AuthorizePath + "?" + url.Values{
		"response_type": {"code"}, "client_id": {clientID}, "redirect_uri": {"http://127.0.0.1:2/elsewhere"},
		"code_challenge": {challenge}, "code_challenge_method": {"S256"},
	}.Encode())
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest || resp.Header.Get("Location") != "" {
		t.Errorf("authorize with a redirect the document does not list: %d, Location %q", resp.StatusCode, resp.Header.Get("Location"))
	}
}
