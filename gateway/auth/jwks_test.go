package auth

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"math/big"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// testKey is a private key with the JWK of its public half.
type testKey struct {
	kid  string
	alg  string
	priv crypto.Signer
}

func newRSAKey(t *testing.T, kid, alg string) *testKey {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	return &testKey{kid: kid, alg: alg, priv: k}
}

func newECKey(t *testing.T, kid string) *testKey {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return &testKey{kid: kid, alg: "ES256", priv: k}
}

// jwk returns the public JWK; the key's alg is published only when withAlg.
func (k *testKey) jwk(t *testing.T, withAlg bool) map[string]any {
	t.Helper()
	m := map[string]any{"kid": k.kid, "use": "sig"}
	if withAlg {
		m["alg"] = k.alg
	}
	switch p := k.priv.Public().(type) {
	case *rsa.PublicKey:
		m["kty"] = "RSA"
		m["n"] = b64.EncodeToString(p.N.Bytes())
		m["e"] = b64.EncodeToString(big.NewInt(int64(p.E)).Bytes())
	case *ecdsa.PublicKey:
		raw, err := p.Bytes()
		if err != nil {
			t.Fatal(err)
		}
		m["kty"] = "EC"
		m["crv"] = "P-256"
		m["x"] = b64.EncodeToString(raw[1:33])
		m["y"] = b64.EncodeToString(raw[33:])
	}
	return m
}

// sign is the test-only JWT signer: it signs claims with k under k.alg.
func (k *testKey) sign(t *testing.T, claims map[string]any) string {
	t.Helper()
	return k.signWith(t, k.alg, k.kid, claims)
}

func (k *testKey) signWith(t *testing.T, alg, kid string, claims map[string]any) string {
	t.Helper()
	header, err := json.Marshal(map[string]any{"alg": alg, "kid": kid, "typ": "JWT"})
	if err != nil {
		t.Fatal(err)
	}
	payload, err := json.Marshal(claims)
	if err != nil {
		t.Fatal(err)
	}
	input := b64.EncodeToString(header) + "." + b64.EncodeToString(payload)
	digest := sha256.Sum256([]byte(input))
	var sig []byte
	switch alg {
	case "RS256":
		sig, err = rsa.SignPKCS1v15(rand.Reader, k.priv.(*rsa.PrivateKey), crypto.SHA256, digest[:])
	case "PS256":
		sig, err = rsa.SignPSS(rand.Reader, k.priv.(*rsa.PrivateKey), crypto.SHA256, digest[:], &rsa.PSSOptions{SaltLength: rsa.PSSSaltLengthEqualsHash})
	case "ES256":
		var r, s *big.Int
		r, s, err = ecdsa.Sign(rand.Reader, k.priv.(*ecdsa.PrivateKey), digest[:])
		if err == nil {
			sig = append(r.FillBytes(make([]byte, 32)), s.FillBytes(make([]byte, 32))...)
		}
	default:
		t.Fatalf("test signer: unknown alg %q", alg)
	}
	if err != nil {
		t.Fatal(err)
	}
	return input + "." + b64.EncodeToString(sig)
}

// jwksServer serves a key set that tests can change, counting fetches.
type jwksServer struct {
	*httptest.Server
	fetches atomic.Int32
	mu      sync.Mutex
	keys    []map[string]any
}

func newJWKSServer(t *testing.T, keys ...map[string]any) *jwksServer {
	t.Helper()
	s := &jwksServer{keys: keys}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.fetches.Add(1)
		s.mu.Lock()
		defer s.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"keys": s.keys})
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *jwksServer) setKeys(keys ...map[string]any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.keys = keys
}

const (
	testIssuer   = "https://idp.example.com"
	testAudience = "https://baton.example.com/mcp"
)

// goodClaims returns claims that a verifier built with testIssuer and
// testAudience accepts, changed by edit.
func goodClaims(edit func(map[string]any)) map[string]any {
	now := time.Now()
	c := map[string]any{
		"iss":        testIssuer,
		"aud":        []string{"other", testAudience},
		"sub":        "a_screener",
		"baton_kind": "agent",
		"groups":     []string{"g_ops", "g_finance"},
		"iat":        now.Unix(),
		"nbf":        now.Add(-time.Minute).Unix(),
		"exp":        now.Add(time.Hour).Unix(),
	}
	if edit != nil {
		edit(c)
	}
	return c
}

