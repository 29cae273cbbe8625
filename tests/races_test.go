package tests

import (
	"fmt"
	"sync"
	"testing"

	"github.com/baton-run/baton/gateway/auth"
	"github.com/baton-run/baton/interpreter"
)

// Sixty-four members of the group decide one work item at once: exactly
// one decision is taken, every other member is told already_decided, and
// the step completes once.
func TestRacingDecisionsTakeOne(t *testing.T) {
	b := start(t, options{})
	b.publish(peopleSrc)
	starter := b.connect(personID("starter@example.com"))
	var v view
	starter.ok("start_run", map[string]any{"process": "people-loop", "inputs": map[string]any{"ref": "x"}, "requestId": rid()}, &v)
	members := make([]*user, 64)
	for i := range members {
		members[i] = b.connect(personID(fmt.Sprintf("member%02d@example.com", i), "reviewers"))
	}
	work := personWork(members[0], v.Run.ID)
	if len(work) != 1 {
		t.Fatalf("the shared item: %+v", work)
	}
	w := work[0].WorkItem
	results := race(len(members), func(i int) reply {
		return members[i].call("decide", fillArgs(v, &w, map[string]any{"reason": members[i].id.ID}))
	})
	winner := oneWins(t, results, "already_decided")
	got := getRun(starter, v.Run.ID)
	rec := got.Data.Steps["fill"]
	if len(rec.History) != 0 || got.StepState("fill") != "done" || rec.Record == nil || rec.By != members[winner].id.ID {
		t.Fatalf("fill after the race: %+v, want done once by %s", rec, members[winner].id.ID)
	}
}

// One requestId sent sixteen times at once, half with other arguments:
// one run starts, every call with the winning arguments answers it, every
// call with the others is told request_id_reused.
func TestRacingRequestIDStartsOneRun(t *testing.T) {
	b := start(t, options{})
	b.publish(supplierSrc)
	mira := b.connect(personID("mira@example.com", "finance-approver"))
	reqID := rid()
	results := race(16, func(i int) reply {
		return mira.call("start_run", map[string]any{"process": "supplier-onboarding", "requestId": reqID,
			"inputs": map[string]any{"vendorName": "Acme", "amount": 1 + i%2}})
	})
	runID, amount := "", -1
	for i, r := range results {
		if !r.OK {
			continue
		}
		var v view
		if err := interpreter.DecodeExact(r.Data, &v); err != nil {
			t.Fatal(err)
		}
		if runID == "" {
			runID, amount = v.Run.ID, 1+i%2
		}
		if v.Run.ID != runID || 1+i%2 != amount {
			t.Fatalf("call %d (amount %d) answered run %s; the first answer was run %s for amount %d", i, 1+i%2, v.Run.ID, runID, amount)
		}
	}
	if runID == "" {
		t.Fatal("no call started the run")
	}
	for i, r := range results {
		if 1+i%2 == amount {
			if !r.OK {
				t.Fatalf("call %d with the winning arguments got %+v", i, r.Error)
			}
			continue
		}
		if r.OK || r.Error.Code != interpreter.CodeConflict || len(r.Error.Issues) != 1 || r.Error.Issues[0] != interpreter.IssueRequestIDReused {
			t.Fatalf("call %d with other arguments got %+v, want conflict %s", i, r.Error, interpreter.IssueRequestIDReused)
		}
	}
	var runs struct{ Items []any }
	mira.ok("list_runs", map[string]any{}, &runs)
	if len(runs.Items) != 1 {
		t.Fatalf("%d runs started", len(runs.Items))
	}
}

// Sixty-four agents claim one step at once: exactly one gets a token,
// every other is told claimed_by_other, and the step is claimed once.
func TestRacingClaimsTakeOne(t *testing.T) {
	b := start(t, options{})
	b.publish(raceSrc)
	starter := b.connect(personID("mira@example.com"))
	var v view
	starter.ok("start_run", map[string]any{"process": "race", "inputs": map[string]any{}, "requestId": rid()}, &v)
	agents := racers(b, 64)
	results := race(len(agents), func(i int) reply {
		return agents[i].call("claim", map[string]any{"runId": v.Run.ID, "stepId": "work", "requestId": rid()})
	})
	oneWins(t, results, "claimed_by_other")
	if after := getRun(starter, v.Run.ID); after.StepState("work") != "claimed" {
		t.Fatalf("work after the race: %s, want claimed", after.StepState("work"))
	}
}

