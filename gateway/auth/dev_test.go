package auth

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"
)

func newTestDevIssuer(t *testing.T) *DevIssuer {
	t.Helper()
	d, err := LoadOrCreateDevKey(t.TempDir())
	if err != nil {
		t.Fatalf("LoadOrCreateDevKey: %v", err)
	}
	return d
}

func TestDevIssuerRoundTrip(t *testing.T) {
	t.Parallel()
	d := newTestDevIssuer(t)
	tests := []struct {
		name string
		in   Identity
		want Identity
	}{
		{
			name: "agent",
			in:   Identity{ID: "a_screener", Kind: KindAgent},
			want: Identity{ID: "a_screener", Kind: KindAgent},
		},
		{
			name: "person with groups is lowercased",
			in:   Identity{ID: "Mira@Example.com", Kind: KindPerson, Groups: []string{"g_finance", "g_legal"}},
			want: Identity{ID: "mira@example.com", Kind: KindPerson, Groups: []string{"g_finance", "g_legal"}},
		},
		{
			name: "operator",
			in:   Identity{ID: "u_ops", Kind: KindOperator},
			want: Identity{ID: "u_ops", Kind: KindOperator},
		},
		{
			name: "agent of another organization",
			in:   Identity{ID: "a_screener", Kind: KindAgent, Org: "o_acme"},
			want: Identity{ID: "a_screener", Kind: KindAgent, Org: "o_acme"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := time.Now()
			tok, err := d.Issue(tt.in, time.Hour)
			if err != nil {
				t.Fatalf("Issue: %v", err)
			}
			got, exp, err := d.Verify(context.Background(), tok)
			if err != nil {
				t.Fatalf("Verify: %v", err)
			}
			if !reflect.DeepEqual(*got, tt.want) {
				t.Errorf("identity = %+v, want %+v", *got, tt.want)
			}
			if exp.Before(before.Add(time.Hour-time.Second)) || exp.After(time.Now().Add(time.Hour)) {
				t.Errorf("expiry = %v, want about an hour from now", exp)
			}
		})
	}
}

func TestDevIssuerIssueRefuses(t *testing.T) {
	t.Parallel()
	d := newTestDevIssuer(t)
	tests := []struct {
		name string
		id   Identity
		ttl  time.Duration
	}{
		{name: "empty id", id: Identity{Kind: KindAgent}, ttl: time.Hour},
		{name: "unknown kind", id: Identity{ID: "x", Kind: "robot"}, ttl: time.Hour},
		{name: "person without email", id: Identity{ID: "mira", Kind: KindPerson}, ttl: time.Hour},
		{name: "person with display name", id: Identity{ID: "Mira <mira@example.com>", Kind: KindPerson}, ttl: time.Hour},
		{name: "empty group", id: Identity{ID: "a", Kind: KindAgent, Groups: []string{""}}, ttl: time.Hour},
		{name: "zero ttl", id: Identity{ID: "a", Kind: KindAgent}, ttl: 0},
		{name: "organization with a slash", id: Identity{ID: "a", Kind: KindAgent, Org: "o/acme"}, ttl: time.Hour},
		{name: "organization starting with a dot", id: Identity{ID: "a", Kind: KindAgent, Org: ".acme"}, ttl: time.Hour},
		{name: "organization too long", id: Identity{ID: "a", Kind: KindAgent, Org: strings.Repeat("o", MaxOrgLen+1)}, ttl: time.Hour},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tok, err := d.Issue(tt.id, tt.ttl); err == nil {
				t.Fatalf("Issue(%+v, %v) = %q, want an error", tt.id, tt.ttl, tok)
			}
		})
	}
}

