package tests

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"

	"github.com/baton-run/baton/gateway"
	"github.com/baton-run/baton/interpreter"
)

// cappedEventsSrc waits for "paid" only after an agent step: every "paid"
// sent before that is held.
const cappedEventsSrc = `---
name: held-events
description: Holds payment events until its work is done.
steps:
  - id: work
    agent: Do the work.
  - id: wait_paid
    wait_for: paid
  - id: done
    finish: ok
---
`

// plainSubmit returns submit arguments for a claimed step that declares
// no output, evidence or next, as both of this file's processes' do.
func plainSubmit(c interpreter.ClaimWire) map[string]any {
	return map[string]any{"token": c.Token, "requestId": rid(), "output": map[string]any{}, "summary": "Did the work and checked it."}
}

// Issue 13, hole 5, as a new user tried it: send_event of 200 KiB, 22
// times, to a run not yet waiting. The run held every event until its
// state was over what Temporal carries, and from then on neither writes
// nor get_run answered. Now the event that would pass the cap is invalid
// and names it, and the run stays readable and writable to its end.
func TestHeldEventsCannotBrickARun(t *testing.T) {
	t.Parallel()
	b := start(t, options{})
	agent := b.connect(agentID)
	v := startSrc(t, b, b.connect(personID("mira@example.com")), cappedEventsSrc, nil)
	runID := v.Run.ID

	data := map[string]any{"blob": strings.Repeat("x", 200<<10)}
	bytesIssue := fmt.Sprintf("data: over %d bytes with the run data and held events", interpreter.DefaultRunDataBytes)
	for i := range 22 {
		args := map[string]any{"runId": runID, "name": "paid", "data": data, "requestId": rid()}
		if i == 0 {
			var res struct{ ConsumedBy *string }
			agent.ok("send_event", args, &res)
			if res.ConsumedBy != nil {
				t.Fatalf("the first event was consumed by %s", *res.ConsumedBy)
			}
			continue
		}
		e := agent.refused("send_event", args, interpreter.CodeInvalid, bytesIssue)
		if !strings.Contains(e.Message, "limits.runDataBytes") {
			t.Fatalf("event %d: message %q does not name the limit", i+1, e.Message)
		}
	}
	if got := getRun(agent, runID); got.Run.State != "active" || got.StepState("work") != "ready" {
		t.Fatalf("after the refused events the run is %s: %s", got.Run.State, got.StepStates())
	}

	// Events without data take no room, but a run holds at most
	// MaxHeldEvents of them.
	for range interpreter.MaxHeldEvents - 1 {
		agent.ok("send_event", map[string]any{"runId": runID, "name": "later", "requestId": rid()}, nil)
	}
	agent.refused("send_event", map[string]any{"runId": runID, "name": "paid", "requestId": rid()},
		interpreter.CodeInvalid, fmt.Sprintf("held events: over %d", interpreter.MaxHeldEvents))

	// Still writable: the work is done, its wait consumes the first event
	// held, and the run ends.
	c := claimStep(agent, runID, "work")
	agent.ok("submit", plainSubmit(c), &v)
	if v.Run.State != "ended" || v.Run.Outcome == nil || *v.Run.Outcome != "ok" {
		t.Fatalf("after the work the run is %s: %s", v.Run.State, v.StepStates())
	}
	if got := v.Data.Steps["wait_paid"].Output["blob"]; got != data["blob"] {
		t.Fatalf("wait_paid recorded %.40v…", got)
	}
	if got := getRun(agent, runID); got.Run.State != "ended" {
		t.Fatalf("get_run after the end: %s", got.Run.State)
	}
}

// largestLoop is a process of gateway.MaxProcessBytes whose one agent
// step an agent escalates and an operator returns, as often as they like.
// Half its text is the step's instructions, which a run carries twice
// (parsed and as canonical frontmatter), half its body, which every view
// and claim carries; both are HTML, each <, > and & six bytes in
// encoding/json's default escaping.
func largestLoop(t *testing.T) string {
	line := "<p>a &amp; b</p>" // 9 of 16 bytes escaped by default
	head := "---\nname: html-loop\ndescription: Works on a page, handing it back and forth.\ninputs:\n  page: string\nsteps:\n  - id: edit\n    agent: |\n"
	tail := "  - id: done\n    finish: ok\n---\n"
	room := gateway.MaxProcessBytes - len(head) - len(tail)
	var b strings.Builder
	b.WriteString(head)
	for b.Len()+len(line)+7 < len(head)+room/2 {
		b.WriteString("      " + line + "\n")
	}
	b.WriteString(tail)
	for b.Len()+len(line)+1 <= gateway.MaxProcessBytes {
		b.WriteString(line + "\n")
	}
	if b.Len() > gateway.MaxProcessBytes || b.Len() < gateway.MaxProcessBytes-100 {
		t.Fatalf("the process is %d bytes", b.Len())
	}
	return b.String()
}

