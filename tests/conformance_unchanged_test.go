package tests

import (
	"bytes"
	"testing"

	"github.com/baton-run/baton/interpreter"
)

const forkedReviewSrc = `---
name: forked-review
description: An agent gathers in one branch while a person reviews in the other.
steps:
  - id: fork
    parallel: [gather, review]
    next: done
  - id: gather
    agent: Gather the facts and attach the report.
    output:
      found: boolean
      tier: { type: string, one_of: [gold, silver] }
    evidence: [file]
    next: join
  - id: review
    person: reviewers
    task: Review the request.
    output: { fine: boolean }
    next: join
  - id: done
    finish: ok
---
`

// §4.3 "Nothing changed", §6.3, SPEC-DECISIONS §30: a refused write of
// any kind leaves get_run byte for byte as it was, run.updatedAt and the
// snapshot included, and so does a renew; a person's decision prepared
// before the refusals is not stale.
func TestSection6_3_RefusalsChangeNothingGetRunShows(t *testing.T) {
	t.Parallel()
	b := start(t, options{})
	agent, other := b.connect(agentID), b.connect(agent2ID)
	mira := b.connect(personID("mira@example.com", "reviewers"))
	ops := b.connect(operatorID)
	v := startSrc(t, b, mira, forkedReviewSrc, nil)
	c := claimStep(agent, v.Run.ID, "gather")

	raw := func() []byte {
		t.Helper()
		r := agent.call("get_run", map[string]any{"runId": v.Run.ID})
		if !r.OK {
			t.Fatalf("get_run: %+v", r.Error)
		}
		return r.Data
	}
	before := raw()
	var seen view
	if err := interpreter.DecodeExact(before, &seen); err != nil {
		t.Fatal(err)
	}
	item := itemFor(seen, "review")
	file := evidenceFor(agent, []string{"file"})

	refusals := []struct {
		name string
		who  *user
		tool string
		args map[string]any
		code interpreter.Code
	}{
		{"missing field", agent, "submit", map[string]any{"token": c.Token, "requestId": rid(), "summary": "s", "output": map[string]any{"found": true}, "evidence": file}, interpreter.CodeNotAccepted},
		{"wrong type", agent, "submit", map[string]any{"token": c.Token, "requestId": rid(), "summary": "s", "output": map[string]any{"found": "yes", "tier": "gold"}, "evidence": file}, interpreter.CodeNotAccepted},
		{"undeclared field", agent, "submit", map[string]any{"token": c.Token, "requestId": rid(), "summary": "s", "output": map[string]any{"found": true, "tier": "gold", "extra": 1}, "evidence": file}, interpreter.CodeNotAccepted},
		{"blank summary", agent, "submit", map[string]any{"token": c.Token, "requestId": rid(), "summary": "  ", "output": map[string]any{"found": true, "tier": "gold"}, "evidence": file}, interpreter.CodeNotAccepted},
		{"missing file", agent, "submit", map[string]any{"token": c.Token, "requestId": rid(), "summary": "s", "output": map[string]any{"found": true, "tier": "gold"}, "evidence": []any{map[string]any{"kind": "file", "ref": "f_000"}}}, interpreter.CodeNotAccepted},
		{"next on one next", agent, "submit", map[string]any{"token": c.Token, "requestId": rid(), "summary": "s", "output": map[string]any{"found": true, "tier": "gold"}, "evidence": file, "next": "join", "reason": "r"}, interpreter.CodeNotAccepted},
		{"token of another agent", other, "submit", map[string]any{"token": c.Token, "requestId": rid(), "summary": "s", "output": map[string]any{"found": true, "tier": "gold"}, "evidence": file}, interpreter.CodeForbidden},
		{"token that does not verify", agent, "submit", map[string]any{"token": c.Token + "x", "requestId": rid(), "summary": "s", "output": map[string]any{}}, interpreter.CodeInvalid},
		{"claim held by another", other, "claim", map[string]any{"runId": v.Run.ID, "stepId": "gather", "requestId": rid()}, interpreter.CodeConflict},
		{"claim of a person step", agent, "claim", map[string]any{"runId": v.Run.ID, "stepId": "review", "requestId": rid()}, interpreter.CodeForbidden},
		{"decide by an agent", agent, "decide", decideArgs(seen, item, "completed", map[string]any{"output": map[string]any{"fine": true}}), interpreter.CodeForbidden},
		{"decide with a bad output", mira, "decide", decideArgs(seen, item, "completed", map[string]any{"output": map[string]any{"fine": "yes"}}), interpreter.CodeNotAccepted},
		{"decide on no such item", mira, "decide", decideArgs(seen, &interpreter.WorkItem{ID: "w_99", Snapshot: item.Snapshot}, "completed", map[string]any{"output": map[string]any{"fine": true}}), interpreter.CodeNotFound},
		{"cancel by an agent", agent, "cancel", map[string]any{"runId": v.Run.ID, "reason": "no", "requestId": rid()}, interpreter.CodeForbidden},
		{"event with a bad name", ops, "send_event", map[string]any{"runId": v.Run.ID, "name": "Bad Name", "requestId": rid()}, interpreter.CodeInvalid},
	}
	for _, r := range refusals {
		got := r.who.call(r.tool, r.args)
		if got.OK {
			t.Fatalf("%s: accepted", r.name)
		}
		if r.code != "" && got.Error.Code != r.code {
			t.Fatalf("%s: %+v, want %s", r.name, got.Error, r.code)
		}
		if after := raw(); !bytes.Equal(before, after) {
			t.Fatalf("%s changed get_run:\nbefore %s\nafter  %s", r.name, before, after)
		}
	}

	// A renew and a held event change nothing get_run shows either.
	var renewed interpreter.RenewWire
	agent.ok("renew", map[string]any{"token": c.Token, "progress": "Half done.", "requestId": rid()}, &renewed)
	agent.ok("send_event", map[string]any{"runId": v.Run.ID, "name": "nobody-waits", "requestId": rid()}, nil)
	agent.refused("submit", map[string]any{"token": c.Token, "requestId": rid(), "summary": "s", "output": map[string]any{"found": true, "tier": "gold"}, "evidence": file}, interpreter.CodeStale)
	// The issues of the refusals reach the run by a signal sent before the
	// refusal answers; get_run asks the run, which takes every signal sent
	// before it answers a query.
	if after := raw(); !bytes.Equal(before, after) {
		t.Fatalf("renew, event or noted refusals changed get_run:\nbefore %s\nafter  %s", before, after)
	}

	// The decision prepared before all of it is still current.
	mira.ok("decide", decideArgs(seen, item, "completed", map[string]any{"output": map[string]any{"fine": true}}), &v)
	if v.StepState("review") != "done" {
		t.Fatalf("review is %s after the decision", v.StepState("review"))
	}
	agent.ok("submit", goodGather(agent, renewed.Token), &v)
	if v.Run.State != "ended" {
		t.Fatalf("run is %s after both branches", v.Run.State)
	}
}
