package workflows

import (
	"testing"
	"time"

	"github.com/baton-run/baton/interpreter"
)

const oneStepSrc = `---
name: one-step
description: One agent step, then the end.
steps:
  - id: check
    agent: Check the vendor.
    output: { cleared: boolean }
  - id: done
    finish: checked
---
Body.
`

// A write answers only once its answer is stored: a publish that fails
// while PostgreSQL is down is tried again for as long as the outage lasts,
// well past one try's timeout, so the start's answer and each write's
// reach the record that answers their replays once the run has ended.
func TestPublishOutlastsAnOutage(t *testing.T) {
	b := setup(t)
	// A local activity's later tries end at its first try's workflow time
	// plus its ScheduleToCloseTimeout, read on the real clock: the
	// workflow's clock starts now, or every retry would time out at once.
	b.env.SetStartTime(time.Now())
	const outage = 20 // failed tries, backing off to 5s apart: over a minute
	b.rec.outage = outage
	b.env.RegisterDelayedCallback(func() {
		b.rec.mu.Lock()
		defer b.rec.mu.Unlock()
		b.rec.outage = outage
	}, 5*time.Minute)
	b.at(6*time.Minute, UpdateClaim, "u-claim", claim("check", "l1"), ok(t, "claim"))
	b.at(10*time.Minute, UpdateSubmit, "u-submit", submit("check", "l1", interpreter.Values{"cleared": true}), ok(t, "submit"))
	in := Input{Org: "o_test", RequestID: "req-start", Digest: "d-start", Start: interpreter.Start{
		RunID: "r_1", Process: parse(t, []byte(oneStepSrc)), Version: 1,
		Inputs: interpreter.Values{}, Mode: interpreter.ModeLive, Starter: person,
	}}
	b.env.ExecuteWorkflow(ProcessRun, in)
	if !b.env.IsWorkflowCompleted() {
		t.Fatal("workflow did not complete")
	}
	if err := b.env.GetWorkflowError(); err != nil {
		t.Fatalf("workflow: %v", err)
	}
	b.rec.mu.Lock()
	defer b.rec.mu.Unlock()
	stored := map[string]string{}
	for _, a := range b.rec.answers {
		if a.Result != nil {
			stored[a.RequestID] = a.Digest
		}
	}
	for id, digest := range map[string]string{"req-start": "d-start", "u-claim": "d-l1", "u-submit": "s-l1"} {
		if stored[id] != digest {
			t.Errorf("the answer of %s was not stored with digest %s (stored: %v)", id, digest, stored)
		}
	}
	if b.rec.outage != 0 {
		t.Errorf("%d failed publishes were never tried: the outage did not reach the run's writes", b.rec.outage)
	}
}
