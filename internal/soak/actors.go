package soak

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/baton-run/baton/internal/drive"
	"github.com/baton-run/baton/interpreter"
)

// The people of the mix beside each client's own agents.
var (
	starter  = drive.Who{ID: "starter@example.com", Kind: interpreter.ActorPerson}
	operator = drive.Who{ID: "u_ops", Kind: interpreter.ActorOperator, Groups: []string{interpreter.DefaultOperators}}
	approver = drive.Who{ID: "approver@example.com", Kind: interpreter.ActorPerson, Groups: []string{GroupApprovers}}
)

// reviewerN is the n-th reviewer: two can race on one item.
func reviewerN(n int) drive.Who {
	return drive.Who{ID: fmt.Sprintf("reviewer%d@example.com", n), Kind: interpreter.ActorPerson, Groups: []string{GroupReviewers}}
}

// view is a run view as the tools answer it.
type view = interpreter.View

// refusal returns err's refusal code, or "".
func refusal(err error) interpreter.Code {
	var e *interpreter.Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

// actor is one client working runs: the calls of the mix, each a write
// with a fresh requestId retried as the specification says.
type actor struct {
	c      *Client
	agent  drive.Who // this client's agent
	agent2 drive.Who // a second agent, who takes over an abandoned claim
	runs   *runBook
	// current is the run the running script started, "" before it has.
	current string
}

func (a *actor) start(ctx context.Context, process string, inputs map[string]any) (*view, error) {
	if inputs == nil {
		inputs = map[string]any{}
	}
	var v view
	args := map[string]any{"process": process, "inputs": inputs, "requestId": drive.RequestID()}
	if err := a.c.Call(ctx, starter, "start_run", args, "", &v); err != nil {
		return nil, err
	}
	return &v, nil
}

func (a *actor) getRun(ctx context.Context, runID string) (*view, error) {
	var v view
	return &v, a.c.Call(ctx, operator, "get_run", map[string]any{"runId": runID}, runID, &v)
}

func (a *actor) claim(ctx context.Context, who drive.Who, runID, step string) (*interpreter.ClaimWire, error) {
	var cw interpreter.ClaimWire
	args := map[string]any{"runId": runID, "stepId": step, "requestId": drive.RequestID()}
	if err := a.c.Call(ctx, who, "claim", args, runID, &cw); err != nil {
		return nil, err
	}
	a.runs.token(runID, cw.Token)
	return &cw, nil
}

func (a *actor) renew(ctx context.Context, who drive.Who, runID, token string) (*interpreter.RenewWire, error) {
	var r interpreter.RenewWire
	args := map[string]any{"token": token, "progress": "Halfway.", "requestId": drive.RequestID()}
	if err := a.c.Call(ctx, who, "renew", args, runID, &r); err != nil {
		return nil, err
	}
	a.runs.token(runID, r.Token)
	return &r, nil
}

func (a *actor) submit(ctx context.Context, who drive.Who, runID, token string, output map[string]any) (*view, error) {
	var v view
	args := map[string]any{"token": token, "output": output, "summary": "Done.", "requestId": drive.RequestID()}
	return &v, a.c.Call(ctx, who, "submit", args, runID, &v)
}

func (a *actor) escalate(ctx context.Context, who drive.Who, runID, token string) (*view, error) {
	var v view
	args := map[string]any{"token": token, "note": "Blocked; please look.", "requestId": drive.RequestID()}
	return &v, a.c.Call(ctx, who, "escalate", args, runID, &v)
}

// decide decides item as who; extra adds arguments (note, output).
func (a *actor) decide(ctx context.Context, who drive.Who, runID string, item interpreter.WorkItem, decision string, extra map[string]any) (*view, error) {
	args := map[string]any{"runId": runID, "workItemId": item.ID, "snapshot": item.Snapshot, "decision": decision, "requestId": drive.RequestID()}
	for k, v := range extra {
		args[k] = v
	}
	var v view
	return &v, a.c.Call(ctx, who, "decide", args, runID, &v)
}

func (a *actor) sendEvent(ctx context.Context, runID, name string) error {
	args := map[string]any{"runId": runID, "name": name, "data": map[string]any{"amount": 10}, "requestId": drive.RequestID()}
	return a.c.Call(ctx, operator, "send_event", args, runID, nil)
}

func (a *actor) cancel(ctx context.Context, runID string) (*view, error) {
	var v view
	args := map[string]any{"runId": runID, "reason": "Not needed any more.", "requestId": drive.RequestID()}
	return &v, a.c.Call(ctx, operator, "cancel", args, runID, &v)
}

// callTool calls server tool with the call's nonce; out receives the
// call_tool result.
func (a *actor) callTool(ctx context.Context, who drive.Who, runID, token, tool, call string) (*toolResult, error) {
	args := map[string]any{"token": token, "tool": ToolServerName + "/" + tool, "arguments": map[string]any{"call": call}, "requestId": drive.RequestID()}
	var r toolResult
	return &r, a.c.Call(ctx, who, "call_tool", args, runID, &r)
}

// toolResult is call_tool's answer, the fields the mix reads.
type toolResult struct {
	Status     string  `json:"status"`
	WorkItemID *string `json:"workItemId"`
}

// untilReady reads the run until step is ready to claim (a lease ended,
// a decision made it ready again), for up to two minutes.
func (a *actor) untilReady(ctx context.Context, runID, step string) (*view, error) {
	deadline := time.Now().Add(2 * time.Minute)
	for {
		v, err := a.getRun(ctx, runID)
		if err != nil {
			return nil, err
		}
		if v.StepState(step) == "ready" {
			return v, nil
		}
		if v.Run.State != string(interpreter.RunActive) && v.Run.State != string(interpreter.RunWaiting) || time.Now().After(deadline) {
			return v, fmt.Errorf("run %s: step %s is %s (run %s), not ready", runID, step, v.StepState(step), v.Run.State)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// claimHeld is an agent's claim of a run's step, claimed again as an
// agent would when its lease ended.
type claimHeld struct {
	a           *actor
	who         drive.Who
	runID, step string
	token       string
}

// claim claims the step, waiting until it is ready again while someone
// else holds it.
func (h *claimHeld) claim(ctx context.Context) error {
	for try := 0; ; try++ {
		c, err := h.a.claim(ctx, h.who, h.runID, h.step)
		if refusal(err) == interpreter.CodeConflict && try < 10 {
			if _, err := h.a.untilReady(ctx, h.runID, h.step); err != nil {
				return err
			}
			continue
		}
		if err != nil {
			return err
		}
		h.token = c.Token
		return nil
	}
}

// work does an agent step as an agent would: claim it, submit output,
// and, when the lease ended meanwhile (the deployment was slow or a process
// died), claim it again once it is ready and submit again.
func (a *actor) work(ctx context.Context, who drive.Who, runID, step string, output map[string]any) (*view, error) {
	h := &claimHeld{a: a, who: who, runID: runID, step: step}
	for try := 0; ; try++ {
		if err := h.claim(ctx); err != nil {
			return nil, err
		}
		v, err := a.submit(ctx, who, runID, h.token, output)
		if refusal(err) == interpreter.CodeStale && try < 10 {
			continue
		}
		return v, err
	}
}

// decideOpen decides the open item on step as who, reading the run again
// when the snapshot went stale under it.
func (a *actor) decideOpen(ctx context.Context, who drive.Who, runID, step, decision string, extra map[string]any) (*view, error) {
	for try := 0; ; try++ {
		v, err := a.getRun(ctx, runID)
		if err != nil {
			return nil, err
		}
		item := itemOn(v, step)
		if item == nil {
			return v, fmt.Errorf("run %s has no open item on %s: %s", runID, step, v.StepStates())
		}
		v, err = a.decide(ctx, who, runID, *item, decision, extra)
		if refusal(err) == interpreter.CodeStale && try < 10 {
			continue
		}
		return v, err
	}
}

// itemOn is the open work item on step, or nil.
func itemOn(v *view, step string) *interpreter.WorkItem {
	for _, w := range v.WorkItems {
		if w.StepID == step {
			return &w
		}
	}
	return nil
}