func TestJWKSVerifier(t *testing.T) {
	t.Parallel()
	rs := newRSAKey(t, "rs", "RS256")
	ps := newRSAKey(t, "ps", "PS256")
	es := newECKey(t, "es")
	stranger := newRSAKey(t, "rs", "RS256") // same kid, other key
	srv := newJWKSServer(t, rs.jwk(t, true), ps.jwk(t, false), es.jwk(t, true))
	v, err := NewJWKSVerifier(context.Background(), &JWKSOptions{
		Issuer:   testIssuer,
		JWKSURL:  srv.URL,
		Audience: testAudience,
	})
	if err != nil {
		t.Fatalf("NewJWKSVerifier: %v", err)
	}
	agent := &Identity{ID: "a_screener", Kind: KindAgent, Groups: []string{"g_ops", "g_finance"}}

	tests := []struct {
		name  string
		token string
		want  *Identity // nil: refused
	}{
		{name: "RS256", token: rs.sign(t, goodClaims(nil)), want: agent},
		{name: "PS256 on a key without alg", token: ps.sign(t, goodClaims(nil)), want: agent},
		{name: "ES256", token: es.sign(t, goodClaims(nil)), want: agent},
		{
			name: "person by email, audience as a string",
			token: rs.sign(t, goodClaims(func(c map[string]any) {
				c["sub"], c["baton_kind"], c["aud"], c["groups"] = "Mira@Example.com", "person", testAudience, "g_finance"
			})),
			want: &Identity{ID: "mira@example.com", Kind: KindPerson, Groups: []string{"g_finance"}},
		},
		{
			name: "operator without groups",
			token: es.sign(t, goodClaims(func(c map[string]any) {
				c["sub"], c["baton_kind"] = "u_ops", "operator"
				delete(c, "groups")
			})),
			want: &Identity{ID: "u_ops", Kind: KindOperator},
		},
		{
			name:  "organization from the org claim",
			token: rs.sign(t, goodClaims(func(c map[string]any) { c["org"] = "o_acme" })),
			want:  &Identity{ID: agent.ID, Kind: KindAgent, Groups: agent.Groups, Org: "o_acme"},
		},
		{name: "organization not a string", token: rs.sign(t, goodClaims(func(c map[string]any) { c["org"] = 7 }))},
		{name: "organization not an id", token: rs.sign(t, goodClaims(func(c map[string]any) { c["org"] = "o acme" }))},
		{name: "expired", token: rs.sign(t, goodClaims(func(c map[string]any) { c["exp"] = time.Now().Add(-time.Hour).Unix() }))},
		{name: "no exp", token: rs.sign(t, goodClaims(func(c map[string]any) { delete(c, "exp") }))},
		{name: "not yet valid", token: rs.sign(t, goodClaims(func(c map[string]any) { c["nbf"] = time.Now().Add(time.Hour).Unix() }))},
		{name: "wrong audience", token: rs.sign(t, goodClaims(func(c map[string]any) { c["aud"] = "https://other.example.com" }))},
		{name: "no audience", token: rs.sign(t, goodClaims(func(c map[string]any) { delete(c, "aud") }))},
		{name: "wrong issuer", token: rs.sign(t, goodClaims(func(c map[string]any) { c["iss"] = "https://evil.example.com" }))},
		{name: "no kind", token: rs.sign(t, goodClaims(func(c map[string]any) { delete(c, "baton_kind") }))},
		{name: "unknown kind", token: rs.sign(t, goodClaims(func(c map[string]any) { c["baton_kind"] = "admin" }))},
		{name: "person without email", token: rs.sign(t, goodClaims(func(c map[string]any) { c["baton_kind"] = "person" }))},
		{name: "no subject", token: rs.sign(t, goodClaims(func(c map[string]any) { delete(c, "sub") }))},
		{name: "groups not strings", token: rs.sign(t, goodClaims(func(c map[string]any) { c["groups"] = []any{1, 2} }))},
		{name: "bad signature", token: stranger.sign(t, goodClaims(nil))},
		{name: "RS256 key used as ES256", token: es.signWith(t, "ES256", "rs", goodClaims(nil))},
		{name: "key restricted to RS256 used for PS256", token: rs.signWith(t, "PS256", "rs", goodClaims(nil))},
		{name: "alg none", token: b64.EncodeToString([]byte(`{"alg":"none","kid":"rs"}`)) + "." + b64.EncodeToString([]byte(`{}`)) + "."},
		{name: "no kid among several keys", token: rs.signWith(t, "RS256", "", goodClaims(nil))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id, exp, err := v(context.Background(), tt.token)
			if tt.want == nil {
				if !errors.Is(err, ErrInvalidToken) {
					t.Fatalf("verify = %+v, %v; want ErrInvalidToken", id, err)
				}
				t.Log(err)
				return
			}
			if err != nil {
				t.Fatalf("verify: %v", err)
			}
			if !reflect.DeepEqual(id, tt.want) {
				t.Errorf("identity = %+v, want %+v", id, tt.want)
			}
			if d := time.Until(exp); d < 59*time.Minute || d > time.Hour {
				t.Errorf("expiry in %v, want about an hour", d)
			}
		})
	}
}

