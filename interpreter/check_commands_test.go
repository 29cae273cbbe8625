package interpreter

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/baton-run/baton/internal/testing/spectest"
)

// answerer answers a check request the way a test wants.
type answerer func(r *CheckRequest) *CheckAnswers

func f64(v float64) *float64 { return &v }
func intp(v int) *int        { return &v }

// passing answers every question with its best answer, surely.
func passing(r *CheckRequest) *CheckAnswers {
	a := &CheckAnswers{Model: "test-model"}
	for _, q := range r.Questions {
		an := CheckAnswer{ID: q.ID}
		switch q.Kind {
		case QuestionYesNo:
			an.Probability = f64(1)
		case QuestionChoice:
			an.Name, an.Confidence = q.OneOf[0].Name, f64(1)
		case QuestionRubric:
			an.Level, an.Confidence = intp(len(q.Levels)-1), f64(1)
		}
		a.Answers = append(a.Answers, an)
	}
	return a
}

// with answers like passing, but the first question as given.
func with(first CheckAnswer) answerer {
	return func(r *CheckRequest) *CheckAnswers {
		a := passing(r)
		first.ID = a.Answers[0].ID
		a.Answers[0] = first
		return a
	}
}

// checkOutcome is what a checked write answers: the run view, or the
// refusal its caller gets.
type checkOutcome struct {
	View    *View
	Refusal *Error
}

// submitChecked submits and, when the step is checked, applies the
// evaluator's answers; it returns the outcome's view or refusal.
func submitChecked(t testing.TB, m *Machine, c Submit, now time.Time, answer answerer) *checkOutcome {
	t.Helper()
	res := must(t, m, c, now)
	need, ok := res.(*CheckNeeded)
	if !ok {
		return &checkOutcome{View: res.(*View)}
	}
	return answerCheck(t, m, need, now, answer)
}

// answerCheck gives the check need asks for the answers answer makes, or
// an evaluator failure when answer is nil.
func answerCheck(t testing.TB, m *Machine, need *CheckNeeded, now time.Time, answer answerer) *checkOutcome {
	t.Helper()
	var reply CheckReply
	if answer != nil {
		reply.Answers = answer(need.Request)
	} else {
		reply.Failure, reply.Model = "the evaluator is down", "test-model"
	}
	res, err := m.Answer(need, reply, now)
	out := &checkOutcome{}
	if err != nil {
		e, ok := err.(*Error)
		if !ok {
			t.Fatalf("check done: %v", err)
		}
		out.Refusal = e
		spectest.Validate(t, "tool-error.json", out.Refusal)
		return out
	}
	out.View = res.(*View)
	checkView(t, out.View)
	return out
}

func vendorRun(t testing.TB) (*Process, *Machine) {
	p := loadFixture(t, "vendor-check")
	m := start(t, p, map[string]any{"vendorName": "Acme", "amount": json.Number("48000")}, starter, ModeLive)
	return p, m
}

func vendorSubmit(p *Process, lease string) Submit {
	sub := sampleSubmission(p.Step("check_vendor"))
	sub.Next, sub.Reason = ptr("approve"), ptr("Cleared on both lists.")
	return Submit{StepID: "check_vendor", LeaseID: lease, Actor: agentA, Submission: sub}
}

