package soak

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/baton-run/baton/interpreter"
)

// The ends a script may leave its run in.
const (
	endOK        = "ended ok"
	endCancelled = "cancelled"
	endWaiting   = "waiting"
)

// script is one kind of work of the mix: it starts a run, registers it
// with the ends it allows, and drives it.
type script struct {
	name   string
	weight int
	run    func(ctx context.Context, a *actor) error
}

// scripts are the mix: agents claim, renew, submit, escalate and let
// leases expire; people decide, race on one item and reject into rework;
// events arrive before and after their waits; tools run under every
// policy; runs are cancelled; some are left waiting on a person.
var scripts = []script{
	{"review", 3, reviewScript},
	{"rework", 2, reworkScript},
	{"race", 1, raceScript},
	{"abandon", 1, abandonScript},
	{"escalate", 1, escalateScript},
	{"cancel", 1, cancelScript},
	{"open", 1, openScript},
	{"event-before", 1, eventBeforeScript},
	{"event-after", 1, eventAfterScript},
	{"tools-approved", 2, toolsScript("approved")},
	{"tools-rejected", 1, toolsScript("rejected")},
	{"tools-cancelled", 1, toolsScript("cancelled")},
}

// pick chooses a script by weight.
func pick(r *rand.Rand) script {
	total := 0
	for _, s := range scripts {
		total += s.weight
	}
	n := r.IntN(total)
	for _, s := range scripts {
		if n < s.weight {
			return s
		}
		n -= s.weight
	}
	return scripts[0]
}

// begin starts a run of process for a script and registers it.
func (a *actor) begin(ctx context.Context, process, name string, ends ...string) (string, error) {
	v, err := a.start(ctx, process, nil)
	if err != nil {
		return "", err
	}
	a.runs.add(&scriptRun{ID: v.Run.ID, Process: process, Script: name, Ends: ends})
	a.current = v.Run.ID
	return v.Run.ID, nil
}

// ended checks the run is in the state the script reached.
func ended(v *view, state string) error {
	if v.Run.State != state {
		return fmt.Errorf("run %s is %s, want %s: %s", v.Run.ID, v.Run.State, state, v.StepStates())
	}
	return nil
}

var draft = map[string]any{"text": "A first draft."}

// review: drafted, with a renew on the way half the time, and approved.
func reviewScript(ctx context.Context, a *actor) error {
	id, err := a.begin(ctx, ProcessReview, "review", endOK)
	if err != nil {
		return err
	}
	c, err := a.claim(ctx, a.agent, id, "draft")
	if err != nil {
		return err
	}
	token := c.Token
	if rand.IntN(2) == 0 {
		r, err := a.renew(ctx, a.agent, id, token)
		if err != nil && refusal(err) != interpreter.CodeStale {
			return err
		}
		if err == nil {
			token = r.Token
		}
	}
	if _, err := a.submit(ctx, a.agent, id, token, draft); refusal(err) == interpreter.CodeStale {
		// The lease ended while the deployment was slow: as an agent
		// would, do the step again.
		if _, err := a.work(ctx, a.agent, id, "draft", draft); err != nil {
			return err
		}
	} else if err != nil {
		return err
	}
	v, err := a.decideOpen(ctx, reviewerN(1), id, "review", "approved", nil)
	if err != nil {
		return err
	}
	return ended(v, string(interpreter.RunEnded))
}

// rework: rejected back into drafting once, then approved.
func reworkScript(ctx context.Context, a *actor) error {
	id, err := a.begin(ctx, ProcessReview, "rework", endOK)
	if err != nil {
		return err
	}
	if _, err := a.work(ctx, a.agent, id, "draft", draft); err != nil {
		return err
	}
	v, err := a.decideOpen(ctx, reviewerN(1), id, "review", "rejected", map[string]any{"note": "Say more."})
	if err != nil {
		return err
	}
	if v.StepState("draft") != "ready" {
		return fmt.Errorf("run %s after the rejection: %s, want draft ready", id, v.StepStates())
	}
	if _, err := a.work(ctx, a.agent, id, "draft", map[string]any{"text": "A longer draft."}); err != nil {
		return err
	}
	v, err = a.decideOpen(ctx, reviewerN(2), id, "review", "approved", nil)
	if err != nil {
		return err
	}
	return ended(v, string(interpreter.RunEnded))
}

