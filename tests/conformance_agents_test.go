package tests

import (
	"testing"
	"time"

	"github.com/baton-run/baton/interpreter"
)

const agentLoopSrc = `---
name: agent-loop
description: An agent gathers with a file, a reviewer approves.
steps:
  - id: gather
    agent: Gather the facts and attach the report.
    output:
      found: boolean
      tier: { type: string, one_of: [gold, silver] }
    evidence: [file]
  - id: review
    person: reviewers
    approve: Approve the gathered facts.
  - id: done
    finish: ok
---

# Agent loop
`

func goodGather(u *user, token string) map[string]any {
	return map[string]any{
		"token": token, "requestId": rid(), "summary": "Gathered.",
		"output":   map[string]any{"found": true, "tier": "gold"},
		"evidence": evidenceFor(u, []string{"file"}),
	}
}

// §3.3: claim conflicts: claimed_by_you, claimed_by_other, not_ready; and
// forbidden on a person step and for a person identity.
func TestSection3_3_ClaimConflicts(t *testing.T) {
	b := start(t, options{})
	agent, other := b.connect(agentID), b.connect(agent2ID)
	mira := b.connect(personID("mira@example.com", "reviewers"))
	v := startSrc(t, b, mira, agentLoopSrc, nil)
	claimArgs := func(step string) map[string]any {
		return map[string]any{"runId": v.Run.ID, "stepId": step, "requestId": rid()}
	}
	agent.refused("claim", claimArgs("review"), interpreter.CodeForbidden)
	mira.refused("claim", claimArgs("gather"), interpreter.CodeForbidden)
	c := claimStep(agent, v.Run.ID, "gather")
	agent.refused("claim", claimArgs("gather"), interpreter.CodeConflict, "claimed_by_you")
	other.refused("claim", claimArgs("gather"), interpreter.CodeConflict, "claimed_by_other")
	if items := agentWork(other, v.Run.ID); len(items) != 0 {
		t.Fatalf("a claimed step is listed as claimable: %+v", items)
	}
	agent.ok("submit", goodGather(agent, c.Token), nil)
	other.refused("claim", claimArgs("gather"), interpreter.CodeConflict, "not_ready")
	agent.refused("claim", claimArgs("nowhere"), interpreter.CodeNotFound)
	agent.refused("claim", map[string]any{"runId": "r_none", "stepId": "gather", "requestId": rid()}, interpreter.CodeNotFound)
}

// §3.3: a lease that ends makes the step claimable at once, with the last
// progress note in handoff; renew replaces the token, so the old one is
// stale; a token that does not verify is invalid.
func TestSection3_3_LeaseExpiryAndRenew(t *testing.T) {
	t.Parallel()
	b := start(t, options{lease: testLease})
	agent, other := b.connect(agentID), b.connect(agent2ID)
	mira := b.connect(personID("mira@example.com", "reviewers"))
	var d struct {
		LeaseSeconds int `json:"leaseSeconds"`
	}
	agent.ok("describe", nil, &d)
	if d.LeaseSeconds != int(testLease/time.Second) {
		t.Fatalf("describe.leaseSeconds = %d, want %d", d.LeaseSeconds, int(testLease/time.Second))
	}
	v := startSrc(t, b, mira, agentLoopSrc, nil)
	c := claimStep(agent, v.Run.ID, "gather")
	var r interpreter.RenewWire
	agent.ok("renew", map[string]any{"token": c.Token, "progress": "Checked the first list.", "requestId": rid()}, &r)
	if r.Token == "" || r.Token == c.Token || r.ExpiresAt < c.ExpiresAt {
		t.Fatalf("renew = %+v after claim expiring %s", r, c.ExpiresAt)
	}
	agent.refused("submit", goodGather(agent, c.Token), interpreter.CodeStale)
	agent.refused("renew", map[string]any{"token": c.Token, "requestId": rid()}, interpreter.CodeStale)
	agent.refused("submit", goodGather(agent, "not-a-token"), interpreter.CodeInvalid)
	if got := getRun(agent, v.Run.ID); got.StepState("gather") != "claimed" {
		t.Fatalf("gather is %s while claimed", got.StepState("gather"))
	}

	untilExpired(t, r.ExpiresAt)
	items := agentWorkWhen(other, v.Run.ID, func(items []agentItem) bool { return len(items) == 1 })
	if len(items) != 1 || items[0].Handoff == nil || items[0].Handoff.Progress != "Checked the first list." {
		t.Fatalf("get_work after expiry = %+v, want gather with handoff.progress", items)
	}
	agent.refused("renew", map[string]any{"token": r.Token, "requestId": rid()}, interpreter.CodeStale)
	c2 := claimStep(other, v.Run.ID, "gather")
	if c2.Handoff == nil || c2.Handoff.Progress != "Checked the first list." {
		t.Fatalf("claim after expiry: handoff %+v", c2.Handoff)
	}
	agent.refused("submit", goodGather(agent, r.Token), interpreter.CodeStale)
	other.ok("submit", goodGather(other, c2.Token), &v)
	if v.StepState("gather") != "done" || v.Data.Steps["gather"].By != agent2ID.ID {
		t.Fatalf("after submit: %s by %s", v.StepState("gather"), v.Data.Steps["gather"].By)
	}
}

