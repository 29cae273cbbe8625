package store_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/baton-run/baton/internal/store"
	"github.com/baton-run/baton/interpreter"
)

// BenchmarkPublishRunAttempts is what the record of step attempts adds to
// a write's read-model transaction: a claim's (the run's row, its work and
// the write's answer) with and without the claimed attempt, and a
// submission's, which ends one attempt (an update) and begins the next
// (an insert). Each round of
// b.Loop runs all three, so they share the machine's state:
// go test ./internal/store -run '^$' -bench PublishRunAttempts -benchtime 3000x
func BenchmarkPublishRunAttempts(b *testing.B) {
	s := seededStore(b)
	ctx := context.Background()
	benchUpserts++
	rows := make([]store.RunRow, 200)
	for i := range rows {
		rows[i] = run(fmt.Sprintf("r_attempts_%d_%d", benchUpserts, i), 0, t0, `{"vendorName": "Acme"}`)
	}
	work := []store.WorkRow{agentStep("check", t0)}
	var took [3]time.Duration
	names := [3]string{"claim-bare", "claim", "submit"}
	n := 0
	for b.Loop() {
		for k := range 3 {
			r := &rows[(n*3+k)%len(rows)]
			r.Seq++
			r.UpdatedAt = r.UpdatedAt.Add(time.Second)
			answer := &store.Request{Org: org, RequestID: fmt.Sprintf("q_att_%d_%d_%d", benchUpserts, n, k), Tool: "claim", Digest: "ab", Result: []byte(`{"ok":true}`), RunID: r.RunID}
			a := interpreter.Attempt{StepID: "check", Seq: 1, Kind: interpreter.KindAgent, State: interpreter.StepClaimed,
				ReadyAt: t0, ClaimedAt: &r.UpdatedAt, Claims: 1, Rev: r.Seq}
			var attempts []interpreter.Attempt
			switch k {
			case 1:
				attempts = []interpreter.Attempt{a}
			case 2:
				ended := a
				ended.State, ended.EndedAt, ended.Outcome, ended.EndedBy, ended.Next = "", &r.UpdatedAt, interpreter.AttemptDone, interpreter.ByAgent, "approve"
				next := interpreter.Attempt{StepID: "approve", Seq: r.Seq + 1, Kind: interpreter.KindApprove, State: interpreter.StepWaiting, ReadyAt: r.UpdatedAt, Rev: r.Seq + 1}
				attempts = []interpreter.Attempt{ended, next}
			}
			begin := time.Now()
			if applied, err := s.PublishRun(ctx, nil, r, work, answer, attempts...); err != nil || !applied {
				b.Fatalf("applied %v, err %v", applied, err)
			}
			took[k] += time.Since(begin)
		}
		n++
	}
	b.StopTimer()
	for k, name := range names {
		b.ReportMetric(float64(took[k].Microseconds())/1000/float64(n), name+"-ms")
	}
}
