package workflows

import (
	"encoding/json"
	"errors"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/baton-run/baton/interpreter"
)

// This file applies a write to the run: the update's validator (check),
// its handler (apply), the run's write turn, and the answer a write keeps
// for replays and records beside the read model.

// check is every update's validator: the machine's own check at now, or
// the stored answer for an update id seen before continue-as-new.
func (r *runner) check(ctx workflow.Context, org string, cmd interpreter.Command) error {
	if org != "" && org != r.in.Org {
		return refusal(interpreter.ErrNoRun(r.in.RunID))
	}
	if _, ok := r.replay(ctx); ok {
		return nil
	}
	if info := workflow.GetCurrentUpdateInfo(ctx); info != nil && r.seen.has(info.ID) {
		// Answered before continue-as-new, and the answer is no longer
		// here: never applied twice.
		return temporal.NewApplicationErrorWithOptions("This request was answered before; its answer is in the caller's record.", answeredBeforeType, temporal.ApplicationErrorOptions{NonRetryable: true})
	}
	err := r.m.Check(cmd, workflow.Now(ctx))
	var e *interpreter.Error
	if info := workflow.GetCurrentUpdateInfo(ctx); info != nil && errors.As(err, &e) && r.keptAll && !r.seen.evicted && !r.seen.answeredAnyAttempt(info.ID) {
		// Never answered under any attempt: the refusal is the run's last
		// word, and a record of an answer is one the run never kept.
		return temporal.NewApplicationErrorWithOptions(e.Message, keptAllType, temporal.ApplicationErrorOptions{NonRetryable: true, Details: []any{e}})
	}
	return refusal(err)
}

func (r *runner) replay(ctx workflow.Context) (Result, bool) {
	info := workflow.GetCurrentUpdateInfo(ctx)
	if info == nil {
		return Result{}, false
	}
	for _, a := range r.recent {
		if a.UpdateID == info.ID {
			return a.Result, true
		}
	}
	return Result{}, false
}

// apply runs an accepted command and answers, having written the new
// state and the answer to the read model before the update returns. A
// command the machine answers with a need (a submission to a checked step,
// a call_tool) waits for the run to perform it (ask). A refusal here,
// after the validator accepted, is remembered by Temporal under the
// update id (recordedRefusal).
//
// In a run that records its requestIds (r.records) the write holds the
// run's write turn from its command until its answer is stored, and the
// transaction that stores it also records the requestId: when that finds
// the requestId another call's, nothing was stored, the machine goes back
// to the state before the command, and the write answers conflict. A
// write that waits for a check or a tool holds its requestId first, before
// the evaluator or the tool is asked, and lets other writes go on
// meanwhile.
func (r *runner) apply(ctx workflow.Context, q Write) (Result, error) {
	if res, ok := r.replay(ctx); ok {
		return res, nil
	}
	release, err := r.take(ctx)
	if err != nil {
		return Result{}, err
	}
	defer func() { release() }()
	var before *interpreter.Machine
	if r.records {
		before = r.m.Clone()
	}
	held := false
	res, err := r.m.Apply(q.Command, workflow.Now(ctx))
	if need, ok := res.(interpreter.Need); ok && err == nil {
		if r.records {
			hold := r.answered(ctx, q, Result{Digest: q.Digest})
			if hold != nil && hold.Digest != "" {
				if !r.publish(ctx, hold) {
					r.m = before
					return Result{}, refusal(interpreter.ErrRequestIDReused())
				}
				held = true
			}
		}
		// Other writes go on while the evaluator or the tool answers.
		release()
		res, err = r.ask(ctx, need, &release)
		before = nil // other writes came in between: nothing to go back to
	}
	if err != nil {
		if held {
			r.publish(ctx, &Answered{RequestID: r.requestID(ctx, q), Digest: q.Digest, RunID: r.in.RunID, Refused: true})
		}
		return Result{}, recordedRefusal(err)
	}
	r.dirty = true
	b, err := encodeAnswer(r.namedAnswer(res), q.OmitBody)
	if err != nil {
		return Result{}, err
	}
	out := Result{Digest: q.Digest, Value: b}
	if !r.publish(ctx, r.answered(ctx, q, out)) {
		if before != nil {
			r.m = before
		}
		return Result{}, refusal(interpreter.ErrRequestIDReused())
	}
	r.keep(ctx, out)
	return out, nil
}

// take waits for the run's write turn and returns its release, which may
// be called more than once. Runs that do not record their requestIds
// (r.records unset) have no turn: take returns at once.
func (r *runner) take(ctx workflow.Context) (release func(), err error) {
	if !r.records {
		return func() {}, nil
	}
	if err := workflow.Await(ctx, func() bool { return !r.writing }); err != nil {
		return func() {}, err
	}
	r.writing = true
	done := false
	return func() {
		if !done {
			done, r.writing = true, false
		}
	}, nil
}

// answer encodes a command's result as the update's answer and keeps it
// for replays across continue-as-new.
func (r *runner) answer(ctx workflow.Context, digest string, res any, omitBody bool) (Result, error) {
	b, err := encodeAnswer(res, omitBody)
	if err != nil {
		return Result{}, err
	}
	out := Result{Digest: digest, Value: b}
	r.keep(ctx, out)
	return out, nil
}

// encodeAnswer encodes a command's result as an answer. With omitBody a
// run view's or a claim's body is left empty: the caller adds the pinned
// process's body back, so a body of up to MaxProcessBytes is not in every
// answer the history and the read model keep.
func encodeAnswer(res any, omitBody bool) ([]byte, error) {
	if omitBody {
		switch v := res.(type) {
		case *interpreter.View:
			lean := *v
			lean.Body = ""
			res = &lean
		case *interpreter.ClaimResult:
			lean := *v
			lean.Body = ""
			res = &lean
		}
	}
	return json.Marshal(res)
}

// keep keeps the current update's answer for replays across
// continue-as-new.
func (r *runner) keep(ctx workflow.Context, out Result) {
	if info := workflow.GetCurrentUpdateInfo(ctx); info != nil {
		r.seen.add(info.ID)
		r.recent = keepRecent(append(r.recent, Answer{UpdateID: info.ID, Result: out}))
	}
}

// answered is the record of the current update's answer: the gateway
// replays a requestId from it once Temporal no longer can.
func (r *runner) answered(ctx workflow.Context, q Write, out Result) *Answered {
	info := workflow.GetCurrentUpdateInfo(ctx)
	if info == nil {
		return nil
	}
	a := &Answered{RequestID: r.requestID(ctx, q), Tool: ToolOf(info.Name), Digest: out.Digest, Result: out.Value}
	if r.records {
		a.RunID = r.in.RunID
	}
	return a
}

// requestID is the requestId the current update carries.
func (r *runner) requestID(ctx workflow.Context, q Write) string {
	if q.RequestID != "" {
		return q.RequestID
	}
	if info := workflow.GetCurrentUpdateInfo(ctx); info != nil {
		return info.ID
	}
	return ""
}
