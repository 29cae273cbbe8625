package oauth

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func newTestState(t *testing.T, file string) *state {
	t.Helper()
	st, err := loadState(file, slog.Default())
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// Registering past maxClients forgets the least recently used client
// (with its refresh tokens) instead of locking every new client out.
func TestClientsPastTheCapEvictTheLeastRecentlyUsed(t *testing.T) {
	t.Parallel()
	st := newTestState(t, "")
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range maxClients {
		if e := st.addClient(&client{ID: fmt.Sprintf("c%04d", i), IssuedAt: t0.Add(time.Duration(i) * time.Second).Unix()}, t0); e != nil {
			t.Fatalf("client %d: %v", i, e)
		}
	}
	// c0000, the oldest, was used two days later: c0001 is now the least
	// recently used.
	later := t0.Add(48 * time.Hour)
	st.addGrant("r-used", &grant{ClientID: "c0000", Family: "f0", Expires: later.Add(time.Hour)}, later)
	st.addGrant("r-idle", &grant{ClientID: "c0001", Family: "f1", Expires: later.Add(time.Hour)}, t0)
	if e := st.addClient(&client{ID: "new", IssuedAt: later.Unix()}, later); e != nil {
		t.Fatalf("registration past the cap: %v; want the least recently used client evicted", e)
	}
	if len(st.saved.Clients) != maxClients || st.client("new") == nil || st.client("c0000") == nil {
		t.Fatalf("%d clients, new %v, c0000 %v; want %d with both", len(st.saved.Clients), st.client("new"), st.client("c0000"), maxClients)
	}
	if st.client("c0001") != nil || st.saved.Refresh["r-idle"] != nil {
		t.Fatal("the least recently used client, or its refresh token, was kept")
	}
	if st.saved.Refresh["r-used"] == nil {
		t.Fatal("a kept client lost its refresh token")
	}
}

// A client unused for 30 days is forgotten with its refresh tokens; a use
// (an authorization code, a token) keeps it.
func TestUnusedClientsExpire(t *testing.T) {
	t.Parallel()
	st := newTestState(t, "")
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	st.addClient(&client{ID: "idle", IssuedAt: t0.Unix()}, t0)
	st.addClient(&client{ID: "busy", IssuedAt: t0.Unix()}, t0)
	st.addGrant("r-idle", &grant{ClientID: "idle", Family: "f1", Expires: t0.Add(60 * 24 * time.Hour)}, t0)
	day20 := t0.Add(20 * 24 * time.Hour)
	if err := st.addCode("code", &code{clientID: "busy", expires: day20.Add(time.Minute)}, day20); err != nil {
		t.Fatal(err)
	}
	day31 := t0.Add(31 * 24 * time.Hour)
	st.addClient(&client{ID: "other", IssuedAt: day31.Unix()}, day31)
	if st.client("idle") != nil || st.saved.Refresh["r-idle"] != nil {
		t.Fatal("a client unused for 31 days, or its refresh token, is still there")
	}
	if st.client("busy") == nil {
		t.Fatal("a client used 11 days ago was forgotten")
	}
}

// Refresh tokens, spent refresh tokens and spent codes are dropped when
// they expire and kept within their bounds, the first to expire going
// first.
func TestTokensArePruned(t *testing.T) {
	t.Parallel()
	st := newTestState(t, "")
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	st.addClient(&client{ID: "c", IssuedAt: t0.Unix()}, t0)
	for i := range maxRefresh + 5 {
		st.addGrant(fmt.Sprintf("r%05d", i), &grant{ClientID: "c", Family: "f", Expires: t0.Add(time.Hour + time.Duration(i)*time.Millisecond)}, t0)
	}
	if n := len(st.saved.Refresh); n != maxRefresh || st.saved.Refresh["r00000"] != nil || st.saved.Refresh[fmt.Sprintf("r%05d", maxRefresh+4)] == nil {
		t.Fatalf("%d refresh tokens; want %d, the first to expire dropped", n, maxRefresh)
	}
	st.mu.Lock()
	for i := range maxSpent + 5 {
		st.saved.Spent[fmt.Sprintf("s%05d", i)] = spent{Family: "f", Expires: t0.Add(time.Hour + time.Duration(i)*time.Millisecond)}
	}
	st.save(t0)
	st.mu.Unlock()
	if n := len(st.saved.Spent); n != maxSpent || st.saved.Spent["s00000"].Family != "" {
		t.Fatalf("%d spent refresh tokens; want %d, the first to expire dropped", n, maxSpent)
	}
	for i := range maxCodes + 5 {
		h := fmt.Sprintf("k%05d", i)
		if err := st.addCode(h, &code{clientID: "c", expires: t0.Add(time.Minute)}, t0); err != nil {
			t.Fatal(err)
		}
		if _, e := st.redeemCode(h, t0); e != nil {
			t.Fatal(e)
		}
	}
	if n := len(st.redeemed); n > maxCodes {
		t.Fatalf("%d spent codes kept; want at most %d", n, maxCodes)
	}
	// Two hours on, everything issued above has expired.
	st.addClient(&client{ID: "d", IssuedAt: t0.Unix()}, t0.Add(2*time.Hour))
	if err := st.addCode("k-last", &code{clientID: "c", expires: t0.Add(3 * time.Hour)}, t0.Add(2*time.Hour)); err != nil {
		t.Fatal(err)
	}
	if len(st.saved.Refresh) != 0 || len(st.redeemed) != 0 {
		t.Fatalf("after expiry %d refresh tokens, %d spent codes are left", len(st.saved.Refresh), len(st.redeemed))
	}
	if n := len(st.saved.Spent); n != 0 {
		t.Fatalf("after expiry %d spent refresh tokens are left", n)
	}
}

// The state file is written when what it holds changes, not on every
// call: a revocation that revokes nothing and repeated uses of a client
// within a day leave it as it is.
func TestStateFileIsRewrittenOnlyOnChange(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "oauth-state.json")
	st := newTestState(t, file)
	t0 := time.Now()
	st.addClient(&client{ID: "c", IssuedAt: t0.Unix()}, t0)
	stat := func() os.FileInfo {
		fi, err := os.Stat(file)
		if err != nil {
			t.Fatal(err)
		}
		return fi
	}
	before := stat()
	st.mu.Lock()
	st.revokeFamily("no such family", t0)
	st.mu.Unlock()
	for i := range 3 {
		now := t0.Add(time.Duration(i) * time.Hour)
		if err := st.addCode(fmt.Sprintf("k%d", i), &code{clientID: "c", expires: now.Add(time.Minute)}, now); err != nil {
			t.Fatal(err)
		}
	}
	if !os.SameFile(before, stat()) {
		t.Fatal("the state file was rewritten though nothing it holds changed")
	}
	// A use a day later is written down, once.
	day := t0.Add(25 * time.Hour)
	st.addCode("k-day", &code{clientID: "c", expires: day.Add(time.Minute)}, day)
	after := stat()
	if os.SameFile(before, after) {
		t.Fatal("a use a day later was not written down")
	}
	again := newTestState(t, file)
	if c := again.client("c"); c == nil || c.LastUsed != day.Unix() {
		t.Fatalf("after a restart the client is %+v; want last used %d", c, day.Unix())
	}
}