func TestJWKSVerifierRefetchesOnUnknownKid(t *testing.T) {
	t.Parallel()
	old := newRSAKey(t, "old", "RS256")
	rotated := newECKey(t, "new")
	unknown := newECKey(t, "unknown")
	srv := newJWKSServer(t, old.jwk(t, true))
	v, err := NewJWKSVerifier(context.Background(), &JWKSOptions{
		Issuer:          testIssuer,
		JWKSURL:         srv.URL,
		Audience:        testAudience,
		RefreshInterval: time.Hour,
	})
	if err != nil {
		t.Fatalf("NewJWKSVerifier: %v", err)
	}
	if n := srv.fetches.Load(); n != 1 {
		t.Fatalf("fetches after start = %d, want 1", n)
	}
	if _, _, err := v(context.Background(), old.sign(t, goodClaims(nil))); err != nil {
		t.Fatalf("known key: %v", err)
	}
	if n := srv.fetches.Load(); n != 1 {
		t.Fatalf("fetches after a known kid = %d, want 1", n)
	}

	srv.setKeys(old.jwk(t, true), rotated.jwk(t, true))
	if _, _, err := v(context.Background(), rotated.sign(t, goodClaims(nil))); err != nil {
		t.Fatalf("rotated key: %v", err)
	}
	if n := srv.fetches.Load(); n != 2 {
		t.Fatalf("fetches after an unknown kid = %d, want 2", n)
	}

	// Within RefreshInterval another unknown kid does not fetch again.
	if _, _, err := v(context.Background(), unknown.sign(t, goodClaims(nil))); !errors.Is(err, ErrInvalidToken) {
		t.Fatalf("unknown key: err = %v, want ErrInvalidToken", err)
	}
	if n := srv.fetches.Load(); n != 2 {
		t.Fatalf("fetches after a second unknown kid = %d, want 2 (rate-limited)", n)
	}
}

func TestJWKSVerifierStaticKeysAndClaimNames(t *testing.T) {
	t.Parallel()
	k := newECKey(t, "only")
	set, err := json.Marshal(map[string]any{"keys": []any{k.jwk(t, false)}})
	if err != nil {
		t.Fatal(err)
	}
	v, err := NewJWKSVerifier(context.Background(), &JWKSOptions{
		Issuer:        testIssuer,
		JWKS:          set,
		Audience:      testAudience,
		IDClaim:       "client_id",
		PersonIDClaim: "email",
		KindClaim:     "typ",
		GroupsClaim:   "roles",
		OrgClaim:      "tenant",
		DefaultKind:   KindAgent,
	})
	if err != nil {
		t.Fatalf("NewJWKSVerifier: %v", err)
	}
	tests := []struct {
		name   string
		claims map[string]any
		want   Identity
	}{
		{
			name:   "default kind",
			claims: map[string]any{"client_id": "a_bot", "roles": []string{"g_x"}},
			want:   Identity{ID: "a_bot", Kind: KindAgent, Groups: []string{"g_x"}},
		},
		{
			name:   "person id from its own claim",
			claims: map[string]any{"client_id": "ignored", "email": "ana@example.com", "email_verified": true, "typ": "person"},
			want:   Identity{ID: "ana@example.com", Kind: KindPerson},
		},
		{
			name:   "organization from its claim",
			claims: map[string]any{"client_id": "a_bot", "tenant": "o_acme", "org": "o_ignored"},
			want:   Identity{ID: "a_bot", Kind: KindAgent, Org: "o_acme"},
		},
		{
			name:   "an empty organization claim is the default organization",
			claims: map[string]any{"client_id": "a_bot", "tenant": ""},
			want:   Identity{ID: "a_bot", Kind: KindAgent},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := map[string]any{"iss": testIssuer, "aud": testAudience, "exp": time.Now().Add(time.Minute).Unix()}
			for name, val := range tt.claims {
				c[name] = val
			}
			// No kid: the set has exactly one ES256 key.
			id, _, err := v(context.Background(), k.signWith(t, "ES256", "", c))
			if err != nil {
				t.Fatalf("verify: %v", err)
			}
			if !reflect.DeepEqual(*id, tt.want) {
				t.Errorf("identity = %+v, want %+v", *id, tt.want)
			}
		})
	}
}

