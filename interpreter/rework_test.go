package interpreter

import (
	"testing"
	"time"
)

// These tests pin SPEC-DECISIONS §31: a rejection into on_reject rewinds
// only the steps whose current completion is later than the returned-to
// step's latest completion, and nothing else when that step never
// completed.

// completeStep finishes a ready agent step or an open task with a sample
// submission, whichever the step is.
func completeStep(t *testing.T, m *Machine, p *Process, id string, now time.Time) {
	t.Helper()
	s := p.Step(id)
	if s.Kind == KindAgent {
		lease := "l_" + id + now.Format("150405")
		claim(t, m, id, agentA, lease, now)
		must(t, m, Submit{StepID: id, LeaseID: lease, Actor: agentA, Submission: sampleSubmission(s)}, now)
		return
	}
	w := openItemFor(t, m, now, id)
	must(t, m, Decide{WorkItemID: w.ID, Snapshot: w.Snapshot, Decision: DecisionCompleted, Actor: member(w), Submission: sampleSubmission(s)}, now)
}

func reject(t *testing.T, m *Machine, id, note string, now time.Time) *View {
	t.Helper()
	w := openItemFor(t, m, now, id)
	return must(t, m, Decide{WorkItemID: w.ID, Snapshot: w.Snapshot, Decision: DecisionRejected, Note: ptr(note), Actor: member(w)}, now).(*View)
}

// wantData checks a step's run data: whether it has a current completion
// and how many earlier ones are in history.
func wantData(t *testing.T, v *View, id string, current bool, history int) {
	t.Helper()
	d := v.Data.Steps[id]
	if d == nil {
		if current || history > 0 {
			t.Fatalf("%s has no run data, want current %v and %d in history", id, current, history)
		}
		return
	}
	if (d.Record != nil) != current || len(d.History) != history {
		t.Fatalf("%s: current %v with %d in history, want current %v with %d", id, d.Record != nil, len(d.History), current, history)
	}
}

func TestReworkIntoStepThatNeverRan(t *testing.T) {
	p := loadFixture(t, "support-escalation")
	m := start(t, p, Samples(p.Inputs), starter, ModeLive)
	lease := "l1"
	claim(t, m, "diagnose", agentA, lease, t0)
	sub := sampleSubmission(p.Step("diagnose"))
	sub.Next = ptr("confirm")
	must(t, m, Submit{StepID: "diagnose", LeaseID: lease, Actor: agentA, Submission: sub}, t0)

	v := reject(t, m, "confirm", "Customer says it still fails.", t0.Add(time.Hour))
	// Nothing completed after a step that never completed: the diagnosis
	// stays current for the person doing tier1_handoff.
	wantData(t, v, "diagnose", true, 0)
	if stepState(m, "diagnose") != StepDone {
		t.Fatalf("diagnose is %s, want done", stepState(m, "diagnose"))
	}
	if got := v.Data.Steps["diagnose"].Output["diagnosis"]; got != "some diagnosis" {
		t.Fatalf("diagnose output = %v", got)
	}
	cf := v.Data.Steps["confirm"]
	if cf.Decision != DecisionRejected || *cf.Note != "Customer says it still fails." || stepState(m, "confirm") != StepNull {
		t.Fatalf("confirm: %+v state %s", cf.Record, stepState(m, "confirm"))
	}
	if stepState(m, "tier1_handoff") != StepWaiting {
		t.Fatalf("tier1_handoff is %s, want waiting", stepState(m, "tier1_handoff"))
	}
	wantData(t, v, "tier1_handoff", false, 0)
}

const reworkSrc = `---
name: rework
description: Three steps and an approval that sends the work back.
steps:
  - id: intake
    agent: Read the request.
    output: { request: string }
  - id: draft
    agent: Draft the answer.
    output: { text: string }
  - id: polish
    agent: Polish the draft.
    output: { text: string }
  - id: review
    person: reviewer
    approve: The answer is right.
    on_reject: draft
    next: done
  - id: done
    finish: answered
---
`

