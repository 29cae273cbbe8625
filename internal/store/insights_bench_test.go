package store_test

import (
	"context"
	"fmt"
	"sync"
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

// The insights bench's seeding gives the figures its shape says: every
// ended run ended in the window, one in ten rejected; every open run waits
// at its approval, one in three overdue; and the drop leaves nothing.
func TestSeedInsightsBench(t *testing.T) {
	t.Parallel()
	b := setup(t)
	now := time.Now().UTC().Truncate(time.Microsecond)
	if err := b.store.SeedInsightsBench(b.ctx, "o_seed", "bench", 20, 10, now); err != nil {
		t.Fatal(err)
	}
	in, err := b.store.Insights(b.ctx, "o_seed", "bench", &store.InsightsOptions{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	outcomes := map[string]int{}
	for _, o := range in.Runs.Outcomes {
		outcomes[o.Outcome] = o.Count
	}
	if in.Runs.Started != 30 || in.Runs.Ended != 20 || in.Runs.Open != 10 || outcomes["ok"] != 18 || outcomes["rejected"] != 2 {
		t.Fatalf("runs %+v", in.Runs)
	}
	work, check := in.Step("work"), in.Step("check")
	if work == nil || check == nil || work.Attempts != 30 || work.DoneByAgent != 30 || work.LeaseExpiries != 1 || work.NotAccepted != 4 {
		t.Fatalf("steps %s", js(in.Steps))
	}
	// Open runs are 21 to 30: 21, 24, 27 and 30 are overdue.
	if check.Attempts != 30 || check.Ended != 20 || check.Rejected != 2 || check.Open.Waiting != 10 || check.Open.Overdue != 4 || len(in.Oldest) != 10 {
		t.Fatalf("check %s, oldest %d", js(check), len(in.Oldest))
	}
	if err := b.store.DropInsightsBench(b.ctx, "o_seed"); err != nil {
		t.Fatal(err)
	}
	if in, err = b.store.Insights(b.ctx, "o_seed", "bench", &store.InsightsOptions{Now: now}); err != nil || in.Runs.Started != 0 || len(in.Steps) != 0 || len(in.Oldest) != 0 {
		t.Fatalf("after the drop: %v %s", err, js(in))
	}
}

// BenchmarkPublishRunAttemptsConcurrent is what writers that run at once
// pay for sharing the insights' counters: 16 writers each claim and
// submit the attempts of runs of their own, all of one process (every
// write updates the same counters of its step and day) or each of a
// process of its own (no counter shared). An op is one write:
// go test ./internal/store -run '^$' -bench PublishRunAttemptsConcurrent -benchtime 4000x
func BenchmarkPublishRunAttemptsConcurrent(b *testing.B) {
	s := seededStore(b)
	for _, shape := range []string{"one-process", "process-each"} {
		b.Run(shape, func(b *testing.B) {
			ctx := context.Background()
			benchUpserts++
			round, writer := benchUpserts, 0
			var mu sync.Mutex
			b.SetParallelism(8)
			b.RunParallel(func(pb *testing.PB) {
				mu.Lock()
				writer++
				w := writer
				mu.Unlock()
				rows := make([]store.RunRow, 10)
				for i := range rows {
					rows[i] = run(fmt.Sprintf("r_conc_%d_%d_%d", round, w, i), 0, t0, `{}`)
					if shape == "process-each" {
						rows[i].Process = fmt.Sprintf("p_conc_%d", w)
					}
				}
				n := 0
				for pb.Next() {
					r := &rows[n%len(rows)]
					r.Seq++
					r.UpdatedAt = r.UpdatedAt.Add(time.Second)
					a := interpreter.Attempt{StepID: "check", Seq: 1, Kind: interpreter.KindAgent, State: interpreter.StepClaimed,
						ReadyAt: t0, ClaimedAt: &r.UpdatedAt, Claims: 1, Rev: r.Seq}
					attempts := []interpreter.Attempt{a}
					if (n/len(rows))%2 == 1 {
						ended := a
						ended.State, ended.EndedAt, ended.Outcome, ended.EndedBy, ended.Next = "", &r.UpdatedAt, interpreter.AttemptDone, interpreter.ByAgent, "approve"
						next := interpreter.Attempt{StepID: "approve", Seq: r.Seq + 1, Kind: interpreter.KindApprove, State: interpreter.StepWaiting, ReadyAt: r.UpdatedAt, Rev: r.Seq + 1}
						attempts = []interpreter.Attempt{ended, next}
					}
					if applied, err := s.PublishRun(ctx, nil, r, nil, nil, attempts...); err != nil || !applied {
						b.Errorf("applied %v, err %v", applied, err)
						return
					}
					n++
				}
			})
		})
	}
}
