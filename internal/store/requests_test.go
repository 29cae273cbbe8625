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
	if created || stored.Digest != r.Digest || string(stored.Result) != `{"ok":true}` || stored.Tool != "claim" {
		t.Fatalf("repeat put: created %v, stored %+v; want the first record", created, stored)
	}
	got, err := b.store.GetRequest(b.ctx, org, "req-1")
	if err != nil || string(got.Result) != `{"ok":true}` {
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

// A run's write holds its requestId, refused or answered; another call
// takes a held requestId over only once it was refused, and a refused try
// is counted so the next runs under a new update id.
func TestRecordRunRequest(t *testing.T) {
	t.Parallel()
	b := setup(t)
	held := store.Request{Org: org, RequestID: "req-1", Tool: "submit", Digest: "01", RunID: "r_1"}
	if err := b.store.RecordRunRequest(b.ctx, nil, held); err != nil {
		t.Fatal(err)
	}
	other := store.Request{Org: org, RequestID: "req-1", Tool: "claim", Digest: "02", RunID: "r_2", Result: json.RawMessage(`{"at":2}`)}
	if err := b.store.RecordRunRequest(b.ctx, nil, other); !errors.Is(err, store.ErrRequestIDReused) {
		t.Fatalf("a held requestId taken by another call: %v", err)
	}
	if _, created, err := b.store.ReserveRequest(b.ctx, nil, store.Request{Org: org, RequestID: "req-1", Tool: "upload", Digest: "03"}); err != nil || created {
		t.Fatalf("a gateway reservation took a run's held requestId: %v, %v", created, err)
	}
	if err := b.store.ReleaseHeld(b.ctx, nil, held); err != nil {
		t.Fatal(err)
	}
	if err := b.store.RecordRunRequest(b.ctx, nil, other); err != nil {
		t.Fatalf("a refused write's requestId was not free: %v", err)
	}
	got, err := b.store.GetRequest(b.ctx, org, "req-1")
	if err != nil || got.Digest != "02" || got.RunID != "r_2" || string(got.Result) != `{"at":2}` {
		t.Fatalf("record %+v, %v", got, err)
	}
	// The same run answering the same digest again applied the write a
	// second time: the task that stored the first answer was lost, and
	// the run keeps the second, so the record does too (a renew answers a
	// later expiresAt). Another run's answer of that digest replaces
	// nothing.
	again := other
	again.Result = json.RawMessage(`{"at":3}`)
	if err := b.store.RecordRunRequest(b.ctx, nil, again); err != nil {
		t.Fatal(err)
	}
	if got, _ := b.store.GetRequest(b.ctx, org, "req-1"); string(got.Result) != `{"at":3}` {
		t.Fatalf("the run's second answer did not replace the lost task's: %s", got.Result)
	}
	stranger := again
	stranger.RunID, stranger.Result = "r_3", json.RawMessage(`{"at":4}`)
	if err := b.store.RecordRunRequest(b.ctx, nil, stranger); err != nil {
		t.Fatal(err)
	}
	if got, _ := b.store.GetRequest(b.ctx, org, "req-1"); string(got.Result) != `{"at":3}` || got.RunID != "r_2" {
		t.Fatalf("another run's answer replaced the record: %s of %s", got.Result, got.RunID)
	}

	r := store.Request{Org: org, RequestID: "req-2", Tool: "submit", Digest: "04"}
	if next, ahead, err := b.store.CountRefusal(b.ctx, nil, r, 0); err != nil || ahead || next != 1 {
		t.Fatalf("first refusal: %d, %v, %v", next, ahead, err)
	}
	// A call that tried attempt 0 and got the remembered refusal is told
	// to try attempt 1.
	if next, ahead, err := b.store.CountRefusal(b.ctx, nil, r, 0); err != nil || !ahead || next != 1 {
		t.Fatalf("remembered refusal: %d, %v, %v", next, ahead, err)
	}
	if next, ahead, err := b.store.CountRefusal(b.ctx, nil, r, 1); err != nil || ahead || next != 2 {
		t.Fatalf("second refusal: %d, %v, %v", next, ahead, err)
	}
	if _, created, err := b.store.ReserveRequest(b.ctx, nil, store.Request{Org: org, RequestID: "req-2", Tool: "upload", Digest: "05"}); err != nil || !created {
		t.Fatalf("a refused requestId was not free for other arguments: %v, %v", created, err)
	}
}

// An answer is stored as it was given, whichever way it was recorded: a
// replay read from the record gets its keys in their order and its numbers
// as they were written, not a normalized copy.
func TestAnswersKeepTheirBytes(t *testing.T) {
	t.Parallel()
	b := setup(t)
	answer := json.RawMessage(`{"run":{"id":"r_1","state":"active"},"data":{"zeta":1.0,"alpha":1e2},"note":"a"}`)
	r := run("r_1", 1, t0, `{}`)
	if _, err := b.store.PublishRun(b.ctx, nil, &r, nil, &store.Request{Org: org, RequestID: "q_run", Tool: "claim", Digest: "01", Result: answer, RunID: "r_1"}); err != nil {
		t.Fatal(err)
	}
	if err := b.store.RecordAnswer(b.ctx, nil, store.Request{Org: org, RequestID: "q_gw", Tool: "upload", Digest: "02", Result: answer}); err != nil {
		t.Fatal(err)
	}
	replaced := json.RawMessage(`{"run":{"id":"r_1","state":"active"},"data":{"zeta":2},"note":"b"}`)
	if err := b.store.ReplaceAnswer(b.ctx, nil, store.Request{Org: org, RequestID: "q_run", Tool: "claim", Digest: "01", Result: replaced}); err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string]json.RawMessage{"q_run": replaced, "q_gw": answer} {
		got, err := b.store.GetRequest(b.ctx, org, id)
		if err != nil || string(got.Result) != string(want) {
			t.Errorf("%s: stored %s (err %v), want %s as given", id, got.Result, err, want)
		}
	}
}

// A worker of an earlier version records its writes' requestIds through
// record_run_request, which takes the answer as jsonb: after migration 013
// made answers json, its calls, untyped as it sends them, still record.
func TestEarlierWorkersStillRecord(t *testing.T) {
	t.Parallel()
	b := setup(t)
	r := run("r_1", 1, t0, `{}`)
	upsert(t, b, r)
	if _, err := b.store.Pool().Exec(b.ctx, `SELECT record_run_request($1, $2, $3, $4, $5, $6, $7)`,
		org, "q_old", "claim", "01", json.RawMessage(`{"b":1,"a":2}`), "r_1", int64(1)); err != nil {
		t.Fatalf("an earlier worker's call: %v", err)
	}
	got, err := b.store.GetRequest(b.ctx, org, "q_old")
	var answer map[string]any
	if err == nil {
		err = json.Unmarshal(got.Result, &answer)
	}
	if err != nil || got.RunID != "r_1" || answer["a"] != 2.0 || answer["b"] != 1.0 {
		t.Fatalf("recorded %+v (err %v)", got, err)
	}
	// A reuse still raises as the store reads it.
	if err := b.store.RecordRunRequest(b.ctx, nil, store.Request{Org: org, RequestID: "q_old", Tool: "submit", Digest: "02", RunID: "r_2", Result: json.RawMessage(`{}`)}); !errors.Is(err, store.ErrRequestIDReused) {
		t.Fatalf("the requestId taken by the earlier worker, used again: %v", err)
	}
}
