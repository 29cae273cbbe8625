package tests

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"math/big"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/baton-run/baton/gateway/inbox"
)

// provider is an OpenID Connect provider speaking the protocol's HTTP API:
// discovery, an authorization endpoint that signs in whoever it is told
// to, a token endpoint for confidential clients with PKCE, and its keys.
type provider struct {
	t        *testing.T
	srv      *httptest.Server
	key      *rsa.PrivateKey
	clientID string
	secret   string

	mu     sync.Mutex
	claims map[string]any      // who the next sign-in is
	codes  map[string]grant    // code → what it was issued for
	nonce  func(string) string // changes the nonce put in ID tokens
}

type grant struct {
	redirectURI, challenge, nonce string
	claims                        map[string]any
}

func newProvider(t *testing.T) *provider {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	p := &provider{t: t, key: key, clientID: "inbox-client", secret: "s3cret", codes: map[string]grant{}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/openid-configuration", func(w http.ResponseWriter, r *http.Request) {
		_ = json.NewEncoder(w).Encode(map[string]any{
			"issuer": p.srv.URL, "authorization_endpoint": p.srv.URL + "/authorize",
			"token_endpoint": p.srv.URL + "/token", "jwks_uri": p.srv.URL + "/jwks",
		})
	})
	mux.HandleFunc("GET /jwks", func(w http.ResponseWriter, r *http.Request) {
		e := big.NewInt(int64(key.E)).Bytes()
		_ = json.NewEncoder(w).Encode(map[string]any{"keys": []any{map[string]any{
			"kty": "RSA", "kid": "k1", "alg": "RS256", "use": "sig",
			"n": base64.RawURLEncoding.EncodeToString(key.N.Bytes()), "e": base64.RawURLEncoding.EncodeToString(e),
		}}})
	})
	mux.HandleFunc("GET /authorize", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if q.Get("client_id") != p.clientID || q.Get("response_type") != "code" || q.Get("code_challenge_method") != "S256" ||
			q.Get("code_challenge") == "" || q.Get("nonce") == "" || !strings.Contains(q.Get("scope"), "openid") {
			http.Error(w, "bad authorization request: "+r.URL.RawQuery, http.StatusBadRequest)
			return
		}
		p.mu.Lock()
		code := rid()
		p.codes[code] = grant{redirectURI: q.Get("redirect_uri"), challenge: q.Get("code_challenge"), nonce: q.Get("nonce"), claims: p.claims}
		p.mu.Unlock()
		back := url.Values{"code": {code}, "state": {q.Get("state")}}
		http.Redirect(w, r, q.Get("redirect_uri")+"?"+back.Encode(), http.StatusFound)
	})
	mux.HandleFunc("POST /token", func(w http.ResponseWriter, r *http.Request) {
		id, secret, ok := r.BasicAuth()
		_ = r.ParseForm()
		p.mu.Lock()
		g, found := p.codes[r.PostForm.Get("code")]
		delete(p.codes, r.PostForm.Get("code"))
		nonceOf := p.nonce
		p.mu.Unlock()
		sum := sha256.Sum256([]byte(r.PostForm.Get("code_verifier")))
		if !ok || id != p.clientID || secret != p.secret || !found || r.PostForm.Get("grant_type") != "authorization_code" ||
			r.PostForm.Get("redirect_uri") != g.redirectURI || base64.RawURLEncoding.EncodeToString(sum[:]) != g.challenge {
			w.WriteHeader(http.StatusBadRequest)
			_ = json.NewEncoder(w).Encode(map[string]any{"error": "invalid_grant"})
			return
		}
		claims := map[string]any{"iss": p.srv.URL, "aud": p.clientID, "exp": time.Now().Add(time.Hour).Unix(), "iat": time.Now().Unix()}
		for k, v := range g.claims {
			claims[k] = v
		}
		claims["nonce"] = g.nonce
		if nonceOf != nil {
			claims["nonce"] = nonceOf(g.nonce)
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"access_token": "at", "token_type": "Bearer", "id_token": p.sign(claims)})
	})
	p.srv = httptest.NewServer(mux)
	t.Cleanup(p.srv.Close)
	return p
}

