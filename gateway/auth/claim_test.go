package auth

import (
	"errors"
	"testing"
)

func newTestClaimTokens(t *testing.T, master string) *ClaimTokens {
	t.Helper()
	c, err := NewClaimTokens(DeriveKey([]byte(master), PurposeClaimTokens))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestClaimTokensRoundTrip(t *testing.T) {
	t.Parallel()
	c := newTestClaimTokens(t, "master")
	tests := []struct {
		name                  string
		org, run, step, lease string
	}{
		{name: "plain", org: "o_1", run: "r_01J", step: "collect-documents", lease: "l_7"},
		{name: "empty values", org: "", run: "", step: "", lease: ""},
		{name: "separators inside values", org: "o.1", run: "r\x00x", step: "s|t", lease: "é"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tok := c.Sign(tt.org, tt.run, tt.step, tt.lease)
			org, run, step, lease, err := c.Verify(tok)
			if err != nil {
				t.Fatalf("Verify: %v", err)
			}
			if org != tt.org || run != tt.run || step != tt.step || lease != tt.lease {
				t.Errorf("Verify = %q %q %q %q, want %q %q %q %q", org, run, step, lease, tt.org, tt.run, tt.step, tt.lease)
			}
		})
	}
}

func TestClaimTokensRefuse(t *testing.T) {
	t.Parallel()
	c := newTestClaimTokens(t, "master")
	other := newTestClaimTokens(t, "other master")
	tok := c.Sign("o_1", "r_1", "s_1", "l_1")
	tests := []struct {
		name  string
		token string
	}{
		{name: "empty", token: ""},
		{name: "garbage", token: "not a token"},
		{name: "other key", token: other.Sign("o_1", "r_1", "s_1", "l_1")},
		{name: "truncated", token: tok[:len(tok)-1]},
		{name: "extended", token: tok + "A"},
		{name: "padded", token: tok + "="},
		{name: "MAC only", token: tok[len(tok)-43:]},
	}
	// Every single changed character.
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	for i := range tok {
		for _, ch := range []byte{alphabet[0], alphabet[63]} {
			if tok[i] == ch {
				ch = alphabet[1]
			}
			b := []byte(tok)
			b[i] = ch
			tests = append(tests, struct {
				name  string
				token string
			}{name: "changed byte", token: string(b)})
		}
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if org, run, step, lease, err := c.Verify(tt.token); !errors.Is(err, ErrBadClaimToken) {
				t.Fatalf("Verify(%q) = %q %q %q %q, %v; want ErrBadClaimToken", tt.token, org, run, step, lease, err)
			}
		})
	}
}

func TestClaimTokensBindEveryValue(t *testing.T) {
	t.Parallel()
	c := newTestClaimTokens(t, "master")
	base := c.Sign("o", "r", "s", "l1")
	tests := []struct {
		name                  string
		org, run, step, lease string
	}{
		{name: "other lease", org: "o", run: "r", step: "s", lease: "l2"},
		{name: "other step", org: "o", run: "r", step: "s2", lease: "l1"},
		{name: "other run", org: "o", run: "r2", step: "s", lease: "l1"},
		{name: "other org", org: "o2", run: "r", step: "s", lease: "l1"},
		{name: "shifted boundary", org: "o", run: "rs", step: "", lease: "l1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tok := c.Sign(tt.org, tt.run, tt.step, tt.lease); tok == base {
				t.Errorf("Sign gives the same token as for o/r/s/l1: %q", tok)
			}
		})
	}
}

func TestNewClaimTokensShortKey(t *testing.T) {
	t.Parallel()
	if _, err := NewClaimTokens([]byte("short")); err == nil {
		t.Fatal("NewClaimTokens accepted a 5-byte key")
	}
}
