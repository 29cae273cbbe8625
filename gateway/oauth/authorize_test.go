package oauth

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

const testRedirect = "http://127.0.0.1:33418/callback"

// The sign-in page names the client and where the person goes back to,
// and carries nothing of the request but an opaque key.
func TestAuthorizeShowsSignIn(t *testing.T) {
	t.Parallel()
	f := setup(t, nil)
	id := f.register(publicClient)["client_id"].(string)
	_, challenge := pkce()
	resp, page := f.get(AuthorizePath, authorizeParams(id, testRedirect, challenge))
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
		t.Fatalf("status %d, type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	if resp.Header.Get("X-Frame-Options") != "DENY" || !strings.Contains(resp.Header.Get("Content-Security-Policy"), "frame-ancestors 'none'") {
		t.Errorf("the sign-in page may be framed: %v", resp.Header)
	}
	for _, want := range []string{"Test client", id, testRedirect, testResource, `value="agent"`, `value="person"`, `value="operator"`, `value="finance" checked`, "Cancel"} {
		if !strings.Contains(page, want) {
			t.Errorf("sign-in page lacks %q", want)
		}
	}
	if strings.Contains(page, challenge) {
		t.Error("sign-in page carries the code challenge; the request should stay on the server")
	}
}

func TestAuthorizeRefusals(t *testing.T) {
	t.Parallel()
	f := setup(t, nil)
	id := f.register(publicClient)["client_id"].(string)
	_, challenge := pkce()
	with := func(change func(url.Values)) url.Values {
		p := authorizeParams(id, testRedirect, challenge)
		change(p)
		return p
	}

	// Errors the client cannot be trusted with are shown on a page.
	pages := []struct {
		name   string
		params url.Values
	}{
		{"unknown client", with(func(p url.Values) { p.Set("client_id", "c_nobody") })},
		{"no client", with(func(p url.Values) { p.Del("client_id") })},
		{"unregistered redirect", with(func(p url.Values) { p.Set("redirect_uri", "https://evil.example/cb") })},
		{"redirect on loopback with another path", with(func(p url.Values) { p.Set("redirect_uri", "http://127.0.0.1:33418/other") })},
		{"two client ids", with(func(p url.Values) { p.Add("client_id", id) })},
	}
	for _, tt := range pages {
		t.Run(tt.name, func(t *testing.T) {
			resp, page := f.get(AuthorizePath, tt.params)
			if resp.StatusCode != http.StatusBadRequest || resp.Header.Get("Location") != "" {
				t.Fatalf("status %d, location %q; want 400 and no redirect", resp.StatusCode, resp.Header.Get("Location"))
			}
			if !strings.Contains(page, `class="error"`) {
				t.Errorf("no error shown:\n%s", page)
			}
		})
	}

	// The rest go back to the client.
	redirects := []struct {
		name   string
		params url.Values
		code   string
	}{
		{"plain PKCE", with(func(p url.Values) { p.Set("code_challenge_method", "plain") }), "invalid_request"},
		{"PKCE method missing, so plain", with(func(p url.Values) { p.Del("code_challenge_method") }), "invalid_request"},
		{"no PKCE", with(func(p url.Values) { p.Del("code_challenge"); p.Del("code_challenge_method") }), "invalid_request"},
		{"challenge not S256", with(func(p url.Values) { p.Set("code_challenge", "short") }), "invalid_request"},
		{"token response type", with(func(p url.Values) { p.Set("response_type", "token") }), "unsupported_response_type"},
		{"another resource", with(func(p url.Values) { p.Set("resource", "http://127.0.0.1:9999/mcp") }), "invalid_target"},
		{"two resources", with(func(p url.Values) { p.Add("resource", testResource) }), "invalid_target"},
		{"resource with fragment", with(func(p url.Values) { p.Set("resource", testResource+"#x") }), "invalid_target"},
	}
	for _, tt := range redirects {
		t.Run(tt.name, func(t *testing.T) {
			resp, _ := f.get(AuthorizePath, tt.params)
			q := redirected(t, resp, testRedirect)
			if q.Get("error") != tt.code || q.Get("error_description") == "" || q.Get("state") != "st-1" || q.Get("iss") != f.url {
				t.Fatalf("redirect query %v, want error %s with description, state and iss", q, tt.code)
			}
			if q.Get("code") != "" {
				t.Fatal("a refused request got a code")
			}
		})
	}
	if n := len(f.as.state.pending); n != 0 {
		t.Errorf("refused requests left %d pending sign-ins", n)
	}
}

