package oauth

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/baton-run/baton/gateway/auth"
)

func TestTokenFlow(t *testing.T) {
	t.Parallel()
	f := setup(t, nil)
	clientID, tok := f.tokens(asPerson)
	if tok["token_type"] != "Bearer" || tok["expires_in"] != float64(3600) || tok["refresh_token"] == "" {
		t.Fatalf("token response %v", tok)
	}
	access := tok["access_token"].(string)
	want := auth.Identity{ID: "mira@example.com", Kind: auth.KindPerson, Groups: []string{"finance", "g_x"}}
	if got := f.verify(access); !reflect.DeepEqual(*got, want) {
		t.Errorf("token identity %+v, want %+v", *got, want)
	}

	// The token is for this resource alone: the gateway of another
	// resource, and a verifier of plain dev tokens, refuse it.
	if _, _, err := f.issuer.VerifierFor("http://127.0.0.1:9999/mcp")(context.Background(), access); !errors.Is(err, auth.ErrInvalidToken) {
		t.Errorf("another resource's gateway: %v, want ErrInvalidToken", err)
	}
	if _, _, err := f.issuer.Verify(context.Background(), access); !errors.Is(err, auth.ErrInvalidToken) {
		t.Errorf("plain dev verifier: %v, want ErrInvalidToken", err)
	}

	// Refresh: a new access token for the same identity and a new refresh
	// token; the old one is spent.
	old := tok["refresh_token"].(string)
	status, next := f.token(url.Values{"grant_type": {"refresh_token"}, "refresh_token": {old}, "client_id": {clientID}, "resource": {testResource}})
	if status != http.StatusOK || next["refresh_token"] == old || next["access_token"] == "" {
		t.Fatalf("refresh: %d %v", status, next)
	}
	if got := f.verify(next["access_token"].(string)); !reflect.DeepEqual(*got, want) {
		t.Errorf("refreshed identity %+v, want %+v", *got, want)
	}

	// Presenting the spent token again revokes the family: the newest
	// refresh token stops working too.
	status, body := f.token(url.Values{"grant_type": {"refresh_token"}, "refresh_token": {old}, "client_id": {clientID}})
	wantOAuthError(t, status, body, http.StatusBadRequest, "invalid_grant")
	status, body = f.token(url.Values{"grant_type": {"refresh_token"}, "refresh_token": {next["refresh_token"].(string)}, "client_id": {clientID}})
	wantOAuthError(t, status, body, http.StatusBadRequest, "invalid_grant")
}

func TestOperatorAndAgentTokens(t *testing.T) {
	t.Parallel()
	f := setup(t, nil)
	_, tok := f.tokens(url.Values{"kind": {"operator"}, "id": {"u_night"}, "groups": {"legal"}})
	want := auth.Identity{ID: "u_night", Kind: auth.KindOperator, Groups: []string{"operators", "legal"}}
	if got := f.verify(tok["access_token"].(string)); !reflect.DeepEqual(*got, want) {
		t.Errorf("operator %+v, want %+v", *got, want)
	}
	_, tok = f.tokens(url.Values{"kind": {"agent"}, "id": {"a_screener"}, "group": {"finance"}})
	want = auth.Identity{ID: "a_screener", Kind: auth.KindAgent}
	if got := f.verify(tok["access_token"].(string)); !reflect.DeepEqual(*got, want) {
		t.Errorf("agent %+v, want %+v", *got, want)
	}
}