// The largest run there is: the largest process, run data near the cap,
// all of it HTML, written to until Temporal asks it to continue as new
// (each round three answers carry the run data, the body or both). It then
// continues: readable, writable and to its end. Before, the answers it
// carried through continue-as-new and its state, escaped, made an input
// Temporal refuses, and the run stopped answering.
func TestLargestRunContinuesAsNew(t *testing.T) {
	t.Parallel()
	b := start(t, options{})
	agent := b.connect(agentID)
	ops := b.connect(operatorID)
	page := strings.Repeat("<p>a &amp; b</p>", (200<<10)/16) // 200 KiB
	v := startSrc(t, b, b.connect(personID("mira@example.com")), largestLoop(t), map[string]any{"page": page})
	runID := v.Run.ID
	ctx := context.Background()
	first, err := b.temporal.DescribeWorkflowExecution(ctx, runID, "")
	if err != nil {
		t.Fatal(err)
	}
	firstRun := first.WorkflowExecutionInfo.Execution.RunId

	continued := false
	for round := 0; round < 40 && !continued; round++ {
		c := claimStep(agent, runID, "edit")
		if c.Data.Inputs["page"] != page {
			t.Fatalf("round %d: the claim's data lost the page", round)
		}
		agent.ok("escalate", map[string]any{"token": c.Token, "note": "Please look.", "requestId": rid()}, &v)
		w := itemFor(v, "edit")
		if w == nil {
			t.Fatalf("round %d: no escalation: %s", round, v.StepStates())
		}
		ops.ok("decide", decideArgs(v, w, "returned", map[string]any{"note": "Go on."}), &v)
		d, err := b.temporal.DescribeWorkflowExecution(ctx, runID, "")
		if err != nil {
			t.Fatal(err)
		}
		if now := d.WorkflowExecutionInfo.Execution.RunId; now != firstRun {
			continued = true
			// The input that carried the run over is well under the 2 MiB
			// Temporal takes.
			it := b.temporal.GetWorkflowHistory(ctx, runID, now, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
			ev, err := it.Next()
			if err != nil {
				t.Fatal(err)
			}
			size := ev.GetWorkflowExecutionStartedEventAttributes().GetInput().Size()
			t.Logf("continued as new after %d rounds with an input of %d bytes", round+1, size)
			if size > 3<<19 {
				t.Errorf("the continue-as-new input is %d bytes", size)
			}
		}
	}
	if !continued {
		t.Fatal("the run never continued as new")
	}
	if got := getRun(agent, runID); got.Run.State != "active" || got.Data.Inputs["page"] != page {
		t.Fatalf("after continue-as-new the run is %s: %s", got.Run.State, got.StepStates())
	}
	c := claimStep(agent, runID, "edit")
	agent.ok("submit", plainSubmit(c), &v)
	if v.Run.State != "ended" {
		t.Fatalf("the run is %s: %s", v.Run.State, v.StepStates())
	}
}

// refusalLease is the lease of TestRefusalWithManyIssuesIsBounded: a
// refusal of 20000 issues takes seconds on a loaded machine, and must land
// inside the lease it is noted on.
const refusalLease = 20 * time.Second

// A submission with thousands of problems is refused with a bounded list
// of issues, and the next attempt's handoff carries that bounded list.
func TestRefusalWithManyIssuesIsBounded(t *testing.T) {
	t.Parallel()
	b := start(t, options{lease: refusalLease})
	agent := b.connect(agentID)
	v := startSrc(t, b, b.connect(personID("mira@example.com")), cappedEventsSrc, nil)
	c := claimStep(agent, v.Run.ID, "work")
	args := plainSubmit(c)
	out := map[string]any{}
	for i := range 20000 {
		out[fmt.Sprintf("undeclared_%05d", i)] = 1
	}
	args["output"] = out
	e := agent.refused("submit", args, interpreter.CodeNotAccepted)
	last := e.Issues[len(e.Issues)-1]
	if len(e.Issues) != interpreter.MaxIssues || len(e.Message) > interpreter.MaxMessageBytes ||
		!strings.HasPrefix(last, "issues: ") || !strings.HasSuffix(last, " more not shown") {
		t.Fatalf("%d issues, message of %d bytes, last issue %q", len(e.Issues), len(e.Message), last)
	}
	// The claim stands, and the run took the issues while it held: get_run
	// asks the run, which first takes every signal sent before. When the
	// lease ends, the next claim reads the issues in its handoff.
	if got := getRun(agent, v.Run.ID); got.StepState("work") != "claimed" {
		t.Fatalf("after the refusal the step is %s, want claimed (a refusal slower than the %s lease proves nothing here)", got.StepState("work"), refusalLease)
	}
	next := claimAfterLease(agent, v.Run.ID, "work", c.ExpiresAt)
	if next.Handoff == nil || len(next.Handoff.Issues) != interpreter.MaxIssues {
		t.Fatalf("handoff %+v", next.Handoff)
	}
}
