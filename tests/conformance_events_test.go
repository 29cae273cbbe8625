package tests

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/baton-run/baton/internal/testing/drivetest"
	"github.com/baton-run/baton/interpreter"
)

// until polls get_run until ok says the view is what the test waits for.
func until(t *testing.T, u *user, runID string, limit time.Duration, ok func(view) bool) view {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		v := getRun(u, runID)
		if ok(v) {
			return v
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %s the run is %s: %s", limit, v.Run.State, v.StepStates())
		}
		time.Sleep(time.Second)
	}
}

const waitForTimeoutSrc = `---
name: wait-timeout
description: Waits a minute for a settlement event, then chases it.
steps:
  - id: settle
    wait_for: settled
    timeout: 1m
    on_timeout: chase
    next: done
  - id: chase
    agent: Chase the settlement.
    next: done
  - id: done
    finish: ok
---
`

// §2.2, §3.6: a wait_for whose timeout passes continues at on_timeout,
// recorded by the server with no output.
func TestSection3_6_WaitForTimeoutToOnTimeout(t *testing.T) {
	t.Parallel()
	b := start(t, options{})
	agent := b.connect(agentID)
	v := startSrc(t, b, b.connect(personID("mira@example.com")), waitForTimeoutSrc, nil)
	if v.StepState("settle") != "waiting" || v.Run.State != "waiting" {
		t.Fatalf("at start: %s %s", v.Run.State, v.StepStates())
	}
	v = until(t, agent, v.Run.ID, 2*time.Minute, func(v view) bool { return v.StepState("settle") == "done" })
	if v.StepState("chase") != "ready" || v.Run.State != "active" {
		t.Fatalf("after the timeout: %s %s", v.Run.State, v.StepStates())
	}
	d := v.Data.Steps["settle"]
	if d.By != "server" || d.At == "" || d.Output != nil {
		t.Fatalf("the timed-out wait recorded %+v, want by server and no output", d.Record)
	}
	if items := agentWork(agent, v.Run.ID); len(items) != 1 || items[0].StepID != "chase" {
		t.Fatalf("get_work after the timeout = %+v", items)
	}
}

const waitSrc = `---
name: wait-a-minute
description: Waits a minute, then an agent acts.
steps:
  - id: pause
    wait: 1m
  - id: work
    agent: Do it.
  - id: done
    finish: ok
---
`

const dueSrc = `---
name: due-in-a-minute
description: An agent step due in a minute.
steps:
  - id: work
    agent: Do it.
    due: 1m
  - id: done
    finish: ok
---
`

// §2.2, §2.4: a wait of 1m continues after a minute (by server); a due of
// 1m marks the step overdue after a minute and leaves the work open. The
// two runs wait the same minute.
func TestSection3_5_WaitAndDue(t *testing.T) {
	t.Parallel()
	b := start(t, options{})
	agent := b.connect(agentID)
	mira := b.connect(personID("mira@example.com"))
	waiting := startSrc(t, b, mira, waitSrc, nil)
	due := startSrc(t, b, mira, dueSrc, nil)
	if waiting.StepState("pause") != "waiting" || waiting.Run.State != "waiting" {
		t.Fatalf("at start: %s", waiting.StepStates())
	}
	if items := agentWork(agent, waiting.Run.ID); len(items) != 0 {
		t.Fatalf("work listed during a wait: %+v", items)
	}
	items := agentWork(agent, due.Run.ID)
	if len(items) != 1 || items[0].Due == nil || items[0].Overdue {
		t.Fatalf("get_work for the due step = %+v", items)
	}
	v := until(t, agent, due.Run.ID, 2*time.Minute, func(v view) bool {
		for _, s := range v.Steps {
			if s.ID == "work" && s.Overdue != nil && *s.Overdue {
				return true
			}
		}
		return false
	})
	if v.StepState("work") != "ready" {
		t.Fatalf("an overdue step is %s; the work stays open", v.StepState("work"))
	}
	if items = agentWork(agent, due.Run.ID); len(items) != 1 || !items[0].Overdue {
		t.Fatalf("get_work after the due time = %+v, want overdue", items)
	}
	c := claimStep(agent, due.Run.ID, "work")
	agent.ok("submit", map[string]any{"token": c.Token, "output": map[string]any{}, "summary": "Late but done.", "requestId": rid()}, &v)
	drivetest.WantEndedAtFinish(t, parseFor(t, []byte(dueSrc)), &v)

	v = until(t, agent, waiting.Run.ID, time.Minute, func(v view) bool { return v.StepState("work") == "ready" })
	if d := v.Data.Steps["pause"]; d.By != "server" || v.StepState("pause") != "done" {
		t.Fatalf("the wait recorded %+v, want by server", d.Record)
	}
}