// §3.3, §6.3: a refused submission changes nothing and lists every issue;
// the claim stands; when the lease ends the issues travel in handoff.
func TestSection3_3_RefusedSubmissionHandsOverIssues(t *testing.T) {
	t.Parallel()
	b := start(t, options{lease: testLease})
	agent, other := b.connect(agentID), b.connect(agent2ID)
	mira := b.connect(personID("mira@example.com", "reviewers"))
	v := startSrc(t, b, mira, agentLoopSrc, nil)
	c := claimStep(agent, v.Run.ID, "gather")
	if c.Handoff != nil {
		t.Fatalf("first claim has handoff %+v", c.Handoff)
	}
	issues := []string{"output.found: expected boolean", "output.tier: not one of gold, silver", "output.extra: not declared", "evidence f_000: not found", "summary: missing"}
	agent.refused("submit", map[string]any{
		"token": c.Token, "requestId": rid(), "summary": "  ",
		"output":   map[string]any{"found": "yes", "tier": "bronze", "extra": 1},
		"evidence": []any{map[string]any{"kind": "link", "ref": "https://x"}, map[string]any{"kind": "file", "ref": "f_000"}},
	}, interpreter.CodeNotAccepted, issues...)
	agent.refused("submit", map[string]any{"token": c.Token, "requestId": rid(), "summary": "s", "output": map[string]any{"found": true, "tier": "gold"}, "evidence": evidenceFor(agent, []string{"file"}), "next": "review", "reason": "r"},
		interpreter.CodeNotAccepted, "next: not allowed, this step has one next", "reason: not allowed, this step has one next")
	// get_run asks the run, which first takes every signal sent before:
	// the issues were noted while the lease held.
	if got := getRun(agent, v.Run.ID); got.StepState("gather") != "claimed" || got.Data.Steps["gather"] != nil {
		t.Fatalf("a refused submission changed the run: %s", got.StepStates())
	}
	c2 := claimAfterLease(other, v.Run.ID, "gather", c.ExpiresAt)
	if c2.Handoff == nil || len(c2.Handoff.Issues) == 0 {
		t.Fatalf("claim after a refused submission and an expired lease: handoff %+v, want issues", c2.Handoff)
	}
	if got := c2.Handoff.Issues; got[0] != "next: not allowed, this step has one next" {
		t.Fatalf("handoff.issues = %q, want the last refusal's", got)
	}
	other.ok("submit", goodGather(other, c2.Token), nil)
}

