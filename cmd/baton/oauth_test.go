package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	sdkauth "github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"

	"github.com/baton-run/baton/gateway/auth"
	"github.com/baton-run/baton/gateway/oauth"
	"github.com/baton-run/baton/internal/testing/pgtest"
	"github.com/baton-run/baton/internal/testing/spectest"
)

// syncBuffer is a bytes.Buffer safe for the goroutine running dev.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// devStack is `baton dev` running in this process.
type devStack struct {
	data, mcpURL, asURL, inboxURL string
}

// startDev runs dev() as `baton dev` does, on free loopback ports, with
// invoice-approval published, and waits for it to print its URLs. tweaks
// change the configuration first.
func startDev(t *testing.T, tweaks ...func(*devConfig)) *devStack {
	t.Helper()
	data := t.TempDir()
	cfg := devConfigFor(data)
	cfg.databaseURL = pgtest.NewDatabase(t)
	// Temporal's databases go beside the test's own, under its name: tests
	// share the PostgreSQL server.
	u, err := url.Parse(cfg.databaseURL)
	if err != nil {
		t.Fatal(err)
	}
	cfg.temporalDatabase = strings.TrimPrefix(u.Path, "/") + "_temporal"
	cfg.processes = listFlag{filepath.Join(fixturesDir(t), "invoice-approval")}
	for _, tweak := range tweaks {
		tweak(&cfg)
	}
	d := launchDev(t, cfg)
	if d.asURL == "" {
		t.Fatalf("baton dev printed no authorization server:\n%s", d.printed)
	}
	if !strings.Contains(d.printed, "Published invoice-approval v1") {
		t.Fatalf("invoice-approval was not published:\n%s", d.printed)
	}
	if d.inboxURL == "" {
		t.Fatalf("baton dev printed no inbox URL:\n%s", d.printed)
	}
	return &devStack{data: data, mcpURL: d.mcpURL, asURL: d.asURL, inboxURL: d.inboxURL}
}

// hop is one HTTP request a client made, as the recorder saw it.
type hop struct {
	method, url, grant string
	status             int
	bearer             string // the access token the request carried
	issued             string // the access token a token response carried
	clientID           string // the client_id of a token request
}

func (h hop) String() string {
	s := fmt.Sprintf("%s %s -> %d", h.method, h.url, h.status)
	if h.grant != "" {
		s += " (" + h.grant + ")"
	}
	return s
}

// recorder is a RoundTripper that notes every request and its answer.
type recorder struct {
	mu   sync.Mutex
	hops []hop
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	h := hop{method: req.Method, url: req.URL.Scheme + "://" + req.URL.Host + req.URL.Path}
	if b, ok := strings.CutPrefix(req.Header.Get("Authorization"), "Bearer "); ok {
		h.bearer = b
	}
	if req.Body != nil && strings.HasSuffix(req.URL.Path, oauth.TokenPath) {
		body, err := io.ReadAll(req.Body)
		if err != nil {
			return nil, err
		}
		req.Body = io.NopCloser(bytes.NewReader(body))
		form, _ := url.ParseQuery(string(body))
		h.grant = form.Get("grant_type")
		h.clientID = form.Get("client_id")
		if u, _, ok := req.BasicAuth(); ok && h.clientID == "" {
			h.clientID, _ = url.QueryUnescape(u)
		}
		if h.grant == "authorization_code" && form.Get("code_verifier") == "" {
			h.grant += " without code_verifier"
		}
	}
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	h.status = resp.StatusCode
	if h.grant != "" {
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return nil, err
		}
		resp.Body = io.NopCloser(bytes.NewReader(body))
		var tok struct {
			AccessToken string `json:"access_token"`
		}
		_ = json.Unmarshal(body, &tok)
		h.issued = tok.AccessToken
	}
	r.mu.Lock()
	r.hops = append(r.hops, h)
	r.mu.Unlock()
	return resp, nil
}

func (r *recorder) list() []hop {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]hop(nil), r.hops...)
}

var requestKey = regexp.MustCompile(`name="request" value="([^"]+)"`)

