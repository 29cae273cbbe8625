package tests

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/baton-run/baton/internal/testing/workertest"
	"github.com/baton-run/baton/interpreter"
)

// The vendor-check answers: q1 yes/no (pass 0.9, fail 0.5), q2 a choice
// (pass states, unsure unclear), q3 a rubric (pass level 2).
const (
	vendorPass    = `{"q1": {"probability": 0.97}, "q2": {"name": "states", "confidence": 0.9}, "q3": {"level": 2, "confidence": 0.9}}`
	vendorFail    = `{"q1": {"probability": 0.12}, "q2": {"name": "states", "confidence": 0.9}, "q3": {"level": 2, "confidence": 0.9}}`
	vendorUnsure  = `{"q1": {"probability": 0.62}, "q2": {"name": "states", "confidence": 0.9}, "q3": {"level": 2, "confidence": 0.9}}`
	vendorNonsure = `{"q1": {"probability": 0.97}, "q2": {"name": "perhaps", "confidence": 0.9}, "q3": {"level": 2, "confidence": 0.9}}`
)

type checkBench struct {
	b     *baton
	model *workertest.Model
	agent *user
	mira  *user
	ops   *user
}

func startCheck(t *testing.T) *checkBench {
	// Each test tells the model what to answer.
	m := workertest.NewModel(t, nil)
	b := start(t, options{evaluator: m.Evaluator(t)})
	b.publishFixture("vendor-check")
	return &checkBench{b: b, model: m, agent: b.connect(agentID),
		mira: b.connect(personID("mira@example.com", "finance-approver")), ops: b.connect(operatorID)}
}

func (cb *checkBench) run(t *testing.T) (view, interpreter.ClaimWire) {
	var v view
	cb.mira.ok("start_run", map[string]any{"process": "vendor-check", "requestId": rid(),
		"inputs": map[string]any{"vendorName": "Acme", "amount": json.Number("48000")}}, &v)
	return v, claimStep(cb.agent, v.Run.ID, "check_vendor")
}

func (cb *checkBench) submission(t *testing.T, c interpreter.ClaimWire) map[string]any {
	return map[string]any{
		"token": c.Token, "requestId": rid(), "summary": "Screened OFAC and EU by legal name.",
		"output":   map[string]any{"cleared": true, "summary": "No hits on OFAC or EU."},
		"evidence": evidenceFor(cb.agent, []string{"file"}),
		"next":     "approve", "reason": "Cleared on both lists.",
	}
}

func checkOf(t *testing.T, raw json.RawMessage) interpreter.CheckVerdict {
	t.Helper()
	var v interpreter.CheckVerdict
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("check %s: %v", raw, err)
	}
	return v
}

// Profile-check §3 over MCP: describe offers check-1; a passing check
// completes the step with the verdict in run data; a failing one is
// not_accepted with the exact lines and changes nothing get_run shows, and
// the same attempt then passes.
func TestCheck_PassAndFailThenPass(t *testing.T) {
	t.Parallel()
	cb := startCheck(t)
	var d struct {
		Profiles []string `json:"profiles"`
	}
	cb.agent.ok("describe", nil, &d)
	if strings.Join(d.Profiles, ",") != "parallel-1,check-1" {
		t.Fatalf("describe profiles %v", d.Profiles)
	}

	v, c := cb.run(t)
	before := cb.agent.call("get_run", map[string]any{"runId": v.Run.ID}).Data
	cb.model.Answers(vendorFail)
	cb.agent.refused("submit", cb.submission(t, c), interpreter.CodeNotAccepted,
		"check: The cleared verdict matches what the attached report says. → no (0.12)")
	if after := cb.agent.call("get_run", map[string]any{"runId": v.Run.ID}).Data; !bytes.Equal(before, after) {
		t.Fatalf("a failed check changed get_run:\n%s\n%s", before, after)
	}
	cb.model.Answers(vendorPass)
	cb.agent.ok("submit", cb.submission(t, c), &v)
	if v.StepState("check_vendor") != "done" || v.StepState("approve") != "waiting" {
		t.Fatalf("after a passing check: %s", v.StepStates())
	}
	got := checkOf(t, v.Data.Steps["check_vendor"].Check)
	if got.Verdict != interpreter.VerdictPass || got.Model != workertest.ModelName || len(got.Questions) != 3 {
		t.Fatalf("recorded verdict %+v", got)
	}
}

