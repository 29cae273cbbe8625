package oauth

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

func TestRequireHost(t *testing.T) {
	t.Parallel()
	ok := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) })
	tests := []struct {
		base, host string
		want       int
	}{
		{"http://127.0.0.1:8080", "127.0.0.1:8080", http.StatusNoContent},
		{"http://127.0.0.1:8080", "localhost:8080", http.StatusNoContent},
		{"http://127.0.0.1:8080", "LOCALHOST:8080", http.StatusNoContent},
		{"http://127.0.0.1:8080", "[::1]:8080", http.StatusNoContent},
		{"http://localhost:8080", "127.0.0.2:8080", http.StatusNoContent},
		{"http://127.0.0.1:8080", "rebound.example:8080", http.StatusMisdirectedRequest},
		{"http://127.0.0.1:8080", "127.0.0.1.rebound.example:8080", http.StatusMisdirectedRequest},
		{"http://127.0.0.1:8080", "localhost.rebound.example", http.StatusMisdirectedRequest},
		{"http://127.0.0.1:8080", "", http.StatusMisdirectedRequest},
		{"https://baton.example.com", "baton.example.com", http.StatusNoContent},
		{"https://baton.example.com", "Baton.Example.com:443", http.StatusNoContent},
		{"https://baton.example.com", "baton.example.com:8443", http.StatusMisdirectedRequest},
		{"https://baton.example.com", "127.0.0.1", http.StatusMisdirectedRequest},
		{"https://baton.example.com", "evil.example", http.StatusMisdirectedRequest},
	}
	for _, tt := range tests {
		base, _ := url.Parse(tt.base)
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.Host = tt.host
		w := httptest.NewRecorder()
		RequireHost(base, ok).ServeHTTP(w, r)
		if w.Code != tt.want {
			t.Errorf("base %s, Host %q: status %d, want %d", tt.base, tt.host, w.Code, tt.want)
		}
	}
}

// A page of another site that rebinds its name to 127.0.0.1 reaches the
// server under that name: every endpoint refuses it and nothing changes.
func TestServerRefusesAnotherHost(t *testing.T) {
	t.Parallel()
	f := setup(t, nil)
	rebound := "rebound.example:" + strings.Split(f.url, ":")[2]
	send := func(method, path, body, ctype string) int {
		t.Helper()
		req, _ := http.NewRequest(method, f.url+path, strings.NewReader(body))
		req.Host = rebound
		if ctype != "" {
			req.Header.Set("Content-Type", ctype)
		}
		resp, err := f.http.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	meta, _ := json.Marshal(publicClient)
	if got := send(http.MethodPost, RegisterPath, string(meta), "application/json"); got != http.StatusMisdirectedRequest {
		t.Fatalf("register as %s: status %d, want 421", rebound, got)
	}
	if n := len(f.as.state.saved.Clients); n != 0 {
		t.Fatalf("a refused registration left %d clients", n)
	}

	// A real client's authorization request, signed in as another host.
	c := f.register(publicClient)
	_, challenge := pkce()
	key := f.signInKey(authorizeParams(c["client_id"].(string), "http://127.0.0.1:33418/callback", challenge))
	for _, r := range []struct{ method, path, body string }{
		{http.MethodGet, AuthorizePath + "?" + authorizeParams(c["client_id"].(string), "http://127.0.0.1:33418/callback", challenge).Encode(), ""},
		{http.MethodPost, AuthorizePath, url.Values{"request": {key}, "kind": {"operator"}, "id": {"u_ops"}}.Encode()},
		{http.MethodGet, MetadataPath, ""},
		{http.MethodPost, TokenPath, url.Values{"grant_type": {"authorization_code"}}.Encode()},
	} {
		if got := send(r.method, r.path, r.body, "application/x-www-form-urlencoded"); got != http.StatusMisdirectedRequest {
			t.Fatalf("%s %s as %s: status %d, want 421", r.method, r.path, rebound, got)
		}
	}
	if n := len(f.as.state.codes); n != 0 {
		t.Fatalf("a refused sign-in issued %d codes", n)
	}
	if f.as.state.pendingRequest(key, f.as.now()) == nil {
		t.Fatal("a refused sign-in spent the pending request")
	}
}