const heldEventsSrc = `---
name: held-events
description: Two waits for the same event after an agent step.
steps:
  - id: prepare
    agent: Prepare.
  - id: first
    wait_for: paid
  - id: second
    wait_for: paid
  - id: third
    wait_for: paid
  - id: done
    finish: ok
---
`

// §3.6: events that arrive before their wait are held and consumed oldest
// first, one per wait; without data the output is {}; an event no wait
// ever takes is held and discarded at the end; people cannot send events.
func TestSection3_6_HeldEventsOldestFirst(t *testing.T) {
	b := start(t, options{})
	agent := b.connect(agentID)
	ops := b.connect(operatorID)
	mira := b.connect(personID("mira@example.com"))
	v := startSrc(t, b, mira, heldEventsSrc, nil)
	send := func(u *user, name string, data map[string]any) *string {
		t.Helper()
		args := map[string]any{"runId": v.Run.ID, "name": name, "requestId": rid()}
		if data != nil {
			args["data"] = data
		}
		var res struct {
			ConsumedBy *string `json:"consumedBy"`
		}
		u.ok("send_event", args, &res)
		return res.ConsumedBy
	}
	mira.refused("send_event", map[string]any{"runId": v.Run.ID, "name": "paid", "requestId": rid()}, interpreter.CodeForbidden)
	for i, u := range []*user{agent, ops} {
		if by := send(u, "paid", map[string]any{"n": i + 1}); by != nil {
			t.Fatalf("an event before its wait was consumed by %s", *by)
		}
	}
	if by := send(agent, "never-awaited", nil); by != nil {
		t.Fatalf("an event with no wait was consumed by %s", *by)
	}
	c := claimStep(agent, v.Run.ID, "prepare")
	agent.ok("submit", map[string]any{"token": c.Token, "output": map[string]any{}, "summary": "Ready.", "requestId": rid()}, &v)
	if v.StepState("first") != "done" || v.StepState("second") != "done" || v.StepState("third") != "waiting" {
		t.Fatalf("after the held events: %s", v.StepStates())
	}
	first, second := v.Data.Steps["first"], v.Data.Steps["second"]
	if first.Output["n"] != json.Number("1") || first.By != agentID.ID || second.Output["n"] != json.Number("2") || second.By != operatorID.ID {
		t.Fatalf("held events consumed out of order: first %+v, second %+v", first.Record, second.Record)
	}
	if by := send(agent, "paid", nil); by == nil || *by != "third" {
		t.Fatalf("the event for a waiting step: consumedBy %v", by)
	}
	v = getRun(agent, v.Run.ID)
	if out := v.Data.Steps["third"].Output; out == nil || len(out) != 0 {
		t.Fatalf("an event without data recorded output %v, want {}", out)
	}
	drivetest.WantEndedAtFinish(t, parseFor(t, []byte(heldEventsSrc)), &v)
	agent.refused("send_event", map[string]any{"runId": v.Run.ID, "name": "never-awaited", "requestId": rid()}, interpreter.CodeConflict, "run_ended")
}

const waitUntilSrc = `---
name: wait-until
description: Waits until a given time, then an agent acts.
inputs:
  at: { type: datetime, optional: true }
steps:
  - id: hold
    wait_until: inputs.at
  - id: act
    agent: Act.
  - id: done
    finish: ok
---
`

// §2.2, §3.5: a wait_until in the past continues at once; on a missing
// value it fails the step and the run, by the server, at start_run.
func TestSection3_5_WaitUntil(t *testing.T) {
	b := start(t, options{})
	b.publish(waitUntilSrc)
	mira := b.connect(personID("mira@example.com"))
	var v view
	mira.ok("start_run", map[string]any{"process": "wait-until", "inputs": map[string]any{"at": "2020-02-29T23:59:59-05:00"}, "requestId": rid()}, &v)
	if v.StepState("hold") != "done" || v.StepState("act") != "ready" || v.Data.Steps["hold"].By != "server" {
		t.Fatalf("a past wait_until: %s", v.StepStates())
	}
	mira.ok("start_run", map[string]any{"process": "wait-until", "inputs": map[string]any{}, "requestId": rid()}, &v)
	if v.Run.State != "ended" || v.Run.Outcome == nil || *v.Run.Outcome != "failed" || v.StepState("hold") != "failed" || v.StepState("act") != "null" {
		t.Fatalf("a wait_until on a missing value: %+v %s", v.Run, v.StepStates())
	}
	d := v.Data.Steps["hold"]
	if d.Decision != "failed" || d.By != "server" || d.Note == nil || *d.Note == "" {
		t.Fatalf("the failed wait recorded %+v", d.Record)
	}
	if e := v.Run.Ended; e == nil || e.By != "server" || e.Note == nil || *e.Note != *d.Note {
		t.Fatalf("ended = %+v", v.Run.Ended)
	}
}

