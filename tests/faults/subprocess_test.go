package faults

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"

	"github.com/baton-run/baton/internal/drive"
	"github.com/baton-run/baton/internal/testing/spectest"
	"github.com/baton-run/baton/interpreter"
	"github.com/baton-run/baton/workflows"
)

// fanoutChildren is how many children the fan-out under faults starts.
const fanoutChildren = 200

// kill -9 both workers while a for_each of 200 children starts and joins
// (examples/bench-fanout: the child is one finish step): every child is
// started once and ends once, none is lost, and the parent joins once,
// in item order, and goes on to its next step.
func TestKillWorkersDuringFanOut(t *testing.T) {
	for _, name := range []string{"bench-child", "bench-fanout"} { // the child first
		if err := dep.publish(filepath.Join("..", "..", "examples", "bench-fanout", name), name, org); err != nil {
			t.Fatal(err)
		}
	}
	seen := map[string][2]int{}
	for _, p := range dep.procs() {
		seen[p.Name] = [2]int{len(p.Panics()), len(p.UnexpectedExits())}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	c := newRetrier(dep.gatewayURLs, 0, dep.token, newJournal())
	c.observe = func(tool string, result []byte) { spectest.ValidateToolResult(t, tool, json.RawMessage(result)) }
	defer c.close()

	items := make([]any, fanoutChildren)
	for i := range items {
		items[i] = "item-" + strconv.Itoa(i)
	}
	v, err := c.Start(ctx, drive.WalkStarter, "bench-fanout", map[string]any{"items": items}, "")
	if err != nil {
		t.Fatalf("start bench-fanout: %v", err)
	}
	parent := v.Run.ID

	// The faults hit once the first children have ended and before the
	// join: children are starting, running and ending.
	for {
		fan := stepView(v, "fan")
		if fan.Children != nil && fan.Children.Ended > 0 {
			break
		}
		if fan.State != nil && *fan.State != string(interpreter.StepWaiting) {
			t.Fatalf("the process step is %s before any child was seen ending: nothing left to fault", *fan.State)
		}
		time.Sleep(20 * time.Millisecond)
		if v, err = c.GetRun(ctx, drive.WalkAgent, parent); err != nil {
			t.Fatal(err)
		}
	}
	at := stepView(v, "fan").Children
	for _, w := range dep.workers {
		w.Kill()
	}
	time.Sleep(2 * time.Second)
	injected := fmt.Sprintf("kill -9 of both workers with %d of %d children ended", at.Ended, at.Total)
	for _, w := range dep.workers {
		injected += "; " + restart(t, w)
	}
	t.Log(injected)

	for v.StepState("after") != string(interpreter.StepReady) {
		if v.Run.State == string(interpreter.RunEnded) || v.Run.State == string(interpreter.RunCancelled) {
			t.Fatalf("the parent is %s before its next step was ready: %s", v.Run.State, v.StepStates())
		}
		time.Sleep(200 * time.Millisecond)
		if v, err = c.GetRun(ctx, drive.WalkAgent, parent); err != nil {
			t.Fatal(err)
		}
	}

	// Joined once, in item order: one record, no earlier attempt, every
	// child ended done and named once.
	fan := v.Data.Steps["fan"]
	if fan == nil || fan.Record == nil || fan.By != "server" || len(fan.History) != 0 {
		t.Fatalf("the process step's record: %+v", fan)
	}
	joined, _ := fan.Output["items"].([]any)
	if len(joined) != fanoutChildren {
		t.Fatalf("the join recorded %d children, want %d", len(joined), fanoutChildren)
	}
	children := map[string]bool{}
	for i, it := range joined {
		m, _ := it.(map[string]any)
		id, _ := m["runId"].(string)
		if m["outcome"] != "done" || id == "" || children[id] {
			t.Errorf("child %d of the join: %v (a run id twice or none, or not done)", i, it)
		}
		children[id] = true
	}

	// None lost, none twice: list_runs parent and Temporal each hold the
	// children joined, every one ended; the parent started each once.
	listed := listChildren(ctx, t, c, parent)
	for id, state := range listed {
		if !children[id] {
			t.Errorf("list_runs parent %s shows run %s, which the join does not name", parent, id)
		} else if state != string(interpreter.RunEnded) {
			t.Errorf("child %s is %s, want ended", id, state)
		}
	}
	if len(listed) != len(children) {
		t.Errorf("list_runs parent %s shows %d runs, the join %d", parent, len(listed), len(children))
	}
	tc, err := client.Dial(client.Options{HostPort: dep.temporalAddr})
	if err != nil {
		t.Fatalf("dial Temporal: %v", err)
	}
	defer tc.Close()
	if n := countWorkflows(ctx, t, tc, "bench-child", fanoutChildren); n != fanoutChildren {
		t.Errorf("Temporal holds %d workflows of bench-child, want %d", n, fanoutChildren)
	}
	started, signalled := parentHistory(ctx, t, tc, parent)
	for id := range children {
		if started[id] != 1 {
			t.Errorf("the parent started child %s %d times, want once", id, started[id])
		}
	}
	// The children end by result: none signals its end.
	if len(started) != fanoutChildren || signalled != 0 {
		t.Errorf("the parent's history starts %d children and has %d %s signals, want %d and none",
			len(started), signalled, workflows.SignalChildEnded, fanoutChildren)
	}

	// And it goes on: the next step is worked and the parent ends done.
	claim, err := c.Claim(ctx, drive.WalkAgent, parent, "after")
	if err != nil {
		t.Fatal(err)
	}
	summary := "Nothing to do."
	if v, err = c.Submit(ctx, drive.WalkAgent, claim.Token, drive.Work{Output: map[string]any{}, Summary: &summary}); err != nil {
		t.Fatal(err)
	}
	if v.Run.State != string(interpreter.RunEnded) || v.Run.Outcome == nil || *v.Run.Outcome != "done" {
		t.Errorf("the parent after its last step: %s %v", v.Run.State, v.Run.Outcome)
	}
	for _, p := range dep.procs() {
		for _, line := range p.Panics()[seen[p.Name][0]:] {
			t.Errorf("%s panicked: %s", p.Name, line)
		}
		for _, e := range p.UnexpectedExits()[seen[p.Name][1]:] {
			t.Errorf("%s: %s", p.Name, e)
		}
	}
}

// stepView is a step's entry in a run view's steps.
func stepView(v *interpreter.View, id string) interpreter.StepView {
	for _, s := range v.Steps {
		if s.ID == id {
			return s
		}
	}
	return interpreter.StepView{}
}

// listChildren pages through list_runs with parent and returns each
// child's state.
func listChildren(ctx context.Context, t *testing.T, c *retrier, parent string) map[string]string {
	t.Helper()
	out := map[string]string{}
	cursor := ""
	for {
		args := map[string]any{"parent": parent, "limit": 100}
		if cursor != "" {
			args["cursor"] = cursor
		}
		var page struct {
			Items []struct {
				ID    string `json:"id"`
				State string `json:"state"`
			} `json:"items"`
			NextCursor *string `json:"nextCursor"`
		}
		if err := c.call(ctx, drive.WalkOperator, "list_runs", args, "", &page); err != nil {
			t.Fatalf("list_runs parent: %v", err)
		}
		for _, it := range page.Items {
			out[it.ID] = it.State
		}
		if page.NextCursor == nil || *page.NextCursor == "" {
			return out
		}
		cursor = *page.NextCursor
	}
}

// parentHistory reads every Temporal run of a parent's workflow (it may
// continue as new) and returns how many times it started each child
// workflow and how many child_ended signals it received.
func parentHistory(ctx context.Context, t *testing.T, tc client.Client, parent string) (started map[string]int, signalled int) {
	t.Helper()
	resp, err := tc.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Query: fmt.Sprintf("WorkflowId = %q", parent)})
	if err != nil {
		t.Fatalf("list the runs of workflow %s: %v", parent, err)
	}
	started = map[string]int{}
	for _, e := range resp.GetExecutions() {
		it := tc.GetWorkflowHistory(ctx, parent, e.GetExecution().GetRunId(), false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
		for it.HasNext() {
			ev, err := it.Next()
			if err != nil {
				t.Fatalf("history of %s: %v", parent, err)
			}
			if a := ev.GetChildWorkflowExecutionStartedEventAttributes(); a != nil {
				started[a.GetWorkflowExecution().GetWorkflowId()]++
			}
			if a := ev.GetWorkflowExecutionSignaledEventAttributes(); a != nil && a.GetSignalName() == workflows.SignalChildEnded {
				signalled++
			}
		}
	}
	return started, signalled
}