func (p *provider) sign(claims map[string]any) string {
	h, _ := json.Marshal(map[string]any{"alg": "RS256", "kid": "k1", "typ": "JWT"})
	c, _ := json.Marshal(claims)
	input := base64.RawURLEncoding.EncodeToString(h) + "." + base64.RawURLEncoding.EncodeToString(c)
	sum := sha256.Sum256([]byte(input))
	sig, err := rsa.SignPKCS1v15(rand.Reader, p.key, crypto.SHA256, sum[:])
	if err != nil {
		p.t.Fatal(err)
	}
	return input + "." + base64.RawURLEncoding.EncodeToString(sig)
}

func (p *provider) next(claims map[string]any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.claims = claims
}

// With serve, people sign in with OpenID Connect against the issuer: the
// ID token's claims, read as bearer tokens are, say who they are.
func TestInboxOIDCSignIn(t *testing.T) {
	idp := newProvider(t)
	b := start(t, options{})
	in, err := inbox.New(b.gateway, &inbox.Options{BaseURL: b.url, Secret: b.opts.Secret, OIDC: &inbox.OIDCOptions{
		Issuer: idp.srv.URL, ClientID: idp.clientID, ClientSecret: idp.secret,
	}})
	if err != nil {
		t.Fatal(err)
	}
	b.gateway.Mount(inbox.Path, in.Handler())
	b.srv.Config.Handler = b.gateway.Handler()
	b.publish(fieldsSrc)
	v := startFields(t, b, b.connect(stan), "one")

	// A person: no kind claim means a person; groups from "groups".
	idp.next(map[string]any{"sub": "Rita@Example.com", "groups": []any{"reviewers"}})
	w := b.browser(t)
	p := w.get("/inbox/runs/" + v.Run.ID + "/items/" + v.WorkItems[0].ID)
	if p.status != http.StatusOK || p.url != "/inbox/runs/"+v.Run.ID+"/items/"+v.WorkItems[0].ID || !p.has("rita@example.com") || !strings.Contains(p.body, `id="complete"`) {
		t.Fatalf("after signing in with the provider: %d at %s\n%s", p.status, p.url, p.body)
	}

	// An operator, by the kind claim.
	idp.next(map[string]any{"sub": "u_ops", "baton_kind": "operator", "groups": []any{"operators"}})
	wo := b.browser(t)
	if p := wo.get("/inbox/escalations"); p.status != http.StatusOK || p.url != "/inbox/escalations" || !p.has("No escalation is waiting.") {
		t.Fatalf("operator sign-in: %d at %s\n%s", p.status, p.url, p.body)
	}

	// Agents work over MCP.
	idp.next(map[string]any{"sub": "a_screener", "baton_kind": "agent"})
	if p := b.browser(t).get("/inbox/"); p.status != http.StatusForbidden || strings.Contains(p.body, "My work") {
		t.Fatalf("agent sign-in: %d\n%s", p.status, p.body)
	}

	// An ID token for another sign-in (its nonce) is refused.
	idp.next(map[string]any{"sub": "rita@example.com"})
	idp.mu.Lock()
	idp.nonce = func(string) string { return "replayed" }
	idp.mu.Unlock()
	if p := b.browser(t).get("/inbox/"); p.status != http.StatusUnauthorized || !p.has("nonce") {
		t.Fatalf("a token with another nonce: %d\n%s", p.status, p.body)
	}
	idp.mu.Lock()
	idp.nonce = nil
	idp.mu.Unlock()

	// A callback the browser did not start is refused.
	if p := b.browser(t).get("/inbox/callback?code=x&state=y"); p.status != http.StatusBadRequest {
		t.Fatalf("a stray callback: %d", p.status)
	}
}