const endingSrc = `---
name: ending
description: An agent step, an event wait and an approval, for ending runs.
steps:
  - id: work
    agent: Work.
  - id: review
    person: reviewers
    approve: Approve.
  - id: done
    finish: ok
---
`

// §3.5: an operator cancels with a reason; the view shows cancelled with
// ended.note; every later write is conflict run_ended, checked before
// anything else; a replay still returns the original.
func TestSection3_5_CancelAndEveryWriteAfterTheEnd(t *testing.T) {
	b := start(t, options{})
	agent := b.connect(agentID)
	ops := b.connect(operatorID)
	rita := b.connect(personID("rita@example.com", "reviewers"))
	v := startSrc(t, b, rita, endingSrc, nil)
	runID := v.Run.ID
	claimArgs := map[string]any{"runId": runID, "stepId": "work", "requestId": rid()}
	var c interpreter.ClaimWire
	agent.ok("claim", claimArgs, &c)
	agent.refused("cancel", map[string]any{"runId": runID, "reason": "No.", "requestId": rid()}, interpreter.CodeForbidden)
	rita.refused("cancel", map[string]any{"runId": runID, "reason": "No.", "requestId": rid()}, interpreter.CodeForbidden)
	ops.ok("cancel", map[string]any{"runId": runID, "reason": "Opened by mistake.", "requestId": rid()}, &v)
	if v.Run.State != "cancelled" || v.Run.Outcome != nil || v.Run.Ended == nil || v.Run.Ended.By != operatorID.ID || v.Run.Ended.Note == nil || *v.Run.Ended.Note != "Opened by mistake." {
		t.Fatalf("after cancel: %+v", v.Run)
	}
	if v.StepState("work") != "cancelled" || v.StepState("review") != "null" || len(v.WorkItems) != 0 {
		t.Fatalf("steps after cancel: %s", v.StepStates())
	}
	if items := agentWork(agent, runID); len(items) != 0 {
		t.Fatalf("work listed on a cancelled run: %+v", items)
	}
	ended := []string{"run_ended"}
	agent.refused("claim", map[string]any{"runId": runID, "stepId": "work", "requestId": rid()}, interpreter.CodeConflict, ended...)
	agent.refused("claim", map[string]any{"runId": runID, "stepId": "nowhere", "requestId": rid()}, interpreter.CodeConflict, ended...)
	agent.refused("renew", map[string]any{"token": c.Token, "requestId": rid()}, interpreter.CodeConflict, ended...)
	agent.refused("submit", map[string]any{"token": c.Token, "output": map[string]any{"x": 1}, "summary": "", "requestId": rid()}, interpreter.CodeConflict, ended...)
	agent.refused("escalate", map[string]any{"token": c.Token, "note": "n", "requestId": rid()}, interpreter.CodeConflict, ended...)
	rita.refused("decide", map[string]any{"runId": runID, "workItemId": "w_1", "snapshot": "s", "decision": "approved", "requestId": rid()}, interpreter.CodeConflict, ended...)
	agent.refused("send_event", map[string]any{"runId": runID, "name": "paid", "requestId": rid()}, interpreter.CodeConflict, ended...)
	ops.refused("cancel", map[string]any{"runId": runID, "reason": "Again.", "requestId": rid()}, interpreter.CodeConflict, ended...)
	var again interpreter.ClaimWire
	agent.ok("claim", claimArgs, &again)
	if again.Token != c.Token || again.ExpiresAt != c.ExpiresAt {
		t.Fatal("a claim replayed after the end did not return the original")
	}
	var runs struct {
		Items []struct {
			State string `json:"state"`
		} `json:"items"`
	}
	agent.ok("list_runs", map[string]any{"state": "cancelled"}, &runs)
	if len(runs.Items) != 1 {
		t.Fatalf("list_runs state=cancelled: %+v", runs)
	}
}