func TestNewJWKSVerifierRefuses(t *testing.T) {
	t.Parallel()
	good := newRSAKey(t, "k", "RS256")
	srv := newJWKSServer(t, good.jwk(t, true))
	empty := newJWKSServer(t)
	small, err := rsa.GenerateKey(rand.Reader, 1024)
	if err != nil {
		t.Fatal(err)
	}
	smallSet, _ := json.Marshal(map[string]any{"keys": []any{(&testKey{kid: "s", alg: "RS256", priv: small}).jwk(t, true)}})
	tests := []struct {
		name string
		opts *JWKSOptions
	}{
		{name: "nil options", opts: nil},
		{name: "no issuer", opts: &JWKSOptions{JWKSURL: srv.URL, Audience: testAudience}},
		{name: "no audience", opts: &JWKSOptions{Issuer: testIssuer, JWKSURL: srv.URL}},
		{name: "no keys source", opts: &JWKSOptions{Issuer: testIssuer, Audience: testAudience}},
		{name: "both key sources", opts: &JWKSOptions{Issuer: testIssuer, Audience: testAudience, JWKSURL: srv.URL, JWKS: []byte(`{"keys":[]}`)}},
		{name: "plain http off loopback", opts: &JWKSOptions{Issuer: testIssuer, Audience: testAudience, JWKSURL: "http://idp.example.com/jwks"}},
		{name: "unknown default kind", opts: &JWKSOptions{Issuer: testIssuer, Audience: testAudience, JWKSURL: srv.URL, DefaultKind: "robot"}},
		{name: "empty key set", opts: &JWKSOptions{Issuer: testIssuer, Audience: testAudience, JWKSURL: empty.URL}},
		{name: "unreachable", opts: &JWKSOptions{Issuer: testIssuer, Audience: testAudience, JWKSURL: "http://127.0.0.1:1/jwks"}},
		{name: "RSA key under 2048 bits", opts: &JWKSOptions{Issuer: testIssuer, Audience: testAudience, JWKS: smallSet}},
		{name: "not JSON", opts: &JWKSOptions{Issuer: testIssuer, Audience: testAudience, JWKS: []byte("nope")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := NewJWKSVerifier(context.Background(), tt.opts); err == nil {
				t.Fatal("NewJWKSVerifier succeeded, want an error")
			} else {
				t.Log(err)
			}
		})
	}
}

func TestJWKSVerifierDropsWithdrawnKeys(t *testing.T) {
	t.Parallel()
	k := newRSAKey(t, "k", "RS256")
	srv := newJWKSServer(t, k.jwk(t, true))
	v, err := NewJWKSVerifier(context.Background(), &JWKSOptions{
		Issuer:          testIssuer,
		JWKSURL:         srv.URL,
		Audience:        testAudience,
		RefreshInterval: time.Nanosecond,
		MaxKeyAge:       time.Nanosecond,
	})
	if err != nil {
		t.Fatalf("NewJWKSVerifier: %v", err)
	}
	tok := k.sign(t, goodClaims(nil))
	if _, _, err := v(context.Background(), tok); err != nil {
		t.Fatalf("before withdrawal: %v", err)
	}
	srv.setKeys(newECKey(t, "replacement").jwk(t, true))
	if _, _, err := v(context.Background(), tok); !errors.Is(err, ErrInvalidToken) {
		t.Fatalf("after withdrawal: err = %v, want ErrInvalidToken", err)
	}
}

// gatedJWKSServer serves a key set, holding every fetch after the first
// until release is closed.
type gatedJWKSServer struct {
	*jwksServer
	started chan struct{} // receives once per held fetch
	release chan struct{}
}