func TestDevIssuerVerifyRefuses(t *testing.T) {
	t.Parallel()
	d := newTestDevIssuer(t)
	other := newTestDevIssuer(t)
	agent := Identity{ID: "a_screener", Kind: KindAgent}
	good, err := d.Issue(agent, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	past := *d
	past.now = func() time.Time { return time.Now().Add(-2 * time.Hour) }
	expired, err := past.Issue(agent, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	fromOther, err := other.Issue(agent, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	parts := strings.Split(good, ".")
	// signHS256 signs arbitrary header and claims with d's key.
	signHS256 := func(header, claims string) string {
		in := b64.EncodeToString([]byte(header)) + "." + b64.EncodeToString([]byte(claims))
		return in + "." + b64.EncodeToString(d.sign(in))
	}
	exp := time.Now().Add(time.Hour).Unix()
	claimsWith := func(extra string) string {
		return `{"sub":"a","kind":"agent","iat":1,"exp":` + itoa(exp) + extra + `}`
	}
	tests := []struct {
		name  string
		token string
	}{
		{name: "empty", token: ""},
		{name: "garbage", token: "not.a.token"},
		{name: "expired", token: expired},
		{name: "wrong key", token: fromOther},
		{
			name:  "tampered payload",
			token: parts[0] + "." + b64.EncodeToString([]byte(`{"sub":"u_ops","kind":"operator","iat":1,"exp":`+itoa(exp)+`,"iss":"baton-dev","aud":"baton"}`)) + "." + parts[2],
		},
		{name: "alg none", token: b64.EncodeToString([]byte(`{"alg":"none"}`)) + "." + parts[1] + "."},
		{name: "alg none with signature", token: b64.EncodeToString([]byte(`{"alg":"none"}`)) + "." + parts[1] + "." + parts[2]},
		{name: "alg RS256", token: b64.EncodeToString([]byte(`{"alg":"RS256"}`)) + "." + parts[1] + "." + parts[2]},
		{name: "crit header", token: signHS256(`{"alg":"HS256","crit":["exp"]}`, claimsWith(`,"iss":"baton-dev","aud":"baton"`))},
		{name: "wrong issuer", token: signHS256(`{"alg":"HS256"}`, claimsWith(`,"iss":"someone","aud":"baton"`))},
		{name: "wrong audience", token: signHS256(`{"alg":"HS256"}`, claimsWith(`,"iss":"baton-dev","aud":"other"`))},
		{name: "no exp", token: signHS256(`{"alg":"HS256"}`, `{"sub":"a","kind":"agent","iss":"baton-dev","aud":"baton"}`)},
		{name: "bad kind", token: signHS256(`{"alg":"HS256"}`, `{"sub":"a","kind":"robot","exp":`+itoa(exp)+`,"iss":"baton-dev","aud":"baton"}`)},
		{name: "person not email", token: signHS256(`{"alg":"HS256"}`, `{"sub":"mira","kind":"person","exp":`+itoa(exp)+`,"iss":"baton-dev","aud":"baton"}`)},
		{name: "not yet valid", token: signHS256(`{"alg":"HS256"}`, claimsWith(`,"nbf":`+itoa(exp)+`,"iss":"baton-dev","aud":"baton"`))},
		{name: "padded base64", token: parts[0] + "=." + parts[1] + "." + parts[2]},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id, _, err := d.Verify(context.Background(), tt.token)
			if !errors.Is(err, ErrInvalidToken) {
				t.Fatalf("Verify = %+v, %v; want ErrInvalidToken", id, err)
			}
			t.Log(err)
		})
	}
	// The signing helper itself makes tokens that verify.
	if _, _, err := d.Verify(context.Background(), signHS256(`{"alg":"HS256"}`, claimsWith(`,"iss":"baton-dev","aud":["x","baton"]`))); err != nil {
		t.Fatalf("control token: %v", err)
	}
}

func TestLoadOrCreateDevKey(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "data")
	d1, err := LoadOrCreateDevKey(dir)
	if err != nil {
		t.Fatalf("first LoadOrCreateDevKey: %v", err)
	}
	path := filepath.Join(dir, DevKeyFile)
	st, err := os.Stat(path)
	if err != nil {
		t.Fatalf("key file: %v", err)
	}
	if st.Mode().Perm() != 0o600 || st.Size() != KeySize {
		t.Errorf("key file mode %v size %d, want 0600 and %d bytes", st.Mode().Perm(), st.Size(), KeySize)
	}
	before, _ := os.ReadFile(path)

	d2, err := LoadOrCreateDevKey(dir)
	if err != nil {
		t.Fatalf("second LoadOrCreateDevKey: %v", err)
	}
	after, _ := os.ReadFile(path)
	if !bytes.Equal(before, after) {
		t.Error("second call rewrote the key file")
	}
	tok, err := d1.Issue(Identity{ID: "a", Kind: KindAgent}, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := d2.Verify(context.Background(), tok); err != nil {
		t.Errorf("token from the first issuer does not verify with the second: %v", err)
	}
}

// LoadDevKey reads the key LoadOrCreateDevKey made and never makes one.
func TestLoadDevKey(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if _, err := LoadDevKey(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("LoadDevKey of an empty folder: err = %v, want fs.ErrNotExist", err)
	}
	if _, err := os.Stat(filepath.Join(dir, DevKeyFile)); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("LoadDevKey created a key file (stat: %v)", err)
	}
	made, err := LoadOrCreateDevKey(dir)
	if err != nil {
		t.Fatal(err)
	}
	loaded, err := LoadDevKey(dir)
	if err != nil {
		t.Fatalf("LoadDevKey: %v", err)
	}
	tok, err := made.Issue(Identity{ID: "a", Kind: KindAgent}, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := loaded.Verify(context.Background(), tok); err != nil {
		t.Errorf("a token of the made key does not verify with the loaded one: %v", err)
	}
}

func TestLoadOrCreateDevKeyRefuses(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		setup func(t *testing.T, dir string)
	}{
		{
			name: "short key file",
			setup: func(t *testing.T, dir string) {
				writeFile(t, filepath.Join(dir, DevKeyFile), []byte("short"), 0o600)
			},
		},
		{
			name: "key file readable by others",
			setup: func(t *testing.T, dir string) {
				writeFile(t, filepath.Join(dir, DevKeyFile), make([]byte, KeySize), 0o644)
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			tt.setup(t, dir)
			if _, err := LoadOrCreateDevKey(dir); err == nil {
				t.Fatal("LoadOrCreateDevKey succeeded, want an error")
			}
		})
	}
}