func TestCodeExchangeRefusals(t *testing.T) {
	t.Parallel()
	f := setup(t, nil)
	clientID := f.register(publicClient)["client_id"].(string)
	otherID := f.register(publicClient)["client_id"].(string)
	exchange := func(code, verifier string, change func(url.Values)) (int, map[string]any) {
		form := url.Values{
			"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {testRedirect},
			"client_id": {clientID}, "code_verifier": {verifier},
		}
		if change != nil {
			change(form)
		}
		return f.token(form)
	}
	agent := url.Values{"kind": {"agent"}, "id": {"a_x"}}
	tests := []struct {
		name   string
		change func(form url.Values, verifier string)
		status int
		code   string
	}{
		{"wrong verifier", func(form url.Values, _ string) {
			other, _ := pkce()
			form.Set("code_verifier", other)
		}, 400, "invalid_grant"},
		{"the challenge as verifier (plain PKCE)", func(form url.Values, _ string) {
			form.Set("code_verifier", form.Get("challenge"))
		}, 400, "invalid_grant"},
		{"no verifier", func(form url.Values, _ string) { form.Del("code_verifier") }, 400, "invalid_request"},
		{"short verifier", func(form url.Values, _ string) { form.Set("code_verifier", "abc") }, 400, "invalid_grant"},
		{"unknown client", func(form url.Values, _ string) { form.Set("client_id", "c_nobody") }, 401, "invalid_client"},
		{"no client", func(form url.Values, _ string) { form.Del("client_id") }, 401, "invalid_client"},
		{"another client's code", func(form url.Values, _ string) { form.Set("client_id", otherID) }, 400, "invalid_grant"},
		{"other redirect URI", func(form url.Values, _ string) { form.Set("redirect_uri", "http://127.0.0.1:1/callback") }, 400, "invalid_grant"},
		{"no redirect URI", func(form url.Values, _ string) { form.Del("redirect_uri") }, 400, "invalid_grant"},
		{"another resource", func(form url.Values, _ string) { form.Set("resource", "https://elsewhere.example/mcp") }, 400, "invalid_target"},
		{"unknown code", func(form url.Values, _ string) { form.Set("code", "nope") }, 400, "invalid_grant"},
		{"password grant", func(form url.Values, _ string) { form.Set("grant_type", "password") }, 400, "unsupported_grant_type"},
		{"secret for a public client", func(form url.Values, _ string) { form.Set("client_secret", "x") }, 401, "invalid_client"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			verifier, challenge := pkce()
			code := f.code(clientID, testRedirect, challenge, agent)
			status, body := exchange(code, verifier, func(form url.Values) {
				form.Set("challenge", challenge)
				tt.change(form, verifier)
				form.Del("challenge")
			})
			wantOAuthError(t, status, body, tt.status, tt.code)
		})
	}

	t.Run("a code is good once", func(t *testing.T) {
		verifier, challenge := pkce()
		code := f.code(clientID, testRedirect, challenge, agent)
		status, tok := exchange(code, verifier, nil)
		if status != http.StatusOK {
			t.Fatalf("first exchange: %d %v", status, tok)
		}
		status, body := exchange(code, verifier, nil)
		wantOAuthError(t, status, body, 400, "invalid_grant")
		// The replay revoked what the code had given.
		status, body = f.token(url.Values{"grant_type": {"refresh_token"}, "refresh_token": {tok["refresh_token"].(string)}, "client_id": {clientID}})
		wantOAuthError(t, status, body, 400, "invalid_grant")
	})

	t.Run("a failed exchange spends the code", func(t *testing.T) {
		verifier, challenge := pkce()
		code := f.code(clientID, testRedirect, challenge, agent)
		wrong, _ := pkce()
		exchange(code, wrong, nil)
		status, body := exchange(code, verifier, nil)
		wantOAuthError(t, status, body, 400, "invalid_grant")
	})

	t.Run("expired code", func(t *testing.T) {
		verifier, challenge := pkce()
		code := f.code(clientID, testRedirect, challenge, agent)
		f.as.state.mu.Lock()
		f.as.state.codes[digest(code)].expires = time.Now().Add(-time.Second)
		f.as.state.mu.Unlock()
		status, body := exchange(code, verifier, nil)
		wantOAuthError(t, status, body, 400, "invalid_grant")
	})
}

