package tests

import (
	"testing"

	"github.com/baton-run/baton/internal/testing/drivetest"
	"github.com/baton-run/baton/interpreter"
)

var leads = map[string]string{
	"operations":     "operations-lead",
	"security":       "security-lead",
	"communications": "communications-lead",
}

var leadOutputs = map[string]string{
	"operations":     "recoverySummary",
	"security":       "containmentSummary",
	"communications": "communicationsSummary",
}

func leadArgs(v view, w *interpreter.WorkItem, text string) map[string]any {
	return decideArgs(v, w, "completed", map[string]any{
		"output":   map[string]any{leadOutputs[w.StepID]: text},
		"evidence": []any{map[string]any{"kind": "link", "ref": "https://status.example.com/" + w.StepID}},
		"summary":  "Done: " + text,
	})
}

// parallel-1 §3–4: the fork makes three work items at once; a sibling's
// completion stales the others' snapshots; the join makes the parallel step
// done and its next ready; a rejection from after the join into the
// parallel step rewinds the whole region and forks again.
func TestParallel_ForkJoinStalenessAndRework(t *testing.T) {
	b := start(t, options{})
	b.publishFixture("major-incident")
	agent := b.connect(agentID)
	ps := newPeople(b)
	cmd := ps.as(personID("cmd@example.com"))
	var v view
	ps.as(personID("starter@example.com")).ok("start_run", map[string]any{"process": "major-incident", "requestId": rid(),
		"inputs": map[string]any{"incidentId": "INC-7", "commander": "cmd@example.com"}}, &v)
	runID := v.Run.ID
	c := claimStep(agent, runID, "activate")
	agent.ok("submit", map[string]any{"token": c.Token, "output": map[string]any{"bridge": "br-1"}, "summary": "Bridge open.", "requestId": rid()}, &v)

	// Fork: three items in the same write, the parallel step waiting.
	if v.StepState("respond") != "waiting" || len(v.WorkItems) != 3 {
		t.Fatalf("after activate: %s, %d items", v.StepStates(), len(v.WorkItems))
	}
	for _, s := range v.Steps {
		if s.ID == "respond" && s.Kind != interpreter.KindParallel {
			t.Fatalf("respond has kind %s", s.Kind)
		}
	}
	for step, group := range leads {
		w := itemFor(v, step)
		if v.StepState(step) != "waiting" || w == nil || w.AssignedTo.Group != group || w.Due == nil {
			t.Fatalf("branch %s: %s, item %+v", step, v.StepState(step), w)
		}
		lead := ps.as(personID(group+"@example.com", group))
		if items := personWork(lead, runID); len(items) != 1 || items[0].WorkItem.StepID != step {
			t.Fatalf("%s get_work = %+v", group, items)
		}
	}
	if _, ok := v.Data.Steps["respond"]; ok {
		t.Fatal("the parallel step recorded run data")
	}

	// Sibling staleness: every completion stales the other snapshots.
	ops, sec, com := itemFor(v, "operations"), itemFor(v, "security"), itemFor(v, "communications")
	opsLead := ps.as(personID("operations-lead@example.com", "operations-lead"))
	secLead := ps.as(personID("security-lead@example.com", "security-lead"))
	comLead := ps.as(personID("communications-lead@example.com", "communications-lead"))
	opsLead.ok("decide", leadArgs(v, ops, "Service restored."), &v)
	if v.StepState("operations") != "done" || v.StepState("respond") != "waiting" || len(v.WorkItems) != 2 {
		t.Fatalf("one branch joined early: %s", v.StepStates())
	}
	secLead.refused("decide", leadArgs(v, sec, "Contained."), interpreter.CodeStale)
	fresh := getRun(secLead, runID)
	secLead.ok("decide", leadArgs(fresh, itemFor(fresh, "security"), "Contained."), &v)
	comLead.refused("decide", leadArgs(v, com, "Notice out."), interpreter.CodeStale)
	fresh = getRun(comLead, runID)
	comLead.ok("decide", leadArgs(fresh, itemFor(fresh, "communications"), "Notice out."), &v)

	// Join: respond done, close_review open for the commander.
	review := itemFor(v, "close_review")
	if v.StepState("respond") != "done" || review == nil || review.AssignedTo.Person != "cmd@example.com" || len(v.WorkItems) != 1 {
		t.Fatalf("after the last branch: %s, items %+v", v.StepStates(), v.WorkItems)
	}

	// Rework from after the join rewinds the region.
	cmd.ok("decide", decideArgs(v, review, "rejected", map[string]any{"note": "Security exposure is unclear."}), &v)
	if v.StepState("respond") != "waiting" || v.StepState("close_review") != "null" || v.StepState("activate") != "done" || len(v.WorkItems) != 3 {
		t.Fatalf("after the rejection: %s, %d items", v.StepStates(), len(v.WorkItems))
	}
	for step := range leads {
		d := v.Data.Steps[step]
		if v.StepState(step) != "waiting" || d == nil || (d.Record != nil && d.By != "") || len(d.History) != 1 {
			t.Fatalf("branch %s after the rework: %s, data %+v", step, v.StepState(step), d)
		}
		if w := itemFor(v, step); w == nil || w.Handoff != nil {
			t.Fatalf("branch %s: a fresh attempt, item %+v", step, w)
		}
	}
	if d := v.Data.Steps["activate"]; len(d.History) != 0 || d.Output["bridge"] != "br-1" {
		t.Fatalf("the step before the fork was touched: %+v", d)
	}
	if r := v.Data.Steps["close_review"]; r.Decision != "rejected" || *r.Note != "Security exposure is unclear." {
		t.Fatalf("the rejecting approval = %+v", r.Record)
	}
	for _, step := range []string{"operations", "security", "communications"} {
		fresh := getRun(cmd, runID)
		ps.as(personID(leads[step]+"@example.com", leads[step])).ok("decide", leadArgs(fresh, itemFor(fresh, step), "Again."), &v)
	}
	review = itemFor(v, "close_review")
	cmd.ok("decide", decideArgs(v, review, "approved", nil), &v)
	drivetest.WantEndedAtFinish(t, drivetest.Fixture(t, "major-incident"), &v)
	if r := v.Data.Steps["close_review"]; r.Decision != "approved" || len(r.History) != 1 {
		t.Fatalf("close_review = %+v", r)
	}
}