// signInAs is an AuthorizationCodeFetcher that does what a person does in
// the browser: opens the authorization URL and posts the sign-in form as
// who. It returns what the redirect to the client carried.
func signInAs(hc *http.Client, who url.Values) sdkauth.AuthorizationCodeFetcher {
	return func(ctx context.Context, args *sdkauth.AuthorizationArgs) (*sdkauth.AuthorizationResult, error) {
		noFollow := *hc
		noFollow.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
		resp, err := noFollow.Get(args.URL)
		if err != nil {
			return nil, err
		}
		page, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		m := requestKey.FindSubmatch(page)
		if resp.StatusCode != http.StatusOK || m == nil {
			return nil, fmt.Errorf("authorization page: status %d:\n%s", resp.StatusCode, page)
		}
		u, _ := url.Parse(args.URL)
		form := url.Values{"request": {string(m[1])}}
		for k, v := range who {
			form[k] = v
		}
		resp, err = noFollow.PostForm(u.Scheme+"://"+u.Host+u.Path, form)
		if err != nil {
			return nil, err
		}
		resp.Body.Close()
		loc, err := url.Parse(resp.Header.Get("Location"))
		if resp.StatusCode != http.StatusSeeOther || err != nil {
			return nil, fmt.Errorf("sign-in: status %d, location %q", resp.StatusCode, resp.Header.Get("Location"))
		}
		q := loc.Query()
		if q.Get("error") != "" {
			return nil, fmt.Errorf("sign-in refused: %s: %s", q.Get("error"), q.Get("error_description"))
		}
		return &sdkauth.AuthorizationResult{Code: q.Get("code"), State: q.Get("state"), Iss: q.Get("iss")}, nil
	}
}

// The whole dance against `baton dev`, with the MCP SDK's client and
// nothing but the MCP URL: a 401, the resource's metadata, the
// authorization server's metadata, dynamic registration, the sign-in form,
// the code exchanged with its PKCE verifier, one refresh, then tools.
func TestDevOAuthURLOnly(t *testing.T) {
	d := startDev(t)
	rec := &recorder{}
	hc := &http.Client{Transport: rec, Timeout: 30 * time.Second}

	var issued *oauth2.Token
	handler, err := sdkauth.NewAuthorizationCodeHandler(&sdkauth.AuthorizationCodeHandlerConfig{
		DynamicClientRegistrationConfig: &sdkauth.DynamicClientRegistrationConfig{
			Metadata: &oauthex.ClientRegistrationMetadata{
				ClientName:              "baton dev test",
				RedirectURIs:            []string{"http://127.0.0.1:1/callback"},
				TokenEndpointAuthMethod: "none",
				GrantTypes:              []string{"authorization_code", "refresh_token"},
			},
		},
		AuthorizationCodeFetcher: signInAs(hc, url.Values{"kind": {"agent"}, "id": {"a_oauth"}}),
		Client:                   hc,
		// Keep the issued token aside and start from its refresh token
		// alone, so the first use refreshes.
		NewTokenSource: func(ctx context.Context, cfg *oauth2.Config, tok *oauth2.Token) (oauth2.TokenSource, error) {
			issued = tok
			return cfg.TokenSource(ctx, &oauth2.Token{RefreshToken: tok.RefreshToken}), nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	cl := mcp.NewClient(&mcp.Implementation{Name: "baton-dev-oauth-test", Version: "0"}, nil)
	cs, err := cl.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: d.mcpURL, HTTPClient: hc, OAuthHandler: handler, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatalf("connect with the URL alone: %v\nrequests:\n%s", err, hopList(rec.list()))
	}
	defer cs.Close()

	call := func(tool string, args map[string]any) json.RawMessage {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v", tool, err)
		}
		text := res.Content[0].(*mcp.TextContent).Text
		spectest.ValidateToolResult(t, tool, json.RawMessage(text))
		var r struct {
			OK   bool            `json:"ok"`
			Data json.RawMessage `json:"data"`
		}
		if err := json.Unmarshal([]byte(text), &r); err != nil || !r.OK {
			t.Fatalf("%s refused: %s", tool, text)
		}
		return r.Data
	}
	var desc struct {
		Version string `json:"version"`
	}
	_ = json.Unmarshal(call("describe", nil), &desc)
	if desc.Version != "core-2" {
		t.Errorf("describe version %q", desc.Version)
	}
	var run struct {
		Run struct {
			ID string `json:"id"`
		} `json:"run"`
	}
	_ = json.Unmarshal(call("start_run", map[string]any{
		"process": "invoice-approval", "requestId": "oauth-run-1",
		"inputs": map[string]any{"invoiceId": "INV-1", "invoiceDocument": "https://erp.example/INV-1", "manager": "mira@example.com"},
	}), &run)
	var work struct {
		Items []struct {
			RunID  string `json:"runId"`
			StepID string `json:"stepId"`
		} `json:"items"`
	}
	_ = json.Unmarshal(call("get_work", map[string]any{}), &work)
	if len(work.Items) != 1 || work.Items[0].RunID != run.Run.ID || work.Items[0].StepID != "validate" {
		t.Errorf("get_work as the signed-in agent = %+v, want the validate step of run %s", work, run.Run.ID)
	}

	// The dance, in order, as the client's HTTP traffic shows it.
	hops := rec.list()
	want := []struct {
		method, url, grant string
		status             int
	}{
		{"POST", d.mcpURL, "", 401},
		{"GET", strings.TrimSuffix(d.mcpURL, "/mcp") + auth.MetadataPath, "", 200},
		// RFC 8414 §3.1: the issuer's path goes after the well-known one.
		{"GET", strings.TrimSuffix(d.mcpURL, "/mcp") + oauth.MetadataPath + oauthPath, "", 200},
		{"POST", d.asURL + oauth.RegisterPath, "", 201},
		{"GET", d.asURL + oauth.AuthorizePath, "", 200},
		{"POST", d.asURL + oauth.AuthorizePath, "", 303},
		{"POST", d.asURL + oauth.TokenPath, "authorization_code", 200},
		{"POST", d.asURL + oauth.TokenPath, "refresh_token", 200},
		{"POST", d.mcpURL, "", 200},
	}
	if len(hops) < len(want) {
		t.Fatalf("requests:\n%s", hopList(hops))
	}
	for i, w := range want {
		h := hops[i]
		if h.method != w.method || h.url != w.url || h.grant != w.grant || h.status != w.status {
			t.Fatalf("request %d is %v, want %s %s -> %d %s; all requests:\n%s", i, h, w.method, w.url, w.status, w.grant, hopList(hops))
		}
	}
	refreshed := hops[len(want)-2].issued
	for _, h := range hops[len(want)-1:] {
		if h.grant != "" {
			t.Errorf("another token request after the first refresh: %v", h)
		}
		if h.url == d.mcpURL && h.bearer != refreshed {
			t.Errorf("%v carried another token than the refreshed one", h)
		}
	}
	if issued == nil || issued.RefreshToken == "" || refreshed == "" {
		t.Fatalf("no refresh token issued (%+v), or none refreshed", issued)
	}

	// The gateway knows the caller as the identity picked on the form.
	issuer, err := auth.LoadOrCreateDevKey(d.data)
	if err != nil {
		t.Fatal(err)
	}
	id, _, err := issuer.VerifierFor(d.mcpURL)(ctx, refreshed)
	if err != nil || id.ID != "a_oauth" || id.Kind != auth.KindAgent {
		t.Errorf("refreshed token names %+v (%v), want agent a_oauth", id, err)
	}

	// The refresh spent the first refresh token: presented again, it is
	// refused.
	status, body := postToken(t, d.asURL, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {issued.RefreshToken}, "client_id": {hops[7].clientID}})
	if status != http.StatusBadRequest || !strings.Contains(body, "invalid_grant") {
		t.Errorf("spent refresh token: %d %s, want 400 invalid_grant", status, body)
	}

	t.Run("refusals", func(t *testing.T) { devRefusals(t, d, issuer) })
}

