package main

import (
	"context"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"flag"
	"io"
	"log/slog"
	"math/big"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/baton-run/baton/gateway/auth"
)

// An issuer whose sub is opaque names people by another claim:
// --person-id-claim email makes the gateway read a person's email there,
// while agents keep their sub.
func TestGatewayPersonIDClaim(t *testing.T) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	b64 := base64.RawURLEncoding.EncodeToString
	jwks, _ := json.Marshal(map[string]any{"keys": []any{map[string]any{
		"kty": "RSA", "kid": "k1", "alg": "RS256", "use": "sig",
		"n": b64(key.N.Bytes()), "e": b64(big.NewInt(int64(key.E)).Bytes()),
	}}})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write(jwks)
	}))
	defer srv.Close()
	sign := func(claims map[string]any) string {
		h, _ := json.Marshal(map[string]any{"alg": "RS256", "kid": "k1", "typ": "JWT"})
		c, _ := json.Marshal(claims)
		in := b64(h) + "." + b64(c)
		sum := sha256.Sum256([]byte(in))
		sig, err := rsa.SignPKCS1v15(rand.Reader, key, crypto.SHA256, sum[:])
		if err != nil {
			t.Fatal(err)
		}
		return in + "." + b64(sig)
	}
	const iss, aud = "https://idp.example.com/", "https://baton.example.com/mcp"
	claims := func(sub, kind string) map[string]any {
		now := time.Now().Unix()
		return map[string]any{"iss": iss, "aud": aud, "sub": sub, "email": "Ana@Example.com", "email_verified": true,
			"baton_kind": kind, "groups": []string{"finance"}, "iat": now, "exp": now + 300}
	}

	verify := func(t *testing.T, args ...string) auth.Verifier {
		t.Helper()
		var c serveConfig
		fl := flag.NewFlagSet("gateway", flag.ContinueOnError)
		c.flags(fl, true, false)
		if err := fl.Parse(append([]string{"--jwks-url", srv.URL, "--issuer", iss, "--audience", aud}, args...)); err != nil {
			t.Fatal(err)
		}
		v, err := c.verifier(context.Background(), slog.New(slog.NewTextHandler(io.Discard, nil)))
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	ctx := context.Background()

	v := verify(t, "--person-id-claim", "email")
	id, _, err := v(ctx, sign(claims("00u1a2b3c4", "person")))
	if err != nil || id.Kind != auth.KindPerson || id.ID != "ana@example.com" {
		t.Fatalf("person with --person-id-claim email: %+v, %v; want ana@example.com", id, err)
	}
	id, _, err = v(ctx, sign(claims("a_bot", "agent")))
	if err != nil || id.Kind != auth.KindAgent || id.ID != "a_bot" {
		t.Fatalf("agent with --person-id-claim email: %+v, %v; want a_bot from sub", id, err)
	}

	// An email the issuer did not verify names nobody, unless the operator
	// trusts the issuer with --trust-unverified-email.
	unverified := claims("00u1a2b3c4", "person")
	unverified["email_verified"] = false
	if id, _, err := v(ctx, sign(unverified)); err == nil {
		t.Fatalf("an unverified email signed a person in as %+v", id)
	}
	id, _, err = verify(t, "--person-id-claim", "email", "--trust-unverified-email")(ctx, sign(unverified))
	if err != nil || id.ID != "ana@example.com" {
		t.Fatalf("unverified email with --trust-unverified-email: %+v, %v; want ana@example.com", id, err)
	}

	// Without the flag a person's id is sub, which must be an email.
	if id, _, err := verify(t)(ctx, sign(claims("00u1a2b3c4", "person"))); err == nil {
		t.Fatalf("an opaque sub signed a person in as %+v", id)
	}
}