const parallelFailSrc = `---
name: parallel-fail
description: Two branches; a failure in one ends the run and cancels the other.
steps:
  - id: fork
    parallel: [gather, look]
    next: done
  - id: gather
    agent: Gather.
    next: join
  - id: look
    person: reviewers
    approve: Look it over.
    next: join
  - id: done
    finish: ok
---
`

// parallel-1 §3: a branch that fails ends the run; the core cleanup
// cancels the sibling and stops its token.
func TestParallel_FailedBranchEndsTheRun(t *testing.T) {
	b := start(t, options{})
	agent := b.connect(agentID)
	rita := b.connect(personID("rita@example.com", "reviewers"))
	v := startSrc(t, b, rita, parallelFailSrc, nil)
	if v.StepState("gather") != "ready" || v.StepState("look") != "waiting" || v.Run.State != "active" {
		t.Fatalf("after the fork: %s %s", v.Run.State, v.StepStates())
	}
	c := claimStep(agent, v.Run.ID, "gather")
	rita.ok("decide", decideArgs(v, itemFor(v, "look"), "failed", map[string]any{"note": "Wrong incident."}), &v)
	if v.Run.State != "ended" || *v.Run.Outcome != "failed" || v.StepState("gather") != "cancelled" || v.StepState("look") != "failed" || v.StepState("fork") != "cancelled" {
		t.Fatalf("after a failed branch: %+v %s", v.Run, v.StepStates())
	}
	agent.refused("submit", map[string]any{"token": c.Token, "output": map[string]any{}, "summary": "s", "requestId": rid()}, interpreter.CodeConflict, "run_ended")
}

const branchReworkSrc = `---
name: branch-rework
description: A branch with its own review beside a plain branch.
steps:
  - id: fork
    parallel: [draft, other]
    next: done
  - id: draft
    agent: Draft.
    next: check
  - id: check
    person: reviewers
    approve: Check the draft.
    on_reject: draft
    next: join
  - id: other
    agent: Other work.
    next: join
  - id: done
    finish: ok
---
`

// parallel-1 §3: on_reject inside a branch moves that branch's completions
// to history and touches no sibling, even one that already joined.
func TestParallel_ReworkInsideABranchTouchesNoSibling(t *testing.T) {
	b := start(t, options{})
	agent := b.connect(agentID)
	rita := b.connect(personID("rita@example.com", "reviewers"))
	v := startSrc(t, b, rita, branchReworkSrc, nil)
	if items := agentWork(agent, v.Run.ID); len(items) != 2 {
		t.Fatalf("the fork listed %d agent steps, want 2", len(items))
	}
	do := func(step string) {
		t.Helper()
		c := claimStep(agent, v.Run.ID, step)
		agent.ok("submit", map[string]any{"token": c.Token, "output": map[string]any{}, "summary": "Did " + step + ".", "requestId": rid()}, &v)
	}
	do("other")
	do("draft")
	rita.ok("decide", decideArgs(v, itemFor(v, "check"), "rejected", map[string]any{"note": "Redo the draft."}), &v)
	if v.StepState("draft") != "ready" || v.StepState("check") != "null" || v.StepState("other") != "done" || v.StepState("fork") != "waiting" {
		t.Fatalf("after a rejection inside a branch: %s", v.StepStates())
	}
	if d := v.Data.Steps["other"]; len(d.History) != 0 || d.By != agentID.ID {
		t.Fatalf("the sibling was touched: %+v", d)
	}
	if d := v.Data.Steps["draft"]; len(d.History) != 1 || (d.Record != nil && d.By != "") {
		t.Fatalf("the branch step after rework = %+v", d)
	}
	do("draft")
	rita.ok("decide", decideArgs(v, itemFor(v, "check"), "approved", nil), &v)
	drivetest.WantEndedAtFinish(t, parseFor(t, []byte(branchReworkSrc)), &v)
}