// race: two reviewers decide the same item with the same snapshot at
// once; exactly one decision is taken, the other is refused.
func raceScript(ctx context.Context, a *actor) error {
	id, err := a.begin(ctx, ProcessReview, "race", endOK)
	if err != nil {
		return err
	}
	v, err := a.work(ctx, a.agent, id, "draft", draft)
	if err != nil {
		return err
	}
	item := itemOn(v, "review")
	if item == nil {
		return fmt.Errorf("run %s after the draft: no review item: %s", id, v.StepStates())
	}
	other := newClient(a.c.urls, a.c.first+1, a.c.token, a.c.journal)
	defer other.Close()
	b := &actor{c: other, runs: a.runs}
	var wg sync.WaitGroup
	var errA, errB error
	var va, vb *view
	wg.Add(2)
	go func() {
		defer wg.Done()
		va, errA = a.decide(ctx, reviewerN(1), id, *item, "approved", nil)
	}()
	go func() {
		defer wg.Done()
		vb, errB = b.decide(ctx, reviewerN(2), id, *item, "rejected", map[string]any{"note": "Not this one."})
	}()
	wg.Wait()
	won := 0
	for _, err := range []error{errA, errB} {
		switch code := refusal(err); {
		case err == nil:
			won++
		case code == interpreter.CodeStale || code == interpreter.CodeConflict:
		default:
			return err
		}
	}
	if won != 1 {
		return fmt.Errorf("run %s: %d of two racing decisions were taken (%v, %v), want one", id, won, errA, errB)
	}
	if errB == nil {
		// The rejection won: rework, then approve.
		_ = vb
		if _, err := a.work(ctx, a.agent, id, "draft", draft); err != nil {
			return err
		}
		if va, err = a.decideOpen(ctx, reviewerN(1), id, "review", "approved", nil); err != nil {
			return err
		}
	}
	return ended(va, string(interpreter.RunEnded))
}

// abandon: an agent claims and walks away; once the lease ends another
// agent does the step, and the first one's token is stale.
func abandonScript(ctx context.Context, a *actor) error {
	id, err := a.begin(ctx, ProcessReview, "abandon", endOK)
	if err != nil {
		return err
	}
	c, err := a.claim(ctx, a.agent, id, "draft")
	if err != nil {
		return err
	}
	if _, err := a.untilReady(ctx, id, "draft"); err != nil {
		return err
	}
	if _, err := a.work(ctx, a.agent2, id, "draft", draft); err != nil {
		return err
	}
	if _, err := a.submit(ctx, a.agent, id, c.Token, draft); refusal(err) != interpreter.CodeStale {
		return fmt.Errorf("run %s: a submit with the abandoned claim's token answered %v, want stale", id, err)
	}
	v, err := a.decideOpen(ctx, reviewerN(1), id, "review", "approved", nil)
	if err != nil {
		return err
	}
	return ended(v, string(interpreter.RunEnded))
}

// escalate: the agent escalates; an operator returns the step, and the
// agent does it after all.
func escalateScript(ctx context.Context, a *actor) error {
	id, err := a.begin(ctx, ProcessReview, "escalate", endOK)
	if err != nil {
		return err
	}
	for try := 0; ; try++ {
		c, err := a.claim(ctx, a.agent, id, "draft")
		if err != nil {
			return err
		}
		if _, err := a.escalate(ctx, a.agent, id, c.Token); refusal(err) == interpreter.CodeStale && try < 10 {
			if _, err := a.untilReady(ctx, id, "draft"); err != nil {
				return err
			}
			continue
		} else if err != nil {
			return err
		}
		break
	}
	if _, err := a.decideOpen(ctx, operator, id, "draft", "returned", map[string]any{"note": "Try again."}); err != nil {
		return err
	}
	if _, err := a.work(ctx, a.agent, id, "draft", draft); err != nil {
		return err
	}
	v, err := a.decideOpen(ctx, reviewerN(1), id, "review", "approved", nil)
	if err != nil {
		return err
	}
	return ended(v, string(interpreter.RunEnded))
}

// cancel: an operator cancels a run whose step is claimed.
func cancelScript(ctx context.Context, a *actor) error {
	id, err := a.begin(ctx, ProcessReview, "cancel", endCancelled)
	if err != nil {
		return err
	}
	if _, err := a.claim(ctx, a.agent, id, "draft"); err != nil {
		return err
	}
	v, err := a.cancel(ctx, id)
	if err != nil {
		return err
	}
	return ended(v, string(interpreter.RunCancelled))
}

// open: drafted and left waiting on its reviewer.
func openScript(ctx context.Context, a *actor) error {
	id, err := a.begin(ctx, ProcessReview, "open", endWaiting)
	if err != nil {
		return err
	}
	v, err := a.work(ctx, a.agent, id, "draft", draft)
	if err != nil {
		return err
	}
	return ended(v, string(interpreter.RunWaiting))
}

// event-before: the payment arrives while the work is being done; the run
// holds it and ends as soon as the work is submitted.
func eventBeforeScript(ctx context.Context, a *actor) error {
	id, err := a.begin(ctx, ProcessEvents, "event-before", endOK)
	if err != nil {
		return err
	}
	if err := a.sendEvent(ctx, id, EventPaid); err != nil {
		return err
	}
	v, err := a.work(ctx, a.agent, id, "work", map[string]any{"done": true})
	if err != nil {
		return err
	}
	return ended(v, string(interpreter.RunEnded))
}