// A resource differing only in case of host or a trailing slash is the same
// resource; no resource at all means the one the server serves.
func TestAuthorizeResourceForms(t *testing.T) {
	t.Parallel()
	f := setup(t, nil)
	id := f.register(publicClient)["client_id"].(string)
	_, challenge := pkce()
	for _, res := range []string{"", "HTTP://127.0.0.1:8080/mcp/"} {
		p := authorizeParams(id, testRedirect, challenge)
		if res == "" {
			p.Del("resource")
		} else {
			p.Set("resource", res)
		}
		f.signInKey(p)
	}
}

func TestSignInForm(t *testing.T) {
	t.Parallel()
	f := setup(t, nil)
	id := f.register(publicClient)["client_id"].(string)
	_, challenge := pkce()

	t.Run("bad identity shows the page again", func(t *testing.T) {
		key := f.signInKey(authorizeParams(id, testRedirect, challenge))
		resp, page := f.postForm(AuthorizePath, url.Values{"request": {key}, "kind": {"person"}, "id": {"mira"}, "groups": {"g_<b>"}})
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(page, `role="alert"`) {
			t.Fatalf("status %d:\n%s", resp.StatusCode, page)
		}
		if !strings.Contains(page, `value="mira"`) || !strings.Contains(page, `value="g_&lt;b&gt;"`) {
			t.Errorf("the page does not keep what was typed, escaped:\n%s", page)
		}
		// The same request can still be completed.
		resp, _ = f.postForm(AuthorizePath, url.Values{"request": {key}, "kind": {"agent"}, "id": {"a_x"}})
		if q := redirected(t, resp, testRedirect); q.Get("code") == "" {
			t.Fatalf("no code after a corrected sign-in: %v", q)
		}
	})

	t.Run("a request signs in once", func(t *testing.T) {
		key := f.signInKey(authorizeParams(id, testRedirect, challenge))
		who := url.Values{"request": {key}, "kind": {"agent"}, "id": {"a_x"}}
		resp, _ := f.postForm(AuthorizePath, who)
		redirected(t, resp, testRedirect)
		resp, _ = f.postForm(AuthorizePath, who)
		if resp.StatusCode != http.StatusBadRequest {
			t.Fatalf("second sign-in: status %d, want 400", resp.StatusCode)
		}
	})

	t.Run("unknown request", func(t *testing.T) {
		resp, _ := f.postForm(AuthorizePath, url.Values{"request": {"nope"}, "kind": {"agent"}, "id": {"a_x"}})
		if resp.StatusCode != http.StatusBadRequest || resp.Header.Get("Location") != "" {
			t.Fatalf("status %d, want 400 without redirect", resp.StatusCode)
		}
	})

	t.Run("expired request", func(t *testing.T) {
		key := f.signInKey(authorizeParams(id, testRedirect, challenge))
		f.as.state.mu.Lock()
		f.as.state.pending[key].expires = time.Now().Add(-time.Second)
		f.as.state.mu.Unlock()
		resp, _ := f.postForm(AuthorizePath, url.Values{"request": {key}, "kind": {"agent"}, "id": {"a_x"}})
		if resp.StatusCode != http.StatusBadRequest {
			t.Fatalf("status %d, want 400", resp.StatusCode)
		}
	})

	t.Run("cancel", func(t *testing.T) {
		key := f.signInKey(authorizeParams(id, testRedirect, challenge))
		resp, _ := f.postForm(AuthorizePath, url.Values{"request": {key}, "cancel": {"1"}})
		if q := redirected(t, resp, testRedirect); q.Get("error") != "access_denied" || q.Get("state") != "st-1" {
			t.Fatalf("cancel redirect %v, want access_denied with state", q)
		}
	})

	t.Run("identity from the query is ignored", func(t *testing.T) {
		key := f.signInKey(authorizeParams(id, testRedirect, challenge))
		resp, err := f.http.Post(f.url+AuthorizePath+"?kind=operator&id=u_ops", "application/x-www-form-urlencoded", strings.NewReader(url.Values{"request": {key}}.Encode()))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest {
			t.Fatalf("status %d, want 400: the form posted no identity", resp.StatusCode)
		}
	})
}
