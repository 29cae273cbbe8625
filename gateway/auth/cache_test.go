package auth

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"
)

// countingVerifier accepts tokens named "good…" for an hour from its
// clock and refuses the rest, counting every call.
type countingVerifier struct {
	calls map[string]int
	now   *time.Time
	exp   time.Duration
}

func (v *countingVerifier) verify(_ context.Context, token string) (*Identity, time.Time, error) {
	v.calls[token]++
	if len(token) < 4 || token[:4] != "good" {
		return nil, time.Time{}, fmt.Errorf("%w: not good", ErrInvalidToken)
	}
	return &Identity{ID: "a_" + token, Kind: KindAgent, Groups: []string{"ops"}}, v.now.Add(v.exp), nil
}

func newCache(t *testing.T, exp, ttl time.Duration, size int) (*verifierCache, *countingVerifier, *time.Time) {
	t.Helper()
	now := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	cv := &countingVerifier{calls: map[string]int{}, now: &now, exp: exp}
	c := &verifierCache{v: cv.verify, ttl: ttl, size: size, now: func() time.Time { return now }, m: map[[32]byte]cachedToken{}}
	return c, cv, &now
}

func TestCachedVerifierChecksATokenOnce(t *testing.T) {
	c, cv, _ := newCache(t, time.Hour, time.Minute, 10)
	ctx := context.Background()
	var exps []time.Time
	for range 5 {
		id, exp, err := c.verify(ctx, "good-1")
		if err != nil || id.ID != "a_good-1" || id.Kind != KindAgent {
			t.Fatalf("verify = %+v, %v", id, err)
		}
		exps = append(exps, exp)
	}
	if cv.calls["good-1"] != 1 {
		t.Errorf("the verifier ran %d times for one token, want 1", cv.calls["good-1"])
	}
	for _, e := range exps[1:] {
		if !e.Equal(exps[0]) {
			t.Errorf("a remembered token's expiry %v differs from the first answer's %v", e, exps[0])
		}
	}
}

func TestCachedVerifierNeverRemembersARefusal(t *testing.T) {
	c, cv, _ := newCache(t, time.Hour, time.Minute, 10)
	for range 3 {
		if _, _, err := c.verify(context.Background(), "bad"); !errors.Is(err, ErrInvalidToken) {
			t.Fatalf("verify(bad) = %v, want ErrInvalidToken", err)
		}
	}
	if cv.calls["bad"] != 3 {
		t.Errorf("a refused token was checked %d times in 3 calls, want 3", cv.calls["bad"])
	}
	if len(c.m) != 0 {
		t.Errorf("the cache holds %d entries after refusals only", len(c.m))
	}
}

func TestCachedVerifierForgetsAfterTTLAndExpiry(t *testing.T) {
	// A long-lived token is checked again once the TTL passes.
	c, cv, now := newCache(t, time.Hour, time.Minute, 10)
	ctx := context.Background()
	c.verify(ctx, "good-long")
	*now = now.Add(59 * time.Second)
	c.verify(ctx, "good-long")
	if cv.calls["good-long"] != 1 {
		t.Fatalf("checked %d times within the TTL, want 1", cv.calls["good-long"])
	}
	*now = now.Add(time.Second)
	c.verify(ctx, "good-long")
	if cv.calls["good-long"] != 2 {
		t.Errorf("checked %d times once the TTL passed, want 2", cv.calls["good-long"])
	}

	// A token expiring before the TTL is checked again at its expiry,
	// when the verifier gets to refuse it.
	c, cv, now = newCache(t, 10*time.Second, time.Minute, 10)
	c.verify(ctx, "good-short")
	*now = now.Add(10 * time.Second)
	c.verify(ctx, "good-short")
	if cv.calls["good-short"] != 2 {
		t.Errorf("a token was taken on the verifier's word past its expiry (%d checks, want 2)", cv.calls["good-short"])
	}
}

func TestCachedVerifierIsBounded(t *testing.T) {
	c, _, now := newCache(t, time.Hour, time.Minute, 3)
	ctx := context.Background()
	for i := range 10 {
		if _, _, err := c.verify(ctx, fmt.Sprintf("good-%d", i)); err != nil {
			t.Fatal(err)
		}
		if len(c.m) > 3 {
			t.Fatalf("after %d tokens the cache holds %d, more than its size 3", i+1, len(c.m))
		}
	}
	// Expired entries go first: after the TTL, a new token finds room
	// without pushing out one that is still good.
	*now = now.Add(2 * time.Minute)
	c.verify(ctx, "good-new-1")
	if len(c.m) != 1 {
		t.Errorf("after the TTL and one new token the cache holds %d entries, want 1", len(c.m))
	}
}

func TestCachedVerifierHandsOutCopies(t *testing.T) {
	c, _, _ := newCache(t, time.Hour, time.Minute, 10)
	ctx := context.Background()
	first, _, _ := c.verify(ctx, "good-1")
	first.Groups[0] = "admins"
	first.ID = "someone-else"
	for range 2 {
		id, _, _ := c.verify(ctx, "good-1")
		if id.ID != "a_good-1" || len(id.Groups) != 1 || id.Groups[0] != "ops" {
			t.Fatalf("a caller's change to its identity reached the cache: %+v", id)
		}
		id.Groups[0] = "admins"
	}
}

// The dev issuer's tokens go through the cache the gateway puts in front
// of it: a token accepted once is accepted without its signature being
// checked again, and a forged one is refused every time.
func TestCachedDevIssuer(t *testing.T) {
	d := newTestDevIssuer(t)
	v := Cached(d.Verify, 0, 0)
	tok, err := d.Issue(Identity{ID: "mira@example.com", Kind: KindPerson, Groups: []string{"reviewers"}}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		id, _, err := v(context.Background(), tok)
		if err != nil || id.ID != "mira@example.com" || id.Groups[0] != "reviewers" {
			t.Fatalf("verify = %+v, %v", id, err)
		}
	}
	forged := tok[:len(tok)-2] + "xx"
	if tok[len(tok)-2:] == "xx" {
		forged = tok[:len(tok)-2] + "yy"
	}
	for range 2 {
		if _, _, err := v(context.Background(), forged); !errors.Is(err, ErrInvalidToken) {
			t.Fatalf("a forged token after a good one: %v, want ErrInvalidToken", err)
		}
	}
}

// 64 callers at once with 8 tokens, past a cache of 4: every one gets its
// own identity and the cache stays within its size (run with -race).
func TestCachedVerifierAtOnce(t *testing.T) {
	d := newTestDevIssuer(t)
	c := &verifierCache{v: d.Verify, ttl: time.Minute, size: 4, now: time.Now, m: map[[32]byte]cachedToken{}}
	toks := make([]string, 8)
	for i := range toks {
		tok, err := d.Issue(Identity{ID: fmt.Sprintf("a_%d", i), Kind: KindAgent}, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		toks[i] = tok
	}
	errs := make(chan error, 64)
	for i := range 64 {
		go func() {
			for j := range 20 {
				k := (i + j) % len(toks)
				id, _, err := c.verify(context.Background(), toks[k])
				if err == nil && id.ID != fmt.Sprintf("a_%d", k) {
					err = fmt.Errorf("token %d verified as %s", k, id.ID)
				}
				if err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for range 64 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if len(c.m) > 4 {
		t.Errorf("the cache holds %d entries, more than its size 4", len(c.m))
	}
}