func writeFile(t *testing.T, path string, data []byte, mode os.FileMode) {
	t.Helper()
	if err := os.WriteFile(path, data, mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// A token made for one resource passes only that resource's verifier; the
// verifier of a resource still accepts the data folder's plain dev tokens.
func TestDevIssuerResourceAudience(t *testing.T) {
	t.Parallel()
	d := newTestDevIssuer(t)
	const mine, other = "http://127.0.0.1:8080/mcp", "http://127.0.0.1:9090/mcp"
	agent := Identity{ID: "a_screener", Kind: KindAgent}
	forMine, err := d.IssueFor(agent, mine, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	forOther, err := d.IssueFor(agent, other, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	plain, err := d.Issue(agent, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	v := d.VerifierFor(mine)
	ctx := context.Background()
	for name, tok := range map[string]string{"for this resource": forMine, "plain dev token": plain} {
		if id, _, err := v(ctx, tok); err != nil || !reflect.DeepEqual(*id, agent) {
			t.Errorf("%s: %+v, %v; want it accepted", name, id, err)
		}
	}
	if _, _, err := v(ctx, forOther); !errors.Is(err, ErrInvalidToken) || !strings.Contains(err.Error(), mine) {
		t.Errorf("token for another resource: %v; want ErrInvalidToken naming %s", err, mine)
	}
	if _, _, err := d.Verify(ctx, forMine); !errors.Is(err, ErrInvalidToken) {
		t.Errorf("Verify accepted a token made for one resource: %v", err)
	}
	if _, err := d.IssueFor(agent, "", time.Hour); err == nil {
		t.Error("IssueFor with no audience succeeded")
	}
}

// A person is an email address by the interpreter's one rule: a domain of
// at least two labels, so a@localhost is not a person.
func TestPersonIdentityIsTheInterpretersEmail(t *testing.T) {
	for id, ok := range map[string]bool{"mira@example.com": true, "a@localhost": false, "Mira <mira@example.com>": false} {
		_, err := Identity{ID: id, Kind: KindPerson}.Normalize()
		if (err == nil) != ok {
			t.Errorf("person %q: Normalize error %v, want ok %v", id, err, ok)
		}
	}
}
