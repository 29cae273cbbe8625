package workflows

import (
	"errors"
	"fmt"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/baton-run/baton/interpreter"
)

// This file performs what the run's machine asks of its host
// (interpreter.Need): a check's evaluation and a downstream call, each as
// an activity of the run. What a need carries and what its reply means
// are the interpreter's; the run only does it.

// ask performs a need the machine made while it applied a write and
// applies the reply (interpreter.Machine.Answer): the check's evaluator or
// the downstream call runs as an activity of the run while other writes
// go on. It returns what the write answers, or its refusal. It takes the
// write turn again before it applies the reply, and leaves its release in
// *release.
func (r *runner) ask(ctx workflow.Context, need interpreter.Need, release *func()) (any, error) {
	var reply interpreter.Reply
	wake := false
	switch n := need.(type) {
	case *interpreter.CheckNeeded:
		// Once the check is over, refused or not, the step's lease counts
		// again: the loop sets its timer anew.
		reply, wake = r.evaluate(ctx, n), true
	case *interpreter.CallNeeded:
		reply = r.callTool(ctx, n)
	default:
		return nil, fmt.Errorf("workflow: the run cannot perform a %T", need)
	}
	var err error
	if *release, err = r.take(ctx); err != nil {
		return nil, err
	}
	res, err := r.m.Answer(need, reply, workflow.Now(ctx))
	var refused *interpreter.Error
	if errors.As(err, &refused) {
		r.dirty = r.dirty || wake
		if refused.Code == interpreter.CodeNotAccepted {
			r.publish(ctx, nil) // a failed check's handoff changed what get_work shows
		}
	}
	return res, err
}

// evaluate asks the evaluator about a checked submission, as an activity
// retried once (SPEC-DECISIONS §28). The run has already marked the step
// as being checked, so its lease waits meanwhile.
func (r *runner) evaluate(ctx workflow.Context, need *interpreter.CheckNeeded) interpreter.CheckReply {
	actx := workflow.WithActivityOptions(ctx, evaluateOptions(need.StepID))
	var answers interpreter.CheckAnswers
	var reply interpreter.CheckReply
	if err := workflow.ExecuteActivity(actx, ActivityEvaluate, need.Request).Get(actx, &answers); err != nil {
		reply.Failure = err.Error()
		var ae *temporal.ApplicationError
		if errors.As(err, &ae) && ae.HasDetails() {
			_ = ae.Details(&reply.Model)
		}
	} else {
		reply.Answers = &answers
	}
	return reply
}

// callTool sends one call to a downstream tool as an activity of the run
// (profile-tools §6.3): a read or idempotency: key call up to
// interpreter.ToolCallAttempts times with the same key, an idempotency:
// none call once.
func (r *runner) callTool(ctx workflow.Context, need *interpreter.CallNeeded) interpreter.CallReply {
	actx := workflow.WithActivityOptions(ctx, callOptions(need))
	var out CallOutput
	var reply interpreter.CallReply
	if err := workflow.ExecuteActivity(actx, ActivityCallTool, r.in.Org, need).Get(actx, &out); err != nil {
		reply.Why = err.Error()
		var ae *temporal.ApplicationError
		reply.NotSent = errors.As(err, &ae) && ae.Type() == CallNotSent
	} else {
		reply.Result, reply.IsError = out.Result, out.IsError
	}
	return reply
}