func verdictOf(t testing.TB, raw json.RawMessage) CheckVerdict {
	t.Helper()
	spectest.Validate(t, "check-verdict.json", raw)
	var v CheckVerdict
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// Profile-check §3, every row, on the vendor-check fixture.
func TestCheckPassCompletesWithTheVerdict(t *testing.T) {
	p, m := vendorRun(t)
	claim(t, m, "check_vendor", agentA, "l1", t0)
	out := submitChecked(t, m, vendorSubmit(p, "l1"), t0, passing)
	if out.View == nil || stepState(m, "check_vendor") != StepDone || stepState(m, "approve") != StepWaiting {
		t.Fatalf("pass: %+v; check_vendor %s", out.Refusal, stepState(m, "check_vendor"))
	}
	if v := verdictOf(t, out.View.Data.Steps["check_vendor"].Check); v.Verdict != VerdictPass || v.Model != "test-model" || v.Advisory {
		t.Fatalf("recorded verdict %+v", v)
	}
}

func TestCheckFailRefusesAndHandsOver(t *testing.T) {
	p, m := vendorRun(t)
	claim(t, m, "check_vendor", agentA, "l1", t0)
	before := viewJSON(t, m, t0)
	out := submitChecked(t, m, vendorSubmit(p, "l1"), t0, with(CheckAnswer{Probability: f64(0.12)}))
	want := []string{"check: The cleared verdict matches what the attached report says. → no (0.12)"}
	if out.Refusal == nil || out.Refusal.Code != CodeNotAccepted || !reflect.DeepEqual(out.Refusal.Issues, want) {
		t.Fatalf("fail: %+v, want not_accepted %q", out.Refusal, want)
	}
	// Nothing get_run shows changed (SPEC-DECISIONS §30); the claim stands.
	if after := viewJSON(t, m, t0); string(after) != string(before) {
		t.Fatalf("a failed check changed the view:\n%s\n%s", before, after)
	}
	if stepState(m, "check_vendor") != StepClaimed {
		t.Fatalf("check_vendor is %s after a failed check", stepState(m, "check_vendor"))
	}
	// The same attempt continues: fixed work passes; a new claim after the
	// lease reads the verdict and the lines in its handoff.
	m.Tick(t0.Add(lease))
	c := claim(t, m, "check_vendor", agentB, "l2", t0.Add(lease))
	if c.Handoff == nil || !reflect.DeepEqual(c.Handoff.Issues, want) || verdictOf(t, c.Handoff.Check).Verdict != VerdictFail {
		t.Fatalf("handoff after a failed check: %+v", c.Handoff)
	}
	fixed := vendorSubmit(p, "l2")
	fixed.Actor = agentB
	if out := submitChecked(t, m, fixed, t0.Add(lease), passing); out.View == nil {
		t.Fatalf("the fixed submission: %+v", out.Refusal)
	}
}

func TestCheckUnsureEscalatesWithTheCandidate(t *testing.T) {
	unsure := with(CheckAnswer{Probability: f64(0.62)})
	for _, tc := range []struct {
		name     string
		decide   func(w WorkItem) Decide
		state    StepState
		recorded bool
	}{
		{"completed with the candidate", func(w WorkItem) Decide {
			return Decide{WorkItemID: w.ID, Snapshot: w.Snapshot, Decision: DecisionCompleted, Actor: operator}
		}, StepDone, true},
		{"completed with their own output", func(w WorkItem) Decide {
			sub := Submission{Output: map[string]any{"cleared": false, "summary": "A hit on the EU list."}, Next: ptr("decline"), Reason: ptr("Sanctioned."),
				Evidence: []Evidence{{Kind: "file", Ref: "f_9"}}, Files: map[string]FileCheck{"f_9": {Found: true, Matches: true, SHA256: "9f"}}}
			return Decide{WorkItemID: w.ID, Snapshot: w.Snapshot, Decision: DecisionCompleted, Actor: operator, Submission: sub}
		}, StepDone, true},
		{"returned", func(w WorkItem) Decide {
			return Decide{WorkItemID: w.ID, Snapshot: w.Snapshot, Decision: DecisionReturned, Note: ptr("Screen the aliases too."), Actor: operator}
		}, StepReady, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, m := vendorRun(t)
			claim(t, m, "check_vendor", agentA, "l1", t0)
			out := submitChecked(t, m, vendorSubmit(p, "l1"), t0, unsure)
			if out.View == nil || stepState(m, "check_vendor") != StepWaiting {
				t.Fatalf("unsure: %+v, check_vendor %s", out.Refusal, stepState(m, "check_vendor"))
			}
			w := openItemFor(t, m, t0, "check_vendor")
			if w.Escalation == nil || w.Escalation.Candidate == nil || w.AssignedTo.Group != "operators" {
				t.Fatalf("escalation %+v assigned %+v", w.Escalation, w.AssignedTo)
			}
			if v := verdictOf(t, w.Escalation.Check); v.Verdict != VerdictUnsure {
				t.Fatalf("escalation.check = %+v", v)
			}
			// While it waits, run data shows the verdict.
			if v := verdictOf(t, out.View.Data.Steps["check_vendor"].Check); v.Verdict != VerdictUnsure {
				t.Fatalf("steps.check_vendor.check while waiting = %+v", v)
			}
			spectest.Validate(t, "work-item.json", w)
			v := must(t, m, tc.decide(w), t0).(*View)
			if stepState(m, "check_vendor") != tc.state {
				t.Fatalf("check_vendor is %s, want %s", stepState(m, "check_vendor"), tc.state)
			}
			d := v.Data.Steps["check_vendor"]
			if tc.recorded {
				if d == nil || d.Record == nil || verdictOf(t, d.Check).Verdict != VerdictUnsure {
					t.Fatalf("completion record %+v", d)
				}
				return
			}
			if d != nil && d.Record != nil {
				t.Fatalf("a returned step has a record: %+v", d.Record)
			}
			m.Tick(t0)
			c := claim(t, m, "check_vendor", agentB, "l2", t0)
			if c.Handoff == nil || c.Handoff.Returned == nil || len(c.Handoff.Check) == 0 {
				t.Fatalf("handoff after a return = %+v", c.Handoff)
			}
		})
	}
}