// raceSrc is one agent step that many agents want.
const raceSrc = `---
name: race
description: One agent step many agents want.
steps:
  - id: work
    agent: Do it.
  - id: done
    finish: ok
---
`

// racers connects n agents.
func racers(b *baton, n int) []*user {
	agents := make([]*user, n)
	for i := range agents {
		agents[i] = b.connect(auth.Identity{ID: fmt.Sprintf("a_racer%02d", i), Kind: auth.KindAgent})
	}
	return agents
}

// race makes n calls at once and returns their replies in order.
func race(n int, call func(i int) reply) []reply {
	results := make([]reply, n)
	var wg sync.WaitGroup
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = call(i)
		}()
	}
	wg.Wait()
	return results
}

// oneWins fails unless exactly one reply is ok and every other is a
// conflict with the one issue given; it returns the winner's index.
func oneWins(t *testing.T, results []reply, issue string) int {
	t.Helper()
	winner := -1
	for i, r := range results {
		switch {
		case r.OK && winner < 0:
			winner = i
		case r.OK:
			t.Fatalf("calls %d and %d both won", winner, i)
		case r.Error.Code != interpreter.CodeConflict || len(r.Error.Issues) != 1 || r.Error.Issues[0] != issue:
			t.Fatalf("call %d got %+v, want conflict %s", i, r.Error, issue)
		}
	}
	if winner < 0 {
		t.Fatal("no call won")
	}
	return winner
}

// One requestId used by claims on sixteen runs at once: exactly one claim
// takes effect, every other is told request_id_reused, and its run is
// left as it was.
func TestRacingRequestIDAcrossRunsTakesOne(t *testing.T) {
	b := start(t, options{})
	b.publish(supplierSrc)
	agent := b.connect(agentID)
	mira := b.connect(personID("mira@example.com", "finance-approver"))
	runs := make([]string, 16)
	for i := range runs {
		runs[i] = startSupplier(t, b, mira).Run.ID
	}
	reqID := rid()
	results := race(len(runs), func(i int) reply {
		return agent.call("claim", map[string]any{"runId": runs[i], "stepId": "check_vendor", "requestId": reqID})
	})
	won := -1
	for i, r := range results {
		switch {
		case r.OK && won >= 0:
			t.Fatalf("claims on runs %d and %d both took effect", won, i)
		case r.OK:
			won = i
		case r.Error.Code != interpreter.CodeConflict || len(r.Error.Issues) != 1 || r.Error.Issues[0] != interpreter.IssueRequestIDReused:
			t.Fatalf("claim on run %d got %+v, want conflict %s", i, r.Error, interpreter.IssueRequestIDReused)
		}
	}
	if won < 0 {
		t.Fatal("no claim took effect")
	}
	for i, id := range runs {
		var v interpreter.View
		agent.ok("get_run", map[string]any{"runId": id}, &v)
		want := "ready"
		if i == won {
			want = "claimed"
		}
		if v.Steps[0].State == nil || *v.Steps[0].State != want {
			t.Fatalf("run %d (claim %d won): step %v, want %s", i, won, v.Steps[0].State, want)
		}
	}
	// The winning claim replays; the requestId stays the winner's.
	again := agent.call("claim", map[string]any{"runId": runs[won], "stepId": "check_vendor", "requestId": reqID})
	if !again.OK || string(again.Data) == "" {
		t.Fatalf("the winning claim's replay: %+v", again.Error)
	}
	other := (won + 1) % len(runs)
	agent.refused("claim", map[string]any{"runId": runs[other], "stepId": "check_vendor", "requestId": reqID}, interpreter.CodeConflict, interpreter.IssueRequestIDReused)
}