// §3.5: cancelling the run's workflow in Temporal shows as a cancelled run
// over MCP, and writes are refused as run_ended.
func TestSection3_5_TemporalCancellation(t *testing.T) {
	b := start(t, options{})
	agent := b.connect(agentID)
	rita := b.connect(personID("rita@example.com", "reviewers"))
	v := startSrc(t, b, rita, endingSrc, nil)
	if err := b.temporal.CancelWorkflow(context.Background(), v.Run.ID, ""); err != nil {
		t.Fatal(err)
	}
	v = until(t, agent, v.Run.ID, 30*time.Second, func(v view) bool { return v.Run.State == "cancelled" })
	if v.Run.Ended == nil || v.StepState("work") != "cancelled" || len(v.WorkItems) != 0 {
		t.Fatalf("after a Temporal cancellation: %+v %s", v.Run, v.StepStates())
	}
	agent.refused("claim", map[string]any{"runId": v.Run.ID, "stepId": "work", "requestId": rid()}, interpreter.CodeConflict, "run_ended")
}

const reworkSrc = `---
name: rework
description: Draft, polish, review with rework, then a final sign-off without rework.
steps:
  - id: draft
    agent: Draft it.
    output: { text: string }
  - id: polish
    agent: Polish it.
    output: { text: string }
  - id: review
    person: reviewers
    approve: Approve the text.
    on_reject: draft
  - id: sign
    person: signers
    approve: Sign off.
  - id: done
    finish: published
---
`

// §3.1–3.2: a rejection into on_reject moves later completions to history,
// makes them null, keeps the rejecting approval's note current, and starts
// the returned-to step afresh; a rejection without on_reject ends the run
// rejected with the note.
func TestSection3_1_RejectionReworkAndEnd(t *testing.T) {
	b := start(t, options{})
	agent := b.connect(agentID)
	rita := b.connect(personID("rita@example.com", "reviewers"))
	sam := b.connect(personID("sam@example.com", "signers"))
	v := startSrc(t, b, rita, reworkSrc, nil)
	runID := v.Run.ID
	do := func(step, text string) {
		t.Helper()
		c := claimStep(agent, runID, step)
		agent.ok("submit", map[string]any{"token": c.Token, "output": map[string]any{"text": text}, "summary": "Wrote it.", "requestId": rid()}, &v)
	}
	do("draft", "v1")
	do("polish", "v1 polished")
	rita.refused("decide", decideArgs(v, itemFor(v, "review"), "rejected", nil), interpreter.CodeInvalid)
	rita.ok("decide", decideArgs(v, itemFor(v, "review"), "rejected", map[string]any{"note": "Cite the sources."}), &v)
	if v.StepState("draft") != "ready" || v.StepState("polish") != "null" || v.StepState("review") != "null" || v.Run.State != "active" {
		t.Fatalf("after the rejection: %s", v.StepStates())
	}
	for _, id := range []string{"draft", "polish"} {
		d := v.Data.Steps[id]
		if d == nil || d.Record != nil && d.By != "" || len(d.History) != 1 || d.History[0].Output["text"] == nil {
			t.Fatalf("%s after the rejection = %+v, want no current value and one history entry", id, d)
		}
	}
	r := v.Data.Steps["review"]
	if r.Decision != "rejected" || r.Note == nil || *r.Note != "Cite the sources." || r.By != "rita@example.com" {
		t.Fatalf("the rejecting approval = %+v, want its decision current", r.Record)
	}
	c := claimStep(agent, runID, "draft")
	if c.Handoff != nil || *c.Data.Steps["review"].Note != "Cite the sources." {
		t.Fatalf("the returned-to claim: handoff %+v, review %+v", c.Handoff, c.Data.Steps["review"].Record)
	}
	agent.ok("submit", map[string]any{"token": c.Token, "output": map[string]any{"text": "v2"}, "summary": "Added sources.", "requestId": rid()}, &v)
	do("polish", "v2 polished")
	rita.ok("decide", decideArgs(v, itemFor(v, "review"), "approved", nil), &v)
	r = v.Data.Steps["review"]
	if r.Decision != "approved" || len(r.History) != 1 || r.History[0].Decision != "rejected" {
		t.Fatalf("review after approval = %+v", r)
	}
	if d := v.Data.Steps["draft"]; d.Output["text"] != "v2" || len(d.History) != 1 || d.History[0].Output["text"] != "v1" {
		t.Fatalf("draft after rework = %+v", d)
	}
	sam.ok("decide", decideArgs(v, itemFor(v, "sign"), "rejected", map[string]any{"note": "Not this quarter."}), &v)
	if v.Run.State != "ended" || v.Run.Outcome == nil || *v.Run.Outcome != "rejected" {
		t.Fatalf("a rejection without on_reject: %+v", v.Run)
	}
	if e := v.Run.Ended; e == nil || e.By != "sam@example.com" || e.Note == nil || *e.Note != "Not this quarter." {
		t.Fatalf("ended = %+v, want the rejection note", v.Run.Ended)
	}
}
