package store_test

import (
	"encoding/json"
	"testing"

	"github.com/baton-run/baton/internal/store"
)

// Recall tells, in one call, what the record says of a call's requestId:
// none, the same call (with its first answer) or another; read beside a
// run's row, after counting a remembered refusal, after reserving it for a
// call its run did not answer, or after setting a replayed start's answer.
func TestRecall(t *testing.T) {
	t.Parallel()
	b := setup(t)
	upsert(t, b, run("r_1", 1, t0, `{}`))
	ended := run("r_2", 1, t0, `{}`)
	ended.State = "ended"
	upsert(t, b, ended)
	// The records, each under its own requestId.
	for _, r := range []store.Request{
		{Org: org, RequestID: "answered", Tool: "claim", Digest: "01", RunID: "r_1", Result: json.RawMessage(`{"at":1}`)},
		{Org: org, RequestID: "held", Tool: "submit", Digest: "01", RunID: "r_1"},
		{Org: org, RequestID: "freed", Tool: "submit", Digest: "01", RunID: "r_1"},
	} {
		if err := b.store.RecordRunRequest(b.ctx, nil, r); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.store.ReleaseHeld(b.ctx, nil, store.Request{Org: org, RequestID: "freed", Digest: "01"}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := b.store.ReserveRequest(b.ctx, nil, store.Request{Org: org, RequestID: "reserved", Tool: "upload", Digest: "01"}); err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		name      string
		q         store.Recall
		said      store.Said
		answer    string
		runState  string
		attempt   int
		ahead     bool
		recordNow string // the record's answer after, when it has one
	}{
		{name: "nothing recorded", q: recall("none", "01", store.RecallRead), said: store.SaidNone},
		{name: "this call's answer", q: recall("answered", "01", store.RecallRead), said: store.SaidSame, answer: `{"at":1}`},
		{name: "another call's answer", q: recall("answered", "02", store.RecallRead), said: store.SaidOther},
		{name: "held by a run for another call", q: recall("held", "02", store.RecallRead), said: store.SaidOther},
		{name: "held by a run for this call", q: recall("held", "01", store.RecallRead), said: store.SaidNone},
		{name: "another call's, refused", q: recall("freed", "02", store.RecallRead), said: store.SaidNone},
		{name: "reserved by a gateway for another call", q: recall("reserved", "02", store.RecallRead), said: store.SaidNone},
		{name: "a running run's row", q: withRun(recall("none", "01", store.RecallRead), "r_1"), runState: "active"},
		{name: "an ended run's row", q: withRun(recall("answered", "01", store.RecallRead), "r_2"), said: store.SaidSame, answer: `{"at":1}`, runState: "ended"},
		{name: "no such run", q: withRun(recall("answered", "02", store.RecallRead), "r_9"), said: store.SaidOther},
		{name: "no such run in this organization", q: store.Recall{Request: store.Request{Org: "o_other", RequestID: "answered", Digest: "01"}, RunID: "r_1"}},
		{name: "a refusal counted", q: refusedAt(recall("counted", "01", store.RecallRefused), 0), attempt: 1},
		{name: "a refusal counted before", q: refusedAt(recall("counted", "01", store.RecallRefused), 0), attempt: 1, ahead: true},
		{name: "a refusal of this call's answered record", q: refusedAt(recall("answered", "01", store.RecallRefused), 0), said: store.SaidSame, answer: `{"at":1}`, attempt: 1},
		{name: "unanswered, reserved", q: recall("unanswered", "01", store.RecallUnanswered)},
		{name: "unanswered again, the same call", q: recall("unanswered", "01", store.RecallUnanswered)},
		{name: "unanswered, reserved for another call", q: recall("unanswered", "02", store.RecallUnanswered), said: store.SaidOther},
		{name: "unanswered, held by a run for another call", q: recall("held", "02", store.RecallUnanswered), said: store.SaidOther},
		{name: "unanswered, this call answered", q: recall("answered", "01", store.RecallUnanswered), said: store.SaidSame, answer: `{"at":1}`},
		{name: "a replayed start's answer", q: answeredWith(recall("answered", "01", store.RecallAnswered), `{"at":2}`), recordNow: `{"at":2}`},
		{name: "another call's answer stays", q: answeredWith(recall("answered", "02", store.RecallAnswered), `{"at":3}`), recordNow: `{"at":2}`},
	} {
		got, err := b.store.Recall(b.ctx, tc.q)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got.Said != tc.said || string(got.Answer) != tc.answer || got.RunState != tc.runState || got.Attempt != tc.attempt || got.Ahead != tc.ahead {
			t.Errorf("%s: %s %s run %q attempt %d ahead %v; want %s %s run %q attempt %d ahead %v", tc.name,
				got.Said, got.Answer, got.RunState, got.Attempt, got.Ahead, tc.said, tc.answer, tc.runState, tc.attempt, tc.ahead)
		}
		if tc.recordNow != "" {
			if r, err := b.store.GetRequest(b.ctx, org, tc.q.RequestID); err != nil || string(r.Result) != tc.recordNow {
				t.Errorf("%s: the record holds %s (%v), want %s", tc.name, r.Result, err, tc.recordNow)
			}
		}
	}
	if _, err := b.store.Recall(b.ctx, store.Recall{Request: store.Request{Org: org, RequestID: "x"}}); err == nil {
		t.Error("a recall without a digest was asked")
	}
}

func recall(requestID, digest string, kind store.RecallKind) store.Recall {
	return store.Recall{Request: store.Request{Org: org, RequestID: requestID, Tool: "claim", Digest: digest}, Kind: kind}
}

func withRun(q store.Recall, runID string) store.Recall {
	q.RunID = runID
	return q
}

func refusedAt(q store.Recall, attempt int) store.Recall {
	q.Attempt = attempt
	return q
}

func answeredWith(q store.Recall, answer string) store.Recall {
	q.Result = json.RawMessage(answer)
	return q
}
