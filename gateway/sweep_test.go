package gateway

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/baton-run/baton/internal/store"
)

// Idempotency records older than the retention are deleted while the
// sweep runs; younger ones stay.
func TestSweepRequests(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	for _, id := range []string{"old", "new"} {
		if _, _, err := b.store.PutRequest(b.ctx, nil, store.Request{Org: "o_test", RequestID: id, Tool: "upload", Digest: "01", Result: []byte(`{}`)}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := b.store.Pool().Exec(b.ctx, `UPDATE requests SET created_at = now() - interval '8 days' WHERE request_id = 'old'`); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(b.ctx)
	done := make(chan error, 1)
	go func() { done <- b.g.SweepRequests(ctx, &SweepOptions{Every: 10 * time.Millisecond}) }()
	deadline := time.Now().Add(time.Minute)
	for {
		_, err := b.store.GetRequest(b.ctx, "o_test", "old")
		if errors.Is(err, store.ErrNotFound) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the 8-day-old record is still there: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if _, err := b.store.GetRequest(b.ctx, "o_test", "new"); err != nil {
		t.Errorf("a new record was swept: %v", err)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("SweepRequests = %v after its context ended, want nil", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("SweepRequests did not return when its context ended")
	}
}

// A retention shorter than a day would forget requestIds that clients may
// still retry; it is refused.
func TestSweepRequestsRefusesShortRetention(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	if err := b.g.SweepRequests(b.ctx, &SweepOptions{Retention: time.Hour}); err == nil {
		t.Fatal("a one-hour retention was accepted")
	}
}