func postToken(t *testing.T, asURL string, form url.Values) (int, string) {
	t.Helper()
	resp, err := http.PostForm(asURL+oauth.TokenPath, form)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func hopList(hops []hop) string {
	var b strings.Builder
	for i, h := range hops {
		fmt.Fprintf(&b, "  %d: %v\n", i, h)
	}
	return b.String()
}

// devRefusals checks what `baton dev` refuses, over plain HTTP: a token for
// another resource at the gateway, plain PKCE, an unknown client, a wrong
// PKCE verifier.
func devRefusals(t *testing.T, d *devStack, issuer *auth.DevIssuer) {
	mcpStatus := func(token string) int {
		req, _ := http.NewRequest(http.MethodPost, d.mcpURL, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	agent := auth.Identity{ID: "a_oauth", Kind: auth.KindAgent}
	other, _ := issuer.IssueFor(agent, "http://127.0.0.1:1/mcp", time.Hour)
	if got := mcpStatus(other); got != http.StatusUnauthorized {
		t.Errorf("token for another resource: status %d, want 401", got)
	}
	mine, _ := issuer.IssueFor(agent, d.mcpURL, time.Hour)
	if got := mcpStatus(mine); got != http.StatusOK {
		t.Errorf("token for this resource: status %d, want 200", got)
	}

	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	reg, err := oauthex.RegisterClient(context.Background(), d.asURL+oauth.RegisterPath, &oauthex.ClientRegistrationMetadata{
		RedirectURIs: []string{"http://127.0.0.1:1/callback"}, TokenEndpointAuthMethod: "none",
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	verifier := oauth2.GenerateVerifier()
	authorize := func(change func(url.Values)) *http.Response {
		q := url.Values{
			"response_type": {"code"}, "client_id": {reg.ClientID}, "redirect_uri": {"http://127.0.0.1:1/callback"},
			"state": {"s"}, "code_challenge": {oauth2.S256ChallengeFromVerifier(verifier)},
			"code_challenge_method": {"S256"}, "resource": {d.mcpURL},
		}
		change(q)
		resp, err := noFollow.Get(d.asURL + oauth.AuthorizePath + "?" + q.Encode())
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	resp := authorize(func(q url.Values) { q.Set("code_challenge_method", "plain"); q.Set("code_challenge", verifier) })
	if loc, _ := url.Parse(resp.Header.Get("Location")); resp.StatusCode != http.StatusFound || loc.Query().Get("error") != "invalid_request" {
		t.Errorf("plain PKCE: status %d, location %q; want a redirect with invalid_request", resp.StatusCode, resp.Header.Get("Location"))
	}
	resp = authorize(func(q url.Values) { q.Set("client_id", "c_unknown") })
	if resp.StatusCode != http.StatusBadRequest || resp.Header.Get("Location") != "" {
		t.Errorf("unknown client: status %d, location %q; want 400 and no redirect", resp.StatusCode, resp.Header.Get("Location"))
	}
	resp = authorize(func(q url.Values) { q.Set("resource", "http://127.0.0.1:1/mcp") })
	if loc, _ := url.Parse(resp.Header.Get("Location")); loc == nil || loc.Query().Get("error") != "invalid_target" {
		t.Errorf("another resource: location %q; want invalid_target", resp.Header.Get("Location"))
	}

	code, err := signInAs(http.DefaultClient, url.Values{"kind": {"agent"}, "id": {"a_oauth"}})(context.Background(), &sdkauth.AuthorizationArgs{
		URL: d.asURL + oauth.AuthorizePath + "?" + url.Values{
			"response_type": {"code"}, "client_id": {reg.ClientID}, "redirect_uri": {"http://127.0.0.1:1/callback"},
			"state": {"s"}, "code_challenge": {oauth2.S256ChallengeFromVerifier(verifier)}, "code_challenge_method": {"S256"},
		}.Encode(),
	})
	if err != nil {
		t.Fatal(err)
	}
	cfg := &oauth2.Config{ClientID: reg.ClientID, RedirectURL: "http://127.0.0.1:1/callback", Endpoint: oauth2.Endpoint{
		AuthURL: d.asURL + oauth.AuthorizePath, TokenURL: d.asURL + oauth.TokenPath, AuthStyle: oauth2.AuthStyleInParams,
	}}
	_, err = cfg.Exchange(context.Background(), code.Code, oauth2.VerifierOption(oauth2.GenerateVerifier()))
	var re *oauth2.RetrieveError
	if !errors.As(err, &re) || re.ErrorCode != "invalid_grant" {
		t.Errorf("wrong PKCE verifier: %v, want invalid_grant", err)
	}
	_, err = cfg.Exchange(context.Background(), code.Code, oauth2.VerifierOption(verifier))
	if !errors.As(err, &re) || re.ErrorCode != "invalid_grant" {
		t.Errorf("the right verifier after a wrong one: %v, want invalid_grant (a code is good for one attempt)", err)
	}
	cfg.ClientID = "c_unknown"
	_, err = cfg.Exchange(context.Background(), code.Code, oauth2.VerifierOption(verifier))
	if !errors.As(err, &re) || re.ErrorCode != "invalid_client" {
		t.Errorf("unknown client at the token endpoint: %v, want invalid_client", err)
	}
}

func TestListenURL(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	for addr, want := range map[string]string{
		"127.0.0.1:0": fmt.Sprintf("http://127.0.0.1:%d", port),
		"localhost:0": fmt.Sprintf("http://localhost:%d", port),
		":0":          fmt.Sprintf("http://127.0.0.1:%d", port),
		"0.0.0.0:0":   fmt.Sprintf("http://127.0.0.1:%d", port),
	} {
		if got := listenURL(addr, ln); got != want {
			t.Errorf("listenURL(%q) = %q, want %q", addr, got, want)
		}
	}
}

// serve and gateway name the issuer of the tokens they accept as the
// authorization server, and none without one.
func TestServeNamesIssuer(t *testing.T) {
	cfg := serveConfig{issuer: "https://login.example.com/"}
	if got := cfg.authServers(); len(got) != 1 || got[0] != "https://login.example.com/" {
		t.Errorf("authServers = %q, want the issuer", got)
	}
	cfg.issuer = ""
	if got := cfg.authServers(); got != nil {
		t.Errorf("authServers without --issuer = %q, want none", got)
	}
}
