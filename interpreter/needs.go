package interpreter

import (
	"encoding/json"
	"fmt"
	"time"
)

// This file is the one shape of what a run asks of its host and how the
// host's answer comes back. The machine decides what to ask and what an
// answer means; the host (the workflow, the in-process driver, the
// process-test runner) only does what is asked: runs an activity, calls an
// evaluator, or answers from a script.

// A Need is something a run asks of its host. The machine makes it and
// puts into it everything the answer needs (the submission, its author,
// the work item; a child's inputs), so a host never looks at the command
// that made it: the host only does what it asks.
//
// A synchronous need is a command's result from Apply, and the write that
// made it waits for it: a check's evaluation (*CheckNeeded) or a
// downstream tool call (*CallNeeded). The host hands its Reply to
// Machine.Answer.
//
// An asynchronous need is one no write waits for: the children of a
// process step to start (*ChildNeeded) or to cancel (*ChildCancelNeeded).
// Any write or tick may make it; the host takes it with TakeNeeds, as it
// takes effects, and its answers come back later as commands of their own
// (ChildEnded, ChildNotStarted), so what the run waits for is in its state
// and survives continue-as-new.
type Need interface{ need() }

// syncNeed is a synchronous need: done is the command that applies the
// host's reply.
type syncNeed interface {
	Need
	done(r Reply) (Command, error)
}

// A Reply is the host's answer to a Need: a CheckReply to a
// *CheckNeeded, a CallReply to a *CallNeeded.
type Reply interface{ reply() }

// CheckReply is the evaluator's answer to a *CheckNeeded.
type CheckReply struct {
	// Answers are the evaluator's answers; nil when it did not answer.
	Answers *CheckAnswers
	// Failure says why the evaluator did not answer; Model names it.
	Failure string
	Model   string
}

// CallReply is a downstream tool's answer to a *CallNeeded.
type CallReply struct {
	// Result is the tool's answer (a CallToolResult), IsError its flag;
	// nil when there is no answer.
	Result  json.RawMessage
	IsError bool
	// NotSent is true when the call surely did not reach the tool; Why
	// says what happened when there is no answer.
	NotSent bool
	Why     string
}

func (CheckReply) reply() {}
func (CallReply) reply()  {}

// settled is the result of the command that applies a Reply: what the
// waiting write answers, or the refusal its caller gets. The need is over
// either way, and the run keeps what the command changed.
type settled struct {
	result  any
	refusal *Error
}

// Answer applies the host's reply to a need the machine made and returns
// what the write that waited for it answers: the run view (a check), the
// call's data (a call), or the refusal as an *Error. Unlike a refusal of
// Apply, this one may have changed the run (a failed check's handoff, a
// call journaled as unknown): the need is over. Any other error is the
// host's bug (an answer to a need the run no longer has) and changes
// nothing.
func (m *Machine) Answer(n Need, r Reply, now time.Time) (any, error) {
	sn, ok := n.(syncNeed)
	if !ok {
		return nil, fmt.Errorf("answer: a %T is answered by commands of its own", n)
	}
	cmd, err := sn.done(r)
	if err != nil {
		return nil, err
	}
	res, err := m.Apply(cmd, now)
	if err != nil {
		return nil, err
	}
	out, ok := res.(*settled)
	if !ok {
		return nil, fmt.Errorf("answer: %T settled as %T", n, res)
	}
	if out.refusal != nil {
		return nil, out.refusal
	}
	return out.result, nil
}

func (*CheckNeeded) need() {}
func (*CallNeeded) need()  {}

func (n *CheckNeeded) done(r Reply) (Command, error) {
	a, ok := r.(CheckReply)
	if !ok {
		return nil, fmt.Errorf("answer: a %T does not answer a check", r)
	}
	return checkDone{
		CheckID: n.CheckID, StepID: n.StepID, WorkItemID: n.workItemID, Submission: n.submission, By: n.by,
		Request: n.Request, Answers: a.Answers, Failure: a.Failure, Model: a.Model,
	}, nil
}

func (n *CallNeeded) done(r Reply) (Command, error) {
	a, ok := r.(CallReply)
	if !ok {
		return nil, fmt.Errorf("answer: a %T does not answer a call", r)
	}
	return callDone{StepID: n.StepID, Digest: n.Digest, Result: a.Result, IsError: a.IsError, NotSent: a.NotSent, Why: a.Why}, nil
}
