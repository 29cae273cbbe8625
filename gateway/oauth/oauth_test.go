package oauth

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/baton-run/baton/gateway/auth"
)

// testResource is the MCP URL the servers under test issue tokens for.
const testResource = "http://127.0.0.1:8080/mcp"

// fixture is an authorization server over HTTP, with the dev issuer that
// mints its tokens and a client that does not follow redirects.
type fixture struct {
	t      *testing.T
	as     *Server
	issuer *auth.DevIssuer
	url    string
	http   *http.Client
}

func setup(t *testing.T, tweak func(*Options)) *fixture {
	t.Helper()
	key := make([]byte, auth.KeySize)
	_, _ = rand.Read(key)
	issuer, err := auth.NewDevIssuer(key)
	if err != nil {
		t.Fatal(err)
	}
	return setupWith(t, issuer, tweak)
}

func setupWith(t *testing.T, issuer *auth.DevIssuer, tweak func(*Options)) *fixture {
	t.Helper()
	srv := httptest.NewUnstartedServer(nil)
	opts := &Options{Issuer: "http://" + srv.Listener.Addr().String(), Resource: testResource, Groups: []string{"finance", "legal"}}
	if tweak != nil {
		tweak(opts)
	}
	as, err := New(issuer, opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	srv.Config.Handler = as.Handler()
	srv.Start()
	t.Cleanup(srv.Close)
	return &fixture{
		t: t, as: as, issuer: issuer, url: srv.URL,
		http: &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }},
	}
}

// publicClient is the registration of a native MCP client.
var publicClient = map[string]any{
	"redirect_uris":              []string{"http://127.0.0.1:33418/callback"},
	"token_endpoint_auth_method": "none",
	"grant_types":                []string{"authorization_code", "refresh_token"},
	"client_name":                "Test client",
}

// register registers a client and returns the response.
func (f *fixture) register(meta map[string]any) map[string]any {
	f.t.Helper()
	status, body := f.postJSON(RegisterPath, meta)
	if status != http.StatusCreated {
		f.t.Fatalf("register: status %d: %v", status, body)
	}
	return body
}

func (f *fixture) postJSON(path string, v any) (int, map[string]any) {
	f.t.Helper()
	b, _ := json.Marshal(v)
	req, _ := http.NewRequest(http.MethodPost, f.url+path, strings.NewReader(string(b)))
	req.Header.Set("Content-Type", "application/json")
	return f.doJSON(req)
}

func (f *fixture) doJSON(req *http.Request) (int, map[string]any) {
	f.t.Helper()
	resp, err := f.http.Do(req)
	if err != nil {
		f.t.Fatal(err)
	}
	defer resp.Body.Close()
	var body map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		f.t.Fatalf("%s %s: status %d, body is not JSON: %v", req.Method, req.URL.Path, resp.StatusCode, err)
	}
	return resp.StatusCode, body
}

// pkce returns a fresh verifier and its S256 challenge.
func pkce() (verifier, challenge string) {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	verifier = base64.RawURLEncoding.EncodeToString(b)
	sum := sha256.Sum256([]byte(verifier))
	return verifier, base64.RawURLEncoding.EncodeToString(sum[:])
}

// authorizeParams are the parameters of a good authorization request.
func authorizeParams(clientID, redirect, challenge string) url.Values {
	return url.Values{
		"response_type":         {"code"},
		"client_id":             {clientID},
		"redirect_uri":          {redirect},
		"state":                 {"st-1"},
		"code_challenge":        {challenge},
		"code_challenge_method": {"S256"},
		"resource":              {testResource},
	}
}

