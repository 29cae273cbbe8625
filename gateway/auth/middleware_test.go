package auth

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	sdkauth "github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const testMetadataURL = "https://baton.example.com/.well-known/oauth-protected-resource/mcp"

func TestMiddleware(t *testing.T) {
	t.Parallel()
	d := newTestDevIssuer(t)
	other := newTestDevIssuer(t)
	person := Identity{ID: "mira@example.com", Kind: KindPerson, Groups: []string{"g_finance"}}
	good, err := d.Issue(person, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	forged, err := other.Issue(person, time.Hour)
	if err != nil {
		t.Fatal(err)
	}

	h := Middleware(d.Verify, testMetadataURL, nil, nil)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, ok := FromTokenInfo(sdkauth.TokenInfoFromContext(r.Context()))
		if !ok {
			http.Error(w, "no identity", http.StatusInternalServerError)
			return
		}
		json.NewEncoder(w).Encode(id)
	}))

	tests := []struct {
		name       string
		header     string // Authorization
		wantStatus int
		want       *Identity
	}{
		{name: "no token", wantStatus: http.StatusUnauthorized},
		{name: "not bearer", header: "Basic " + good, wantStatus: http.StatusUnauthorized},
		{name: "bad token", header: "Bearer " + good[:len(good)-2], wantStatus: http.StatusUnauthorized},
		{name: "forged token", header: "Bearer " + forged, wantStatus: http.StatusUnauthorized},
		{name: "good token", header: "Bearer " + good, wantStatus: http.StatusOK, want: &person},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodPost, "/mcp", nil)
			if tt.header != "" {
				r.Header.Set("Authorization", tt.header)
			}
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			if w.Code != tt.wantStatus {
				t.Fatalf("status = %d, want %d (body %q)", w.Code, tt.wantStatus, w.Body.String())
			}
			if tt.wantStatus == http.StatusUnauthorized {
				want := `Bearer resource_metadata="` + testMetadataURL + `"`
				if got := w.Header().Get("WWW-Authenticate"); got != want {
					t.Errorf("WWW-Authenticate = %q, want %q", got, want)
				}
				return
			}
			var got Identity
			if err := json.NewDecoder(w.Body).Decode(&got); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(&got, tt.want) {
				t.Errorf("identity = %+v, want %+v", got, *tt.want)
			}
		})
	}
}

// A refused token gets the same short 401 body whatever the reason, and a
// verifier that broke a fixed 500; why goes to the server's log only.
func TestMiddlewareHidesWhyATokenWasRefused(t *testing.T) {
	t.Parallel()
	refuse := func(ctx context.Context, token string) (*Identity, time.Time, error) {
		switch token {
		case "expired":
			return nil, time.Time{}, fmt.Errorf("%w: token expired at 2026-01-01T00:00:00Z; get a new token", ErrInvalidToken)
		case "jwks-down":
			return nil, time.Time{}, fmt.Errorf("%w: the issuer has no RS256 key with id \"k2\" (fetching the key set again failed: fetch JWKS https://idp.internal:8443/jwks: dial tcp 10.0.0.7:8443: connection refused)", ErrInvalidToken)
		default:
			return nil, time.Time{}, errors.New("verifier broke: pq: password authentication failed for user \"baton\"")
		}
	}
	var logged bytes.Buffer
	h := Middleware(refuse, testMetadataURL, nil, slog.New(slog.NewTextHandler(&logged, nil)))(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Error("a refused request reached the handler")
	}))
	tests := []struct {
		token    string
		wantCode int
		wantBody string
	}{
		{"expired", http.StatusUnauthorized, refusedTokenMessage},
		{"jwks-down", http.StatusUnauthorized, refusedTokenMessage},
		{"broken", http.StatusInternalServerError, verifierFailedMessage},
	}
	for _, tt := range tests {
		tok := tt.token
		r := httptest.NewRequest(http.MethodPost, "/mcp", nil)
		r.Header.Set("Authorization", "Bearer "+tok)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		body := strings.TrimSpace(w.Body.String())
		if w.Code != tt.wantCode {
			t.Errorf("%s: status %d, want %d", tok, w.Code, tt.wantCode)
		}
		if body != tt.wantBody {
			t.Errorf("%s: body %q, want %q", tok, body, tt.wantBody)
		}
		for _, secret := range []string{"idp.internal", "10.0.0.7", "expired at", "pq:", "baton"} {
			if strings.Contains(body, secret) {
				t.Errorf("%s: body %q echoes %q", tok, body, secret)
			}
		}
	}
	for _, want := range []string{"expired at", "10.0.0.7", "password authentication"} {
		if !strings.Contains(logged.String(), want) {
			t.Errorf("the log does not say %q:\n%s", want, logged.String())
		}
	}
}