func TestCheckCandidateCompletionIsNotCheckedAgain(t *testing.T) {
	p, m := vendorRun(t)
	claim(t, m, "check_vendor", agentA, "l1", t0)
	submitChecked(t, m, vendorSubmit(p, "l1"), t0, with(CheckAnswer{Probability: f64(0.62)}))
	w := openItemFor(t, m, t0, "check_vendor")
	res := must(t, m, Decide{WorkItemID: w.ID, Snapshot: w.Snapshot, Decision: DecisionCompleted, Actor: operator}, t0)
	if _, checked := res.(*CheckNeeded); checked {
		t.Fatal("a person completing an escalated step was checked again")
	}
	v := res.(*View)
	if got := v.Data.Steps["check_vendor"].Output["cleared"]; got != true {
		t.Fatalf("the candidate's output was not used: %v", got)
	}
}

func TestCheckEvaluatorErrorChangesNothing(t *testing.T) {
	p, m := vendorRun(t)
	claim(t, m, "check_vendor", agentA, "l1", t0)
	before := viewJSON(t, m, t0)
	out := submitChecked(t, m, vendorSubmit(p, "l1"), t0, nil)
	if out.Refusal == nil || out.Refusal.Code != CodeRetry {
		t.Fatalf("evaluator down: %+v, want retry", out)
	}
	if string(viewJSON(t, m, t0)) != string(before) || stepState(m, "check_vendor") != StepClaimed {
		t.Fatal("an evaluator error changed the run")
	}
	// Malformed answers are an evaluator error too, never a verdict.
	malformed := func(r *CheckRequest) *CheckAnswers {
		a := passing(r)
		a.Answers[1].Name = "maybe"
		return a
	}
	if out := submitChecked(t, m, vendorSubmit(p, "l1"), t0, malformed); out.Refusal == nil || out.Refusal.Code != CodeRetry {
		t.Fatalf("malformed answers: %+v, want retry", out)
	}
	// The same submission goes through once the evaluator answers.
	if out := submitChecked(t, m, vendorSubmit(p, "l1"), t0, passing); out.View == nil {
		t.Fatalf("after the evaluator came back: %+v", out.Refusal)
	}
}

const advisorySrc = `---
name: advisory
description: A check that records and never blocks.
steps:
  - id: draft
    agent: Draft the note.
    output: { text: string }
    check: The note is polite.
    advisory: true
  - id: done
    finish: ok
---
`

func TestCheckAdvisoryRecordsEveryVerdict(t *testing.T) {
	p := loadSource(t, advisorySrc)
	for _, tc := range []struct {
		name   string
		answer answerer
		want   Verdict
	}{
		{"pass", passing, VerdictPass},
		{"fail", with(CheckAnswer{Probability: f64(0.1)}), VerdictFail},
		{"unsure", with(CheckAnswer{Abstain: true}), VerdictUnsure},
		{"error", nil, VerdictError},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := start(t, p, nil, starter, ModeLive)
			claim(t, m, "draft", agentA, "l1", t0)
			out := submitChecked(t, m, Submit{StepID: "draft", LeaseID: "l1", Actor: agentA, Submission: sampleSubmission(p.Step("draft"))}, t0, tc.answer)
			if out.View == nil || out.View.Run.State != "ended" {
				t.Fatalf("advisory %s: %+v", tc.name, out.Refusal)
			}
			v := verdictOf(t, out.View.Data.Steps["draft"].Check)
			if v.Verdict != tc.want || !v.Advisory {
				t.Fatalf("recorded %+v, want %s advisory", v, tc.want)
			}
		})
	}
}