// Unsure: the submission is held and escalated to the operators with the
// verdict and the candidate; a person completes it with the candidate or
// their own output, or returns it.
func TestCheck_UnsureGoesToAPerson(t *testing.T) {
	t.Parallel()
	cb := startCheck(t)
	cb.model.Answers(vendorUnsure)

	escalated := func() (view, *interpreter.WorkItem) {
		v, c := cb.run(t)
		cb.agent.ok("submit", cb.submission(t, c), &v)
		w := itemFor(v, "check_vendor")
		if w == nil || w.Escalation == nil || w.Escalation.Candidate == nil || checkOf(t, w.Escalation.Check).Verdict != interpreter.VerdictUnsure {
			t.Fatalf("unsure: work items %+v", v.WorkItems)
		}
		if checkOf(t, v.Data.Steps["check_vendor"].Check).Verdict != interpreter.VerdictUnsure {
			t.Fatal("run data does not show the unsure verdict while it waits")
		}
		return v, w
	}

	// Completed with the candidate: no output given.
	v, w := escalated()
	cb.ops.ok("decide", decideArgs(v, w, "completed", nil), &v)
	if v.StepState("check_vendor") != "done" || v.Data.Steps["check_vendor"].Output["cleared"] != true || v.Data.Steps["check_vendor"].Next != "approve" {
		t.Fatalf("completed with the candidate: %s %+v", v.StepStates(), v.Data.Steps["check_vendor"].Record)
	}

	// Completed with their own output: not checked again.
	calls := cb.model.Calls()
	v, w = escalated()
	cb.ops.ok("decide", decideArgs(v, w, "completed", map[string]any{
		"output": map[string]any{"cleared": false, "summary": "A hit on the EU list."}, "next": "decline", "reason": "Sanctioned.",
		"evidence": evidenceFor(cb.ops, []string{"file"}),
	}), &v)
	if v.Run.State != "ended" || *v.Run.Outcome != "declined" {
		t.Fatalf("completed with own output: %+v", v.Run)
	}
	if n := cb.model.Calls() - calls; n != 1 {
		t.Fatalf("the model was asked %d times for one submission and its completion by a person, want 1", n)
	}

	// Returned: the next claim reads the note and the verdict.
	v, w = escalated()
	cb.ops.ok("decide", decideArgs(v, w, "returned", map[string]any{"note": "Screen the aliases too."}), &v)
	c := claimStep(cb.agent, v.Run.ID, "check_vendor")
	if c.Handoff == nil || c.Handoff.Returned == nil || checkOf(t, c.Handoff.Check).Verdict != interpreter.VerdictUnsure {
		t.Fatalf("handoff after a return: %+v", c.Handoff)
	}
}

// Evaluator errors (ruling 28): a model that is down or answers nonsense is
// asked twice, then the agent gets retry and the run is unchanged; the same
// requestId succeeds once the model answers.
func TestCheck_EvaluatorErrorsAreRetry(t *testing.T) {
	t.Parallel()
	cb := startCheck(t)
	for _, tc := range []struct {
		name string
		fail func()
	}{
		{"down", cb.model.Down},
		{"malformed", func() { cb.model.Answers(vendorNonsure) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, c := cb.run(t)
			before := cb.agent.call("get_run", map[string]any{"runId": v.Run.ID}).Data
			tc.fail()
			args := cb.submission(t, c)
			calls := cb.model.Calls()
			cb.agent.refused("submit", args, interpreter.CodeRetry)
			if n := cb.model.Calls() - calls; n != 2 {
				t.Fatalf("the model was asked %d times, want 2 (one retry)", n)
			}
			if after := cb.agent.call("get_run", map[string]any{"runId": v.Run.ID}).Data; !bytes.Equal(before, after) {
				t.Fatalf("an evaluator error changed get_run")
			}
			cb.agent.refused("submit", args, interpreter.CodeRetry)
			cb.model.Answers(vendorPass)
			cb.agent.ok("submit", args, &v)
			if v.StepState("check_vendor") != "done" {
				t.Fatalf("the same requestId after the model came back: %s", v.StepStates())
			}
			var again view
			cb.agent.ok("submit", args, &again)
			if again.Run.UpdatedAt != v.Run.UpdatedAt {
				t.Fatal("a replay of the accepted submission did not answer the original")
			}
		})
	}
}

const advisoryCheckSrc = `---
name: advisory-check
description: A check that records its verdict and never blocks.
steps:
  - id: draft
    agent: Draft the reply.
    output: { text: string }
    check: The reply is polite.
    advisory: true
  - id: done
    finish: sent
---
`

// Advisory: every verdict is recorded and none blocks, an evaluator error
// included.
func TestCheck_AdvisoryNeverBlocks(t *testing.T) {
	t.Parallel()
	cb := startCheck(t)
	cb.b.publish(advisoryCheckSrc)
	for _, tc := range []struct {
		name string
		set  func()
		want interpreter.Verdict
	}{
		{"fail", func() { cb.model.Answers(`{"q1": {"probability": 0.05}}`) }, interpreter.VerdictFail},
		{"error", cb.model.Down, interpreter.VerdictError},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.set()
			var v, started view
			cb.mira.ok("start_run", map[string]any{"process": "advisory-check", "inputs": map[string]any{}, "requestId": rid()}, &started)
			c := claimStep(cb.agent, started.Run.ID, "draft")
			cb.agent.ok("submit", map[string]any{"token": c.Token, "requestId": rid(), "summary": "Drafted.", "output": map[string]any{"text": "Dear customer"}}, &v)
			got := checkOf(t, v.Data.Steps["draft"].Check)
			if v.Run.State != "ended" || got.Verdict != tc.want || !got.Advisory {
				t.Fatalf("advisory %s: run %s, verdict %+v", tc.name, v.Run.State, got)
			}
		})
	}
}
