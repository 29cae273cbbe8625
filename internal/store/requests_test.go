package store_test

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/baton-run/baton/internal/store"
)

func TestPutRequestReplay(t *testing.T) {
	t.Parallel()
	b := setup(t)
	r := store.Request{Org: org, RequestID: "req-1", Tool: "claim", Digest: "010203"}

	err := pgx.BeginFunc(b.ctx, b.store.Pool(), func(tx pgx.Tx) error {
		stored, created, err := b.store.PutRequest(b.ctx, tx, r)
		if err != nil {
			return err
		}
		if !created || stored.Result != nil || stored.Digest != r.Digest {
			t.Errorf("first put: created %v, stored %+v", created, stored)
		}
		return b.store.SetRequestResult(b.ctx, tx, org, "req-1", json.RawMessage(`{"ok":true}`))
	})
	if err != nil {
		t.Fatal(err)
	}

	other := r
	other.Digest = "09"
	stored, created, err := b.store.PutRequest(b.ctx, nil, other)
	if err != nil {
		t.Fatal(err)
	}
	if created || stored.Digest != r.Digest || string(stored.Result) != `{"ok": true}` || stored.Tool != "claim" {
		t.Fatalf("repeat put: created %v, stored %+v; want the first record", created, stored)
	}
	got, err := b.store.GetRequest(b.ctx, org, "req-1")
	if err != nil || string(got.Result) != `{"ok": true}` {
		t.Fatalf("GetRequest = %+v, %v", got, err)
	}
	// Request ids are per organization.
	if _, err := b.store.GetRequest(b.ctx, "o_other", "req-1"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("other org: err = %v, want ErrNotFound", err)
	}
}

// A second call with the same requestId waits for the first call's
// transaction: after a rollback (a refused call) it runs; after a commit it
// gets the first call's record.
func TestPutRequestConcurrent(t *testing.T) {
	t.Parallel()
	b := setup(t)
	r := store.Request{Org: org, RequestID: "req-1", Tool: "submit", Digest: "d"}

	for _, commit := range []bool{false, true} {
		tx, err := b.store.Pool().Begin(b.ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, created, err := b.store.PutRequest(b.ctx, tx, r); err != nil || !created {
			t.Fatalf("first put: created %v, err %v", created, err)
		}
		type res struct {
			created bool
			err     error
		}
		second := make(chan res, 1)
		go func() {
			_, created, err := b.store.PutRequest(b.ctx, nil, r)
			second <- res{created, err}
		}()
		select {
		case got := <-second:
			t.Fatalf("second put returned %+v while the first transaction was open", got)
		case <-time.After(200 * time.Millisecond):
		}
		if commit {
			if err := b.store.SetRequestResult(b.ctx, tx, org, "req-1", json.RawMessage(`1`)); err != nil {
				t.Fatal(err)
			}
			err = tx.Commit(b.ctx)
		} else {
			err = tx.Rollback(b.ctx)
		}
		if err != nil {
			t.Fatal(err)
		}
		got := <-second
		if got.err != nil {
			t.Fatal(got.err)
		}
		// After the rollback the second call inserts (and commits, on the
		// pool); the first of the next round then finds it, so clear it.
		if got.created == commit {
			t.Fatalf("commit=%v: second put created=%v", commit, got.created)
		}
		if !commit {
			if _, err := b.store.DeleteRequestsBefore(b.ctx, nil, time.Now().Add(time.Hour)); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// A record whose answer its run never kept is replaced by the answer the
// run gives; a record of another digest is not.
func TestReplaceAnswer(t *testing.T) {
	t.Parallel()
	b := setup(t)
	r := store.Request{Org: org, RequestID: "req-1", Tool: "claim", Digest: "01", Result: json.RawMessage(`{"at":1}`)}
	if err := b.store.RecordAnswer(b.ctx, nil, r); err != nil {
		t.Fatal(err)
	}
	other := r
	other.Digest, other.Result = "02", json.RawMessage(`{"at":3}`)
	if err := b.store.ReplaceAnswer(b.ctx, nil, other); err != nil {
		t.Fatal(err)
	}
	if got, _ := b.store.GetRequest(b.ctx, org, "req-1"); string(got.Result) != `{"at": 1}` {
		t.Fatalf("a call of another digest replaced the answer: %s", got.Result)
	}
	r.Result = json.RawMessage(`{"at":2}`)
	if err := b.store.ReplaceAnswer(b.ctx, nil, r); err != nil {
		t.Fatal(err)
	}
	if got, _ := b.store.GetRequest(b.ctx, org, "req-1"); string(got.Result) != `{"at": 2}` {
		t.Fatalf("answer after ReplaceAnswer = %s, want the run's", got.Result)
	}
}
