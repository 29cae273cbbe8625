package auth

import (
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"
)

func TestFileURLs(t *testing.T) {
	t.Parallel()
	key := DeriveKey([]byte("master"), PurposeFileURLs)
	f, err := NewFileURLs(key, "https://baton.example.com/", 10*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	other, err := NewFileURLs(DeriveKey([]byte("other"), PurposeFileURLs), "https://baton.example.com", 10*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Unix(1_800_000_000, 0)
	link := f.URL("o_1", "f_abc", now)
	if want := "https://baton.example.com/files/f_abc?exp=1800000600&org=o_1&sig="; !strings.HasPrefix(link, want) {
		t.Fatalf("URL = %q, want prefix %q", link, want)
	}
	exp, sig := queryOf(t, link)
	_, otherSig := queryOf(t, other.URL("o_1", "f_abc", now))

	tests := []struct {
		name              string
		org, file, e, sig string
		at                time.Time
		want              error
	}{
		{name: "valid", org: "o_1", file: "f_abc", e: exp, sig: sig, at: now},
		{name: "valid at expiry", org: "o_1", file: "f_abc", e: exp, sig: sig, at: now.Add(10 * time.Minute)},
		{name: "expired", org: "o_1", file: "f_abc", e: exp, sig: sig, at: now.Add(10*time.Minute + time.Second), want: ErrFileURLExpired},
		{name: "forged signature", org: "o_1", file: "f_abc", e: exp, sig: otherSig, at: now, want: ErrBadFileURL},
		{name: "garbage signature", org: "o_1", file: "f_abc", e: exp, sig: "!!", at: now, want: ErrBadFileURL},
		{name: "other file", org: "o_1", file: "f_abd", e: exp, sig: sig, at: now, want: ErrBadFileURL},
		{name: "other org", org: "o_2", file: "f_abc", e: exp, sig: sig, at: now, want: ErrBadFileURL},
		{name: "extended expiry", org: "o_1", file: "f_abc", e: "1900000000", sig: sig, at: now, want: ErrBadFileURL},
		{name: "expiry with plus sign", org: "o_1", file: "f_abc", e: "+" + exp, sig: sig, at: now, want: ErrBadFileURL},
		{name: "expiry not a number", org: "o_1", file: "f_abc", e: "soon", sig: sig, at: now, want: ErrBadFileURL},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := f.Check(tt.org, tt.file, tt.e, tt.sig, tt.at)
			if tt.want == nil {
				if err != nil {
					t.Fatalf("Check: %v", err)
				}
				return
			}
			if !errors.Is(err, tt.want) {
				t.Fatalf("Check = %v, want %v", err, tt.want)
			}
		})
	}
	if !errors.Is(ErrFileURLExpired, ErrBadFileURL) {
		t.Error("ErrFileURLExpired does not wrap ErrBadFileURL")
	}
}

func TestFileURLsEscapesID(t *testing.T) {
	t.Parallel()
	f, err := NewFileURLs(DeriveKey([]byte("m"), PurposeFileURLs), "http://127.0.0.1:8080", 0)
	if err != nil {
		t.Fatal(err)
	}
	link := f.URL("o", "a/b c", time.Unix(0, 0))
	u, err := url.Parse(link)
	if err != nil {
		t.Fatal(err)
	}
	if u.Path != "/files/a/b c" || u.EscapedPath() != "/files/a%2Fb%20c" {
		t.Errorf("URL = %q", link)
	}
	if got := u.Query().Get("exp"); got != "900" {
		t.Errorf("exp = %q, want 900 (the default lifetime)", got)
	}
}

func TestNewFileURLsRefuses(t *testing.T) {
	t.Parallel()
	key := DeriveKey([]byte("m"), PurposeFileURLs)
	tests := []struct {
		name string
		key  []byte
		base string
		ttl  time.Duration
	}{
		{name: "short key", key: []byte("k"), base: "https://x.example.com"},
		{name: "relative base", key: key, base: "/files"},
		{name: "base with query", key: key, base: "https://x.example.com/?a=b"},
		{name: "negative ttl", key: key, base: "https://x.example.com", ttl: -time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := NewFileURLs(tt.key, tt.base, tt.ttl); err == nil {
				t.Fatal("NewFileURLs succeeded, want an error")
			}
		})
	}
}

func queryOf(t *testing.T, link string) (exp, sig string) {
	t.Helper()
	u, err := url.Parse(link)
	if err != nil {
		t.Fatal(err)
	}
	return u.Query().Get("exp"), u.Query().Get("sig")
}