func TestReworkIntoStepCompletedOnceAndTwice(t *testing.T) {
	p := loadSource(t, reworkSrc)
	m := start(t, p, nil, starter, ModeLive)
	now := t0
	for _, id := range []string{"intake", "draft", "polish"} {
		now = now.Add(time.Minute)
		completeStep(t, m, p, id, now)
	}
	now = now.Add(time.Minute)
	v := reject(t, m, "review", "Too long.", now)
	wantData(t, v, "intake", true, 0) // completed before draft: stays
	wantData(t, v, "draft", false, 1)
	wantData(t, v, "polish", false, 1)
	if stepState(m, "draft") != StepReady || stepState(m, "polish") != StepNull || stepState(m, "intake") != StepDone {
		t.Fatalf("after the first rejection: intake %s draft %s polish %s",
			stepState(m, "intake"), stepState(m, "draft"), stepState(m, "polish"))
	}

	// Second round: draft has now completed twice.
	for _, id := range []string{"draft", "polish"} {
		now = now.Add(time.Minute)
		completeStep(t, m, p, id, now)
	}
	now = now.Add(time.Minute)
	v = reject(t, m, "review", "Still too long.", now)
	wantData(t, v, "intake", true, 0)
	wantData(t, v, "draft", false, 2)
	wantData(t, v, "polish", false, 2)
	if r := v.Data.Steps["review"]; r.Decision != DecisionRejected || *r.Note != "Still too long." || len(r.History) != 1 {
		t.Fatalf("review data = %+v with %d in history", r.Record, len(r.History))
	}
}

const branchReworkSrc = `---
name: branch-rework
description: Rework inside one branch of a fork, including into a step that never ran.
steps:
  - id: fork
    parallel: [b1, c1]
    next: done
  - id: b1
    agent: Do the first part.
    output: { part: string }
    next:
      - { to: b_review, when: The part is simple }
      - { to: b_fix, when: The part needs fixing first }
  - id: b_fix
    agent: Fix the part.
    output: { fix: string }
    next: b_review
  - id: b_review
    person: reviewer
    approve: The part is right.
    on_reject: b_fix
    next: b2
  - id: b2
    agent: Finish the part.
    output: { done: string }
    next: b_final
  - id: b_final
    person: reviewer
    approve: The finished part is right.
    on_reject: b1
    next: join
  - id: c1
    agent: Do the other part.
    output: { other: string }
    next: join
  - id: done
    finish: finished
---
`

func TestReworkInsideABranch(t *testing.T) {
	p := loadSource(t, branchReworkSrc)
	m := start(t, p, nil, starter, ModeLive)
	now := t0.Add(time.Minute)
	completeStep(t, m, p, "c1", now) // the sibling branch, done first
	now = now.Add(time.Minute)
	completeStep(t, m, p, "b1", now) // routes straight to b_review

	// Into b_fix, which never ran: b1 stays current, c1 is untouched.
	now = now.Add(time.Minute)
	v := reject(t, m, "b_review", "Fix it first.", now)
	wantData(t, v, "b1", true, 0)
	wantData(t, v, "c1", true, 0)
	if stepState(m, "b_fix") != StepReady || stepState(m, "c1") != StepDone || stepState(m, "fork") != StepWaiting {
		t.Fatalf("b_fix %s c1 %s fork %s", stepState(m, "b_fix"), stepState(m, "c1"), stepState(m, "fork"))
	}

	for _, id := range []string{"b_fix"} {
		now = now.Add(time.Minute)
		completeStep(t, m, p, id, now)
	}
	now = now.Add(time.Minute)
	w := openItemFor(t, m, now, "b_review")
	must(t, m, Decide{WorkItemID: w.ID, Snapshot: w.Snapshot, Decision: DecisionApproved, Actor: member(w)}, now)
	now = now.Add(time.Minute)
	completeStep(t, m, p, "b2", now)

	// Into b1, completed once: every later completion in this branch moves
	// to history, the sibling branch does not.
	now = now.Add(time.Minute)
	v = reject(t, m, "b_final", "Start over.", now)
	wantData(t, v, "b1", false, 1)
	wantData(t, v, "b_fix", false, 1)
	wantData(t, v, "b_review", false, 2) // its rejection and its approval
	wantData(t, v, "b2", false, 1)
	wantData(t, v, "c1", true, 0)
	if stepState(m, "b1") != StepReady || stepState(m, "c1") != StepDone || stepState(m, "b_final") != StepNull {
		t.Fatalf("b1 %s c1 %s b_final %s", stepState(m, "b1"), stepState(m, "c1"), stepState(m, "b_final"))
	}
	if f := v.Data.Steps["b_final"]; f.Decision != DecisionRejected || *f.Note != "Start over." {
		t.Fatalf("b_final data = %+v", f.Record)
	}
}