func newGatedJWKSServer(t *testing.T, keys ...map[string]any) *gatedJWKSServer {
	t.Helper()
	g := &gatedJWKSServer{jwksServer: &jwksServer{keys: keys}, started: make(chan struct{}, 64), release: make(chan struct{})}
	g.jwksServer.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if g.fetches.Add(1) > 1 {
			g.started <- struct{}{}
			<-g.release
		}
		g.mu.Lock()
		defer g.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"keys": g.keys})
	}))
	t.Cleanup(g.Close)
	t.Cleanup(func() {
		select {
		case <-g.release:
		default:
			close(g.release)
		}
	})
	return g
}

// A caller that gives up while the key set is being fetched again must not
// take the fetch with it: the rotated key is usable as soon as the issuer
// answers, not a RefreshInterval later.
func TestJWKSRefreshSurvivesACallerThatGivesUp(t *testing.T) {
	t.Parallel()
	old := newRSAKey(t, "old", "RS256")
	rotated := newECKey(t, "new")
	srv := newGatedJWKSServer(t, old.jwk(t, true))
	v, err := NewJWKSVerifier(context.Background(), &JWKSOptions{
		Issuer: testIssuer, JWKSURL: srv.URL, Audience: testAudience, RefreshInterval: time.Hour,
	})
	if err != nil {
		t.Fatalf("NewJWKSVerifier: %v", err)
	}
	srv.setKeys(old.jwk(t, true), rotated.jwk(t, true))
	tok := rotated.sign(t, goodClaims(nil))

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, _, err := v(ctx, tok)
		done <- err
	}()
	<-srv.started // the refetch reached the issuer
	cancel()      // and the client hung up
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("verify succeeded before the issuer answered")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a caller whose context ended still waits for the key set")
	}
	close(srv.release)

	deadline := time.Now().Add(time.Minute)
	for {
		_, _, err := v(context.Background(), tok)
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("rotated key still refused after the issuer answered: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if n := srv.fetches.Load(); n != 2 {
		t.Errorf("fetches = %d, want 2", n)
	}
}

// The key set is fetched over https only: a redirect to plain http would
// let anyone on the path hand the verifier their own keys.
func TestJWKSRefusesDowngradingRedirect(t *testing.T) {
	t.Parallel()
	k := newRSAKey(t, "k", "RS256")
	plain := newJWKSServer(t, k.jwk(t, true))
	var tlsSrv *httptest.Server
	tlsSrv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/downgrade":
			http.Redirect(w, r, plain.URL+"/jwks", http.StatusFound)
		case "/moved":
			http.Redirect(w, r, tlsSrv.URL+"/jwks", http.StatusMovedPermanently)
		default:
			w.Header().Set("Content-Type", "application/json")
			json.NewEncoder(w).Encode(map[string]any{"keys": []any{k.jwk(t, true)}})
		}
	}))
	t.Cleanup(tlsSrv.Close)
	opts := func(path string) *JWKSOptions {
		return &JWKSOptions{Issuer: testIssuer, Audience: testAudience, JWKSURL: tlsSrv.URL + path, HTTPClient: tlsSrv.Client()}
	}
	if _, err := NewJWKSVerifier(context.Background(), opts("/downgrade")); err == nil {
		t.Fatal("NewJWKSVerifier followed a redirect from https to http")
	} else {
		t.Log(err)
	}
	if n := plain.fetches.Load(); n != 0 {
		t.Errorf("the http server was fetched %d times", n)
	}
	if _, err := NewJWKSVerifier(context.Background(), opts("/moved")); err != nil {
		t.Fatalf("an https to https redirect: %v", err)
	}
}

// Callers that all need the rotated key share one fetch.
func TestJWKSRefreshIsSingleFlight(t *testing.T) {
	t.Parallel()
	old := newRSAKey(t, "old", "RS256")
	rotated := newECKey(t, "new")
	srv := newGatedJWKSServer(t, old.jwk(t, true))
	v, err := NewJWKSVerifier(context.Background(), &JWKSOptions{
		Issuer: testIssuer, JWKSURL: srv.URL, Audience: testAudience, RefreshInterval: time.Nanosecond,
	})
	if err != nil {
		t.Fatalf("NewJWKSVerifier: %v", err)
	}
	srv.setKeys(old.jwk(t, true), rotated.jwk(t, true))
	tok := rotated.sign(t, goodClaims(nil))
	const n = 16
	errs := make(chan error, n)
	for range n {
		go func() {
			_, _, err := v(context.Background(), tok)
			errs <- err
		}()
	}
	<-srv.started
	time.Sleep(50 * time.Millisecond) // let every caller reach the shared fetch
	close(srv.release)
	for range n {
		if err := <-errs; err != nil {
			t.Errorf("verify: %v", err)
		}
	}
	if got := srv.fetches.Load(); got != 2 {
		t.Errorf("fetches = %d, want 2 (the first and one shared refresh)", got)
	}
}