// get fetches path with params and returns the response with its body read.
func (f *fixture) get(path string, params url.Values) (*http.Response, string) {
	f.t.Helper()
	resp, err := f.http.Get(f.url + path + "?" + params.Encode())
	if err != nil {
		f.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

func (f *fixture) postForm(path string, form url.Values) (*http.Response, string) {
	f.t.Helper()
	resp, err := f.http.PostForm(f.url+path, form)
	if err != nil {
		f.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

var requestField = regexp.MustCompile(`name="request" value="([^"]+)"`)

// signInKey opens the authorization page and returns the request key its
// forms carry.
func (f *fixture) signInKey(params url.Values) string {
	f.t.Helper()
	resp, page := f.get(AuthorizePath, params)
	if resp.StatusCode != http.StatusOK {
		f.t.Fatalf("authorize: status %d, want the sign-in page:\n%s", resp.StatusCode, page)
	}
	m := requestField.FindStringSubmatch(page)
	if m == nil {
		f.t.Fatalf("sign-in page carries no request key:\n%s", page)
	}
	return m[1]
}

// redirected returns the query of the redirect a response makes, checking
// it goes to redirect.
func redirected(t *testing.T, resp *http.Response, redirect string) url.Values {
	t.Helper()
	if resp.StatusCode != http.StatusFound && resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("status %d, want a redirect", resp.StatusCode)
	}
	loc, err := url.Parse(resp.Header.Get("Location"))
	if err != nil {
		t.Fatal(err)
	}
	if got := loc.Scheme + "://" + loc.Host + loc.Path; got != redirect {
		t.Fatalf("redirected to %s, want %s", got, redirect)
	}
	return loc.Query()
}

// code runs the authorization request and the sign-in as who, and returns
// the code.
func (f *fixture) code(clientID, redirect, challenge string, who url.Values) string {
	f.t.Helper()
	key := f.signInKey(authorizeParams(clientID, redirect, challenge))
	form := url.Values{"request": {key}}
	for k, v := range who {
		form[k] = v
	}
	resp, body := f.postForm(AuthorizePath, form)
	if resp.StatusCode != http.StatusSeeOther {
		f.t.Fatalf("sign-in: status %d, want 303:\n%s", resp.StatusCode, body)
	}
	q := redirected(f.t, resp, redirect)
	if q.Get("state") != "st-1" || q.Get("iss") != f.url || q.Get("code") == "" {
		f.t.Fatalf("redirect query %v, want code, state st-1 and iss %s", q, f.url)
	}
	return q.Get("code")
}

// token posts a token request.
func (f *fixture) token(form url.Values) (int, map[string]any) {
	f.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, f.url+TokenPath, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return f.doJSON(req)
}

// tokens runs the whole flow for a public client and returns the token
// response.
func (f *fixture) tokens(who url.Values) (clientID string, body map[string]any) {
	f.t.Helper()
	reg := f.register(publicClient)
	clientID = reg["client_id"].(string)
	redirect := "http://127.0.0.1:33418/callback"
	verifier, challenge := pkce()
	c := f.code(clientID, redirect, challenge, who)
	status, body := f.token(url.Values{
		"grant_type": {"authorization_code"}, "code": {c}, "redirect_uri": {redirect},
		"client_id": {clientID}, "code_verifier": {verifier}, "resource": {testResource},
	})
	if status != http.StatusOK {
		f.t.Fatalf("token: status %d: %v", status, body)
	}
	return clientID, body
}

// verify checks an access token as the gateway of testResource would.
func (f *fixture) verify(token string) *auth.Identity {
	f.t.Helper()
	id, _, err := f.issuer.VerifierFor(testResource)(context.Background(), token)
	if err != nil {
		f.t.Fatalf("gateway refuses the access token: %v", err)
	}
	return id
}

var asPerson = url.Values{"kind": {"person"}, "id": {"Mira@Example.com"}, "group": {"finance"}, "groups": {"g_x"}}

func wantOAuthError(t *testing.T, status int, body map[string]any, wantStatus int, wantCode string) {
	t.Helper()
	if status != wantStatus || body["error"] != wantCode {
		t.Fatalf("got %d %v, want %d %s", status, body, wantStatus, wantCode)
	}
	if d, _ := body["error_description"].(string); d == "" {
		t.Errorf("error %s has no description", wantCode)
	}
}

func TestNewRefuses(t *testing.T) {
	t.Parallel()
	key := make([]byte, auth.KeySize)
	issuer, _ := auth.NewDevIssuer(key)
	tests := []struct {
		name string
		m    Minter
		opts *Options
	}{
		{"no minter", nil, &Options{Issuer: "http://127.0.0.1:8090", Resource: testResource}},
		{"no options", issuer, nil},
		{"no issuer", issuer, &Options{Resource: testResource}},
		{"http issuer off loopback", issuer, &Options{Issuer: "http://example.com", Resource: testResource}},
		{"issuer with query", issuer, &Options{Issuer: "http://127.0.0.1:8090/as?x=1", Resource: testResource}},
		{"no resource", issuer, &Options{Issuer: "http://127.0.0.1:8090"}},
		{"relative resource", issuer, &Options{Issuer: "http://127.0.0.1:8090", Resource: "/mcp"}},
		{"short access tokens", issuer, &Options{Issuer: "http://127.0.0.1:8090", Resource: testResource, AccessTokenTTL: time.Second}},
		{"refresh shorter than access", issuer, &Options{Issuer: "http://127.0.0.1:8090", Resource: testResource, AccessTokenTTL: time.Hour, RefreshTokenTTL: time.Minute}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := New(tt.m, tt.opts); err == nil {
				t.Fatal("New succeeded, want an error")
			} else {
				t.Log(err)
			}
		})
	}
}

// An issuer with a path shares a listener with other handlers: its
// metadata is at the RFC 8414 path-inserted URL (and under the path), its
// endpoints under the path, and nothing is served beside them.
func TestIssuerWithPath(t *testing.T) {
	t.Parallel()
	key := make([]byte, auth.KeySize)
	_, _ = rand.Read(key)
	issuer, _ := auth.NewDevIssuer(key)
	srv := httptest.NewUnstartedServer(nil)
	iss := "http://" + srv.Listener.Addr().String() + "/oauth"
	as, err := New(issuer, &Options{Issuer: iss + "/", Resource: testResource})
	if err != nil {
		t.Fatal(err)
	}
	if as.Issuer() != iss {
		t.Errorf("Issuer() = %q, want %q", as.Issuer(), iss)
	}
	mux := http.NewServeMux()
	for _, p := range as.Patterns() {
		mux.Handle(p, as.Handler())
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusTeapot) })
	srv.Config.Handler = mux
	srv.Start()
	t.Cleanup(srv.Close)
	for _, u := range []string{srv.URL + MetadataPath + "/oauth", iss + MetadataPath} {
		resp, err := http.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		var m Metadata
		_ = json.NewDecoder(resp.Body).Decode(&m)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || m.Issuer != iss || m.TokenEndpoint != iss+TokenPath || m.AuthorizationEndpoint != iss+AuthorizePath || m.RegistrationEndpoint != iss+RegisterPath {
			t.Errorf("GET %s: %d %+v", u, resp.StatusCode, m)
		}
	}
	resp, err := http.Post(iss+RegisterPath, "application/json", strings.NewReader(`{"redirect_uris":["http://127.0.0.1:1/cb"],"token_endpoint_auth_method":"none"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Errorf("register under the path: %d", resp.StatusCode)
	}
	for _, p := range []string{RegisterPath, MetadataPath, "/other"} {
		resp, err := http.Get(srv.URL + p)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusTeapot {
			t.Errorf("GET %s answered %d: the server serves beside its path", p, resp.StatusCode)
		}
	}
}