func TestCheckHoldsTheLeaseAndOtherSubmissions(t *testing.T) {
	p, m := vendorRun(t)
	claim(t, m, "check_vendor", agentA, "l1", t0)
	need := must(t, m, vendorSubmit(p, "l1"), t0).(*CheckNeeded)
	// Another submission waits; the lease does not run out meanwhile.
	refused(t, m, vendorSubmit(p, "l1"), t0, CodeConflict)
	late := t0.Add(3 * lease)
	if d, ok := m.NextDeadline(); ok && !d.After(late) && d.Equal(t0.Add(lease)) {
		t.Fatal("the lease's expiry is still a deadline while the check runs")
	}
	m.Tick(late)
	if stepState(m, "check_vendor") != StepClaimed {
		t.Fatalf("the lease ran out under a running check: %s", stepState(m, "check_vendor"))
	}
	out := answerCheck(t, m, need, late, passing)
	if out.View == nil || stepState(m, "check_vendor") != StepDone {
		t.Fatalf("after the check: %+v", out.Refusal)
	}
}

func TestCheckReworkStartsFreshWithTheVerdictInHistory(t *testing.T) {
	p, m := vendorRun(t)
	claim(t, m, "check_vendor", agentA, "l1", t0)
	submitChecked(t, m, vendorSubmit(p, "l1"), t0, passing)
	w := openItemFor(t, m, t0, "approve")
	fin := Actor{ID: "ann@example.com", Kind: ActorPerson, Groups: []string{"finance-approver"}}
	v := must(t, m, Decide{WorkItemID: w.ID, Snapshot: w.Snapshot, Decision: DecisionRejected, Note: ptr("Spend not justified."), Actor: fin}, t0).(*View)
	d := v.Data.Steps["check_vendor"]
	if d.Record != nil || len(d.History) != 1 || verdictOf(t, d.History[0].Check).Verdict != VerdictPass {
		t.Fatalf("after rework: %+v", d)
	}
	c := claim(t, m, "check_vendor", agentA, "l2", t0)
	if c.Handoff != nil {
		t.Fatalf("rework through on_reject starts with handoff %+v", c.Handoff)
	}
}

const checkedTaskSrc = `---
name: checked-task
description: A person's task with a check.
steps:
  - id: write
    person: writers
    task: Write the answer.
    output: { text: string }
    check: The answer is complete.
  - id: done
    finish: ok
---
`

func TestCheckOnAPersonsTask(t *testing.T) {
	p := loadSource(t, checkedTaskSrc)
	m := start(t, p, nil, starter, ModeLive)
	w := openItemFor(t, m, t0, "write")
	writer := member(w)
	sub := sampleSubmission(p.Step("write"))
	res := must(t, m, Decide{WorkItemID: w.ID, Snapshot: w.Snapshot, Decision: DecisionCompleted, Actor: writer, Submission: sub}, t0)
	need, ok := res.(*CheckNeeded)
	if !ok {
		t.Fatalf("a person's task completion was not checked: %T", res)
	}
	// Another decision on the item waits for the check.
	refused(t, m, Decide{WorkItemID: w.ID, Snapshot: w.Snapshot, Decision: DecisionCompleted, Actor: writer, Submission: sub}, t0, CodeConflict)
	// The short form has no fail threshold, so only an abstention is unsure.
	out := answerCheck(t, m, need, t0, with(CheckAnswer{Abstain: true}))
	if out.View == nil {
		t.Fatalf("unsure task: %+v", out.Refusal)
	}
	esc := openItemFor(t, m, t0, "write")
	if esc.Escalation == nil || esc.AssignedTo.Group != "operators" {
		t.Fatalf("an unsure task goes to the operators: %+v", esc)
	}
	// Returned puts it back on the writers' item with handoff.returned
	// (SPEC-DECISIONS §26).
	must(t, m, Decide{WorkItemID: esc.ID, Snapshot: esc.Snapshot, Decision: DecisionReturned, Note: ptr("Add the sources."), Actor: operator}, t0)
	back := openItemFor(t, m, t0, "write")
	if back.AssignedTo.Group != "writers" || back.Handoff == nil || back.Handoff.Returned == nil || !strings.Contains(string(back.Handoff.Check), "unsure") {
		t.Fatalf("the returned task: %+v", back)
	}
}