// An issuer that never answers costs a caller FetchTimeout, not forever,
// even with an HTTP client that has no timeout of its own.
func TestJWKSRefreshHasItsOwnTimeout(t *testing.T) {
	t.Parallel()
	old := newRSAKey(t, "old", "RS256")
	rotated := newECKey(t, "new")
	srv := newGatedJWKSServer(t, old.jwk(t, true))
	v, err := NewJWKSVerifier(context.Background(), &JWKSOptions{
		Issuer: testIssuer, JWKSURL: srv.URL, Audience: testAudience,
		HTTPClient: &http.Client{}, FetchTimeout: 200 * time.Millisecond,
	})
	if err != nil {
		t.Fatalf("NewJWKSVerifier: %v", err)
	}
	start := time.Now()
	_, _, err = v(context.Background(), rotated.sign(t, goodClaims(nil)))
	if !errors.Is(err, ErrInvalidToken) {
		t.Fatalf("verify = %v, want ErrInvalidToken", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("verify took %v with a 200ms FetchTimeout", d)
	}
	t.Log(err)
}

// A person named by the email claim is accepted only when the issuer says
// it verified that email, unless TrustUnverifiedEmail: an issuer that lets
// users set their own email would otherwise let one become another.
func TestJWKSVerifierEmailNeedsVerification(t *testing.T) {
	t.Parallel()
	k := newECKey(t, "only")
	set, err := json.Marshal(map[string]any{"keys": []any{k.jwk(t, false)}})
	if err != nil {
		t.Fatal(err)
	}
	verifier := func(trust bool, personClaim string) Verifier {
		v, err := NewJWKSVerifier(context.Background(), &JWKSOptions{
			Issuer: testIssuer, JWKS: set, Audience: testAudience,
			PersonIDClaim: personClaim, TrustUnverifiedEmail: trust,
		})
		if err != nil {
			t.Fatalf("NewJWKSVerifier: %v", err)
		}
		return v
	}
	strict, trusting, bySub := verifier(false, "email"), verifier(true, "email"), verifier(false, "sub")
	tests := []struct {
		name     string
		verified any // the email_verified claim; nil leaves it out
		kind     string
		v        Verifier
		ok       bool
	}{
		{name: "verified", verified: true, kind: "person", v: strict, ok: true},
		{name: "verified as a string", verified: "true", kind: "person", v: strict, ok: true},
		{name: "unverified", verified: false, kind: "person", v: strict},
		{name: "no email_verified", kind: "person", v: strict},
		{name: "email_verified not a boolean", verified: 1, kind: "person", v: strict},
		{name: "unverified but trusted", verified: false, kind: "person", v: trusting, ok: true},
		{name: "absent but trusted", kind: "person", v: trusting, ok: true},
		{name: "an agent is named by sub", kind: "agent", v: strict, ok: true},
		{name: "a person named by sub", kind: "person", v: bySub, ok: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := map[string]any{
				"iss": testIssuer, "aud": testAudience, "exp": time.Now().Add(time.Minute).Unix(),
				"sub": "ana@example.com", "email": "ana@example.com", "baton_kind": tt.kind,
			}
			if tt.verified != nil {
				c["email_verified"] = tt.verified
			}
			id, _, err := tt.v(context.Background(), k.signWith(t, "ES256", "", c))
			if tt.ok {
				if err != nil || id.ID != "ana@example.com" {
					t.Fatalf("verify = %+v, %v; want ana@example.com", id, err)
				}
				return
			}
			if !errors.Is(err, ErrInvalidToken) || !strings.Contains(err.Error(), "email_verified") {
				t.Fatalf("verify = %+v, %v; want ErrInvalidToken naming email_verified", id, err)
			}
		})
	}
}