// bearer adds a bearer token to every request.
type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

// TestMiddlewareMCPTool checks that an MCP tool handler behind Middleware
// reads the caller from req.Extra.TokenInfo.
func TestMiddlewareMCPTool(t *testing.T) {
	t.Parallel()
	d := newTestDevIssuer(t)
	s := mcp.NewServer(&mcp.Implementation{Name: "test", Version: "0"}, nil)
	type whoami struct {
		ID   string `json:"id"`
		Kind string `json:"kind"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "whoami"}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, whoami, error) {
		id, ok := FromTokenInfo(req.Extra.TokenInfo)
		if !ok {
			return &mcp.CallToolResult{IsError: true}, whoami{}, nil
		}
		return nil, whoami{ID: id.ID, Kind: id.Kind.String()}, nil
	})
	mux := http.NewServeMux()
	mux.Handle("/mcp", Middleware(d.Verify, testMetadataURL, nil, nil)(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: true})))
	srv := httptest.NewServer(mux)
	defer srv.Close()

	tok, err := d.Issue(Identity{ID: "a_screener", Kind: KindAgent}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	cl := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "0"}, nil)
	cs, err := cl.Connect(ctx, &mcp.StreamableClientTransport{
		Endpoint:   srv.URL + "/mcp",
		HTTPClient: &http.Client{Transport: bearer{tok, http.DefaultTransport}},
		MaxRetries: -1,
	}, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "whoami", Arguments: map[string]any{}})
	if err != nil {
		t.Fatalf("call: %v", err)
	}
	if res.IsError {
		t.Fatalf("tool handler saw no identity: %+v", res)
	}
	got, _ := json.Marshal(res.StructuredContent)
	if want := `{"id":"a_screener","kind":"agent"}`; string(got) != want {
		t.Errorf("whoami = %s, want %s", got, want)
	}

	// Without a token the client cannot connect.
	resp, err := http.Post(srv.URL+"/mcp", "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("no token: status %d, want 401", resp.StatusCode)
	}
}

func TestFromTokenInfo(t *testing.T) {
	t.Parallel()
	id := &Identity{ID: "a", Kind: KindAgent}
	tests := []struct {
		name string
		ti   *sdkauth.TokenInfo
		want *Identity
	}{
		{name: "nil", ti: nil},
		{name: "no extra", ti: &sdkauth.TokenInfo{UserID: "a"}},
		{name: "other type", ti: &sdkauth.TokenInfo{Extra: map[string]any{"identity": *id}}},
		{name: "identity", ti: &sdkauth.TokenInfo{Extra: map[string]any{"identity": id}}, want: id},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := FromTokenInfo(tt.ti)
			if got != tt.want || ok != (tt.want != nil) {
				t.Errorf("FromTokenInfo = %v, %v; want %v", got, ok, tt.want)
			}
		})
	}
}

func TestMetadataHandler(t *testing.T) {
	t.Parallel()
	h := MetadataHandler("https://baton.example.com/mcp", []string{"https://idp.example.com"}, nil)
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, MetadataPath+"/mcp", nil))
	if w.Code != http.StatusOK {
		t.Fatalf("status = %d", w.Code)
	}
	var got struct {
		Resource             string   `json:"resource"`
		AuthorizationServers []string `json:"authorization_servers"`
		BearerMethods        []string `json:"bearer_methods_supported"`
	}
	if err := json.NewDecoder(w.Body).Decode(&got); err != nil {
		t.Fatal(err)
	}
	if got.Resource != "https://baton.example.com/mcp" || !reflect.DeepEqual(got.AuthorizationServers, []string{"https://idp.example.com"}) || !reflect.DeepEqual(got.BearerMethods, []string{"header"}) {
		t.Errorf("metadata = %+v", got)
	}
}

func TestMetadataURL(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		resource string
		want     string // "" means an error
	}{
		{name: "path", resource: "https://baton.example.com/mcp", want: "https://baton.example.com/.well-known/oauth-protected-resource/mcp"},
		{name: "trailing slash", resource: "http://127.0.0.1:8080/mcp/", want: "http://127.0.0.1:8080/.well-known/oauth-protected-resource/mcp"},
		{name: "no path", resource: "https://baton.example.com", want: "https://baton.example.com/.well-known/oauth-protected-resource"},
		{name: "relative", resource: "/mcp"},
		{name: "query", resource: "https://baton.example.com/mcp?x=1"},
		{name: "other scheme", resource: "ftp://baton.example.com/mcp"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := MetadataURL(tt.resource)
			if tt.want == "" {
				if err == nil {
					t.Fatalf("MetadataURL(%q) = %q, want an error", tt.resource, got)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("MetadataURL(%q) = %q, %v; want %q", tt.resource, got, err, tt.want)
			}
		})
	}
}