func TestConfidentialClient(t *testing.T) {
	t.Parallel()
	f := setup(t, nil)
	reg := f.register(map[string]any{"redirect_uris": []string{"https://app.example/cb"}})
	id, secret := reg["client_id"].(string), reg["client_secret"].(string)
	post := func(form url.Values, user, pass string) (int, map[string]any) {
		req, _ := http.NewRequest(http.MethodPost, f.url+TokenPath, strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if user != "" {
			req.SetBasicAuth(url.QueryEscape(user), url.QueryEscape(pass))
		}
		return f.doJSON(req)
	}
	flow := func() (verifier string, form url.Values) {
		verifier, challenge := pkce()
		code := f.code(id, "https://app.example/cb", challenge, url.Values{"kind": {"agent"}, "id": {"a_x"}})
		return verifier, url.Values{"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {"https://app.example/cb"}, "code_verifier": {verifier}}
	}

	_, form := flow()
	if status, body := post(form, id, secret); status != http.StatusOK {
		t.Fatalf("client_secret_basic: %d %v", status, body)
	}
	_, form = flow()
	form.Set("client_id", id)
	form.Set("client_secret", secret)
	if status, body := post(form, "", ""); status != http.StatusOK {
		t.Fatalf("client_secret_post: %d %v", status, body)
	}

	_, form = flow()
	status, body := post(form, id, "wrong")
	wantOAuthError(t, status, body, http.StatusUnauthorized, "invalid_client")
	_, form = flow()
	form.Set("client_id", id)
	status, body = post(form, "", "")
	wantOAuthError(t, status, body, http.StatusUnauthorized, "invalid_client")
}

// With a state file, refresh tokens outlive the server, and the server of
// a gateway that moved to another URL does not honour them.
func TestRefreshAcrossRestart(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "oauth-state.json")
	f := setup(t, func(o *Options) { o.StateFile = file })
	clientID, tok := f.tokens(asPerson)

	again := setupWith(t, f.issuer, func(o *Options) { o.StateFile = file })
	status, next := again.token(url.Values{"grant_type": {"refresh_token"}, "refresh_token": {tok["refresh_token"].(string)}, "client_id": {clientID}})
	if status != http.StatusOK {
		t.Fatalf("refresh after restart: %d %v", status, next)
	}
	again.verify(next["access_token"].(string))

	moved := setupWith(t, f.issuer, func(o *Options) { o.StateFile = file; o.Resource = "http://127.0.0.1:8081/mcp" })
	status, body := moved.token(url.Values{"grant_type": {"refresh_token"}, "refresh_token": {next["refresh_token"].(string)}, "client_id": {clientID}})
	wantOAuthError(t, status, body, http.StatusBadRequest, "invalid_grant")
}

func TestRefreshRefusals(t *testing.T) {
	t.Parallel()
	f := setup(t, nil)
	clientID, tok := f.tokens(url.Values{"kind": {"agent"}, "id": {"a_x"}})
	otherID := f.register(publicClient)["client_id"].(string)
	refresh := tok["refresh_token"].(string)
	tests := []struct {
		name string
		form url.Values
		code string
	}{
		{"another client", url.Values{"client_id": {otherID}}, "invalid_grant"},
		{"unknown token", url.Values{"client_id": {clientID}, "refresh_token": {"nope"}}, "invalid_grant"},
		{"no token", url.Values{"client_id": {clientID}, "refresh_token": {""}}, "invalid_request"},
		{"wider scope", url.Values{"client_id": {clientID}, "scope": {"admin"}}, "invalid_scope"},
		{"another resource", url.Values{"client_id": {clientID}, "resource": {"http://127.0.0.1:9999/mcp"}}, "invalid_target"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			form := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {refresh}}
			for k, v := range tt.form {
				form[k] = v
			}
			status, body := f.token(form)
			wantOAuthError(t, status, body, http.StatusBadRequest, tt.code)
		})
	}
	// None of the refusals spent the token.
	status, body := f.token(url.Values{"grant_type": {"refresh_token"}, "refresh_token": {refresh}, "client_id": {clientID}})
	if status != http.StatusOK {
		t.Fatalf("refresh after refusals: %d %v", status, body)
	}
}