// §3.3, §3.4: escalate loses the claim and opens an operator work item;
// the operator returns it (handoff.returned on the next claim), completes
// it in the agent's place, or fails the run.
func TestSection3_3_Escalation(t *testing.T) {
	b := start(t, options{})
	b.publish(agentLoopSrc)
	agent := b.connect(agentID)
	ops := b.connect(operatorID)
	mira := b.connect(personID("mira@example.com", "reviewers"))
	begin := func() (view, interpreter.ClaimWire) {
		var v view
		mira.ok("start_run", map[string]any{"process": "agent-loop", "inputs": map[string]any{}, "requestId": rid()}, &v)
		return v, claimStep(agent, v.Run.ID, "gather")
	}
	escalate := func(v view, c interpreter.ClaimWire) (view, *interpreter.WorkItem) {
		t.Helper()
		agent.ok("escalate", map[string]any{"token": c.Token, "note": "The registry is down.", "requestId": rid()}, &v)
		w := itemFor(v, "gather")
		if v.StepState("gather") != "waiting" || w == nil || w.Escalation == nil || w.Escalation.Note != "The registry is down." || w.Escalation.By != agentID.ID {
			t.Fatalf("after escalate: %s, item %+v", v.StepStates(), w)
		}
		if got := w.Decide.Decisions; len(got) != 3 || got[0] != "returned" || got[1] != "completed" || got[2] != "failed" {
			t.Fatalf("escalation decisions = %q", got)
		}
		agent.refused("submit", goodGather(agent, c.Token), interpreter.CodeStale)
		if items := personWork(ops, v.Run.ID); len(items) != 1 || items[0].WorkItem.ID != w.ID {
			t.Fatalf("operator get_work = %+v", items)
		}
		if items := agentWork(agent, v.Run.ID); len(items) != 0 {
			t.Fatalf("an escalated step is claimable: %+v", items)
		}
		return v, w
	}

	t.Run("returned", func(t *testing.T) {
		v, c := begin()
		v, w := escalate(v, c)
		mira.refused("decide", decideArgs(v, w, "returned", map[string]any{"note": "Try again."}), interpreter.CodeForbidden)
		ops.ok("decide", decideArgs(v, w, "returned", map[string]any{"note": "Use the mirror."}), &v)
		if v.StepState("gather") != "ready" || itemFor(v, "gather") != nil {
			t.Fatalf("after returned: %s", v.StepStates())
		}
		items := agentWork(agent, v.Run.ID)
		if len(items) != 1 || items[0].Handoff == nil || items[0].Handoff.Returned == nil || items[0].Handoff.Returned.Note != "Use the mirror." {
			t.Fatalf("get_work after returned = %+v", items)
		}
		c2 := claimStep(agent, v.Run.ID, "gather")
		if h := c2.Handoff; h == nil || h.Returned == nil || h.Returned.Note != "Use the mirror." || h.Returned.By != operatorID.ID {
			t.Fatalf("claim after returned: handoff %+v", h)
		}
		agent.ok("submit", goodGather(agent, c2.Token), &v)
		if v.StepState("review") != "waiting" {
			t.Fatalf("after submit: %s", v.StepStates())
		}
	})
	t.Run("completed", func(t *testing.T) {
		v, c := begin()
		v, w := escalate(v, c)
		ops.refused("decide", decideArgs(v, w, "completed", map[string]any{"output": map[string]any{"found": true}}), interpreter.CodeNotAccepted,
			"output.tier: missing", "evidence: file required")
		ops.ok("decide", decideArgs(v, w, "completed", map[string]any{
			"output": map[string]any{"found": false, "tier": "silver"}, "evidence": evidenceFor(ops, []string{"file"}),
		}), &v)
		if v.StepState("gather") != "done" || v.Data.Steps["gather"].By != operatorID.ID || v.StepState("review") != "waiting" {
			t.Fatalf("after completed: %s by %s", v.StepStates(), v.Data.Steps["gather"].By)
		}
	})
	t.Run("failed", func(t *testing.T) {
		v, c := begin()
		v, w := escalate(v, c)
		ops.ok("decide", decideArgs(v, w, "failed", map[string]any{"note": "The vendor is gone."}), &v)
		if v.Run.State != "ended" || v.Run.Outcome == nil || *v.Run.Outcome != "failed" || v.StepState("gather") != "failed" {
			t.Fatalf("after failed: %+v %s", v.Run, v.StepStates())
		}
		if e := v.Run.Ended; e == nil || e.By != operatorID.ID || e.Note == nil || *e.Note != "The vendor is gone." {
			t.Fatalf("ended = %+v", v.Run.Ended)
		}
		if d := v.Data.Steps["gather"]; d.Decision != "failed" || d.Note == nil || *d.Note != "The vendor is gone." {
			t.Fatalf("run data for the failed step = %+v", d.Record)
		}
	})
}