// event-after: the run waits for the payment, which then comes.
func eventAfterScript(ctx context.Context, a *actor) error {
	id, err := a.begin(ctx, ProcessEvents, "event-after", endOK)
	if err != nil {
		return err
	}
	v, err := a.work(ctx, a.agent, id, "work", map[string]any{"done": true})
	if err != nil {
		return err
	}
	if err := ended(v, string(interpreter.RunWaiting)); err != nil {
		return err
	}
	if err := a.sendEvent(ctx, id, EventPaid); err != nil {
		return err
	}
	v, err = a.getRun(ctx, id)
	if err != nil {
		return err
	}
	return ended(v, string(interpreter.RunEnded))
}

// toolsScript calls a tool of every policy; the refund waits for an
// approver, who approves or rejects it, or the run is cancelled first.
func toolsScript(fate string) func(context.Context, *actor) error {
	return func(ctx context.Context, a *actor) error {
		ends := endOK
		if fate == "cancelled" {
			ends = endCancelled
		}
		id, err := a.begin(ctx, ProcessTools, "tools-"+fate, ends)
		if err != nil {
			return err
		}
		nonce := func(tool string) string { return fmt.Sprintf("%s-%s-%d", id, tool, time.Now().UnixNano()) }
		h := &claimHeld{a: a, who: a.agent, runID: id, step: "call"}
		if err := h.claim(ctx); err != nil {
			return err
		}
		// call calls tool as the agent holding the step; a call refused
		// stale (the lease ended while the deployment was down) is never
		// sent, and the agent claims the step again and calls anew.
		call := func(tool string) (*ToolCall, *toolResult, error) {
			for try := 0; ; try++ {
				c := &ToolCall{Tool: tool, Call: nonce(tool), RunID: id}
				r, err := a.callTool(ctx, a.agent, id, h.token, tool, c.Call)
				if refusal(err) == interpreter.CodeStale && try < 10 {
					c.Fate = fateRefused
					a.runs.call(c)
					if err := h.claim(ctx); err != nil {
						return nil, nil, err
					}
					continue
				}
				if err != nil {
					return nil, nil, err
				}
				c.Fate = r.Status
				return c, r, nil
			}
		}
		for _, tool := range []string{ToolLookup, ToolTicket, ToolNote} {
			c, r, err := call(tool)
			if err != nil {
				return err
			}
			a.runs.call(c)
			switch r.Status {
			case "completed":
			case "outcome_unknown":
				// A note sent with no answer: an operator says it happened,
				// and the agent claims the step again.
				if _, err := a.decideOpen(ctx, operator, id, "call", "completed", map[string]any{"output": map[string]any{"result": "The note was written."}}); err != nil {
					return err
				}
				if err := h.claim(ctx); err != nil {
					return err
				}
			default:
				return fmt.Errorf("run %s: %s answered %s", id, tool, r.Status)
			}
		}
		refund, r, err := call(ToolRefund)
		if err != nil {
			return err
		}
		// Counted whatever it answered: a refund sent without waiting for
		// its approval must show in the downstream check.
		a.runs.call(refund)
		if r.Status != "awaiting_approval" {
			return fmt.Errorf("run %s: the refund answered %s, want awaiting_approval", id, r.Status)
		}
		var v *view
		switch fate {
		case "cancelled":
			refund.Fate = "cancelled"
			if v, err = a.cancel(ctx, id); err != nil {
				return err
			}
			return ended(v, string(interpreter.RunCancelled))
		case "rejected":
			refund.Fate = "rejected"
			if _, err := a.decideOpen(ctx, approver, id, "call", "rejected", map[string]any{"note": "Not this refund."}); err != nil {
				return err
			}
			// As an agent that did not read the note would, repeat the
			// exact call: the journal answers it rejected, and nothing is
			// sent.
			v, err = a.workWithCall(ctx, id, refund, "rejected")
		default:
			refund.Approved = time.Now()
			if _, err := a.decideOpen(ctx, approver, id, "call", "approved", nil); err != nil {
				return err
			}
			v, err = a.workWithCall(ctx, id, refund, "completed")
		}
		if err != nil {
			return err
		}
		return ended(v, string(interpreter.RunEnded))
	}
}

// workWithCall claims the tools step again, repeats the decided call
// exactly, expects it to answer status (completed once approved, rejected
// once rejected), and submits.
func (a *actor) workWithCall(ctx context.Context, id string, call *ToolCall, status string) (*view, error) {
	h := &claimHeld{a: a, who: a.agent, runID: id, step: "call"}
	for try := 0; ; try++ {
		if err := h.claim(ctx); err != nil {
			return nil, err
		}
		r, err := a.callTool(ctx, a.agent, id, h.token, call.Tool, call.Call)
		if refusal(err) == interpreter.CodeStale && try < 10 {
			continue
		}
		if err != nil {
			return nil, err
		}
		if r.Status != status {
			return nil, fmt.Errorf("run %s: the %s refund repeated answered %s, want %s", id, call.Fate, r.Status, status)
		}
		if status == "completed" {
			call.Fate = "completed"
		}
		v, err := a.submit(ctx, a.agent, id, h.token, map[string]any{"done": true})
		if refusal(err) == interpreter.CodeStale && try < 10 {
			continue
		}
		return v, err
	}
}
