// Package workflows holds ProcessRun, the Temporal workflow that runs one
// PROCESS.md: a thin event loop around interpreter.Machine. Writes arrive as
// updates whose validator is the machine's Check, so a refusal records
// nothing; reads are a query; time is one workflow timer set to the
// machine's next deadline.
package workflows

import (
	"encoding/json"
	"errors"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/baton-run/baton/interpreter"
)

// changeRunRecordsRequests versions how a run's writes claim their
// requestIds: version 1 records each requestId in the transaction that
// publishes the write (the gateway reserves nothing first), takes writes
// one at a time from their command to that transaction (the run's write
// turn, so a write refused there can be discarded), and holds a write's
// requestId before its check or downstream call.
const changeRunRecordsRequests = "run-records-requests"

// changeDeadlineTimer versions the loop's timer: version 1 keeps one timer
// for the next deadline and re-arms it only when that deadline changes.
const changeDeadlineTimer = "deadline-timer"

// changeOrgAttribute versions the BatonOrg search attribute: version 1
// upserts it as the run's workflow begins (each run of a continued chain
// too). Runs recorded before it replay without the upsert.
const changeOrgAttribute = "org-search-attribute"

// changeLeanStart versions how a run begins: version 1 stands for version
// 1 of every change above with one marker instead of one each, and the run
// upserts a search attribute only when it differs from the run's own (the
// start already sets BatonOrg and BatonState). Every marker and upsert is a
// command that Temporal writes, and every upsert also a visibility write:
// a run began with three markers and five upserts, and now begins with one
// of each, the upsert being the SDK's TemporalChangeVersion.
//
// A run whose input says Lean is version 1 without asking, and so begins
// with neither: GetVersion's marker costs a history event and its
// TemporalChangeVersion upsert a visibility write, for a version every
// start since has had. The input is in the run's first event, so every
// replay reads it as the first task did. When a worker of the version
// before took a Lean run's first task, it asked, and recorded version 1
// with its marker and upsert; the SDK's replay skips those where no
// GetVersion asks for them (testdata/*-lean-older-worker.json).
const changeLeanStart = "lean-start"

// runner is one run's workflow state around its machine.
type runner struct {
	in     Input
	m      *interpreter.Machine
	dirty  bool
	recent []Answer
	seen   seenSet
	// keptAll says seen began with every update id the run answered: the
	// run started here, or continued from a run that said so (SeenAll).
	// Runs continued by a worker from before SeenAll say nothing.
	keptAll bool
	state   string // last published run state
	outcome string
	// started is set once the run's first state is in the read model; the
	// start update answers only then, so a read right after start sees it.
	started bool
	// startAnswer is the start update's answer, recorded with the first
	// read-model write.
	startAnswer Result
	// publishedSeq is the machine sequence number last written to the read
	// model.
	publishedSeq  int64
	everPublished bool
	// written is the listing last written to the read model, at the run's
	// time writtenAt; unlisted is changeUnlistedWrites's version, asked
	// (unwritten).
	written   *interpreter.Listing
	writtenAt time.Time
	unlisted  struct{ asked, on bool }
	// records is set in runs that record their writes' requestIds
	// themselves (changeRunRecordsRequests); writing is then the write
	// turn, held from a change to the machine until it is published.
	records bool
	writing bool
	// reused is set when the start's requestId was another call's: the
	// run discards itself.
	reused bool
	// notify holds the run's notices in flight (notify.go).
	notify notifier
	// kids are the starts and cancellations of child runs in flight.
	kids kids
	// begun are the children the run's views may name (named.go).
	begun begun
}

// ProcessRun runs one run of a pinned process until it ends.
func ProcessRun(ctx workflow.Context, in Input) (*Outcome, error) {
	r := &runner{in: in}
	lean := in.Lean || workflow.GetVersion(ctx, changeLeanStart, workflow.DefaultVersion, 1) == 1
	r.records = lean || workflow.GetVersion(ctx, changeRunRecordsRequests, workflow.DefaultVersion, 1) == 1
	now := workflow.Now(ctx)
	if in.Continued != nil {
		m, err := interpreter.Restore(in.Process, in.Continued.State)
		if err != nil {
			return nil, temporal.NewNonRetryableApplicationError(err.Error(), "bad_state", err)
		}
		r.m, r.recent, r.seen = m, in.Continued.Recent, decodeSeen(in.Continued.Seen)
		r.keptAll = in.Continued.SeenAll
		r.begun.carry(runningChildren(m.Run()))
		r.notify.queued = in.Continued.Notices
	} else {
		m, err := interpreter.StartRun(in.Start, now)
		if err != nil {
			// The gateway checks a start before it asks for one; this is a
			// caller's bug, not a business outcome.
			return nil, temporal.NewNonRetryableApplicationError("start refused: "+err.Error(), "start_refused", err)
		}
		r.m, r.keptAll = m, true
	}
	if err := r.register(ctx); err != nil {
		return nil, err
	}
	if lean {
		// What the run's search attributes already say is not upserted
		// again: the start (or the run this one continues) set them.
		attrs := workflow.GetTypedSearchAttributes(ctx)
		r.state, _ = attrs.GetKeyword(keyState)
		r.outcome, _ = attrs.GetKeyword(keyOutcome)
		if org, _ := attrs.GetKeyword(keyOrg); in.Org != "" && org != in.Org {
			r.upsertOrg(ctx)
		}
	} else if in.Org != "" && workflow.GetVersion(ctx, changeOrgAttribute, workflow.DefaultVersion, 1) == 1 {
		r.upsertOrg(ctx)
	}
	var first *Answered
	if in.Continued == nil && in.RequestID != "" {
		// The start's answer is the first view; it is recorded with the
		// first read-model write, and the start update returns it.
		b, err := encodeAnswer(r.named(r.m.View(now)), in.OmitBody)
		if err != nil {
			return nil, err
		}
		r.startAnswer = Result{Digest: in.Digest, Value: b}
		first = &Answered{RequestID: in.RequestID, Tool: ToolOf(UpdateStart), Digest: in.Digest, Result: b, RunID: in.RunID}
	}
	r.reused = !r.publish(ctx, first)
	r.started = true
	if r.reused {
		// The requestId was another call's: nothing was stored, the start
		// update answers conflict, and the run ends without a trace in the
		// read model.
		if err := workflow.Await(ctx, func() bool { return workflow.AllHandlersFinished(ctx) }); err != nil {
			return nil, err
		}
		return nil, temporal.NewNonRetryableApplicationError("start refused: its requestId was another call's", interpreter.IssueRequestIDReused, nil)
	}

	r.watchCarried(ctx)

	// Runs started before the deadline timer was kept across wake-ups
	// replay with AwaitWithTimeout, whose timers this SDK never cancels.
	keepTimer := lean || workflow.GetVersion(ctx, changeDeadlineTimer, workflow.DefaultVersion, 1) == 1
	var timer deadlineTimer
	for !r.m.Run().State.Over() {
		cond := func() bool {
			return r.dirty || r.m.Run().State.Over() || workflow.GetInfo(ctx).GetContinueAsNewSuggested()
		}
		var err error
		next, ok := r.m.NextDeadline()
		switch {
		case keepTimer:
			timer.arm(ctx, next, ok)
			err = workflow.Await(ctx, func() bool { return cond() || timer.fired() })
			if err == nil {
				// A cancelled run also cancels the timer, which then reads
				// as fired: the cancellation comes first.
				err = ctx.Err()
			}
		case ok:
			wait := next.Sub(workflow.Now(ctx))
			if wait < time.Millisecond {
				wait = time.Millisecond
			}
			_, err = workflow.AwaitWithTimeout(ctx, wait, cond)
		default:
			err = workflow.Await(ctx, cond)
		}
		if err != nil {
			return r.cancelledInTemporal(ctx)
		}
		r.dirty = false
		release, err := r.take(ctx)
		if err != nil {
			return r.cancelledInTemporal(ctx)
		}
		if r.m.Tick(workflow.Now(ctx)) {
			r.publish(ctx, nil)
		}
		release()
		if !r.m.Run().State.Over() && workflow.GetInfo(ctx).GetContinueAsNewSuggested() {
			if err := r.settle(ctx); err != nil {
				return r.cancelledInTemporal(ctx)
			}
			if !r.m.Run().State.Over() {
				return nil, r.continueAsNew(ctx)
			}
		}
	}
	return r.finish(ctx)
}

// register installs the query, update and signal handlers.
func (r *runner) register(ctx workflow.Context) error {
	err := workflow.SetQueryHandler(ctx, QueryView, func(q ViewRequest) (json.RawMessage, error) {
		return encodeAnswer(r.named(r.m.View(workflow.Now(ctx))), q.OmitBody)
	})
	if err != nil {
		return err
	}
	err = workflow.SetQueryHandler(ctx, QueryKept, func(q KeptRequest) (Kept, error) {
		switch {
		case q.Org != r.in.Org:
			// Another organization's run: it says nothing of it.
			return KeptUnknown, nil
		case r.seen.answeredAnyAttempt(q.UpdateID):
			return KeptYes, nil
		case r.keptAll && !r.seen.evicted:
			return KeptNever, nil
		}
		return KeptUnknown, nil
	})
	if err != nil {
		return err
	}
	err = workflow.SetQueryHandler(ctx, QueryStart, func() (StartAnswer, error) {
		switch {
		case r.reused:
			return StartAnswer{Reused: true}, nil
		case r.startAnswer.Value == nil:
			return StartAnswer{}, nil
		}
		return StartAnswer{Result: &r.startAnswer}, nil
	})
	if err != nil {
		return err
	}
	err = workflow.SetUpdateHandlerWithOptions(ctx, UpdateStart, func(ctx workflow.Context, q StartRequest) (Result, error) {
		if err := workflow.Await(ctx, func() bool { return r.started }); err != nil {
			return Result{}, err
		}
		if r.reused || q.Digest != r.in.Digest {
			// Another call's requestId, or, after continue-as-new (Temporal
			// then forgets the start's update id), this start's with other
			// arguments.
			return Result{}, refusal(interpreter.ErrRequestIDReused())
		}
		if info := workflow.GetCurrentUpdateInfo(ctx); info != nil && info.ID == r.in.RequestID && q.Digest == r.startAnswer.Digest {
			return r.answer(ctx, q.Digest, r.startAnswer.Value, false)
		}
		return r.answer(ctx, q.Digest, r.named(r.m.View(workflow.Now(ctx))), r.in.OmitBody)
	}, workflow.UpdateHandlerOptions{})
	if err != nil {
		return err
	}
	// Every write is one update whose validator is the machine's check and
	// whose handler applies the command.
	for _, w := range writes {
		name := w.name
		handler := func(ctx workflow.Context, raw json.RawMessage) (Result, error) {
			q, err := decodeWrite(name, raw)
			if err != nil {
				return Result{}, err
			}
			return r.apply(ctx, q)
		}
		validator := func(ctx workflow.Context, raw json.RawMessage) error {
			q, err := decodeWrite(name, raw)
			if err != nil {
				return refusal(interpreter.Refuse(interpreter.CodeInvalid, err.Error()))
			}
			return r.check(ctx, q.Org, q.Command)
		}
		if err := workflow.SetUpdateHandlerWithOptions(ctx, name, handler, workflow.UpdateHandlerOptions{Validator: validator}); err != nil {
			return err
		}
	}
	// Signals wait in their channels' buffers until this loop (or settle,
	// before continue-as-new) takes them. A selector would hand a
	// signal to this coroutine before it runs, where nothing else can see
	// it, and a run that continued as new in that task would lose it.
	workflow.Go(ctx, func(ctx workflow.Context) {
		pending := signalled(ctx)
		for {
			if err := workflow.Await(ctx, pending); err != nil {
				return
			}
			r.drainSignals(ctx)
		}
	})
	return nil
}

// changeFinishTakesTurn versions finish: version 1 waits, before the
// workflow closes, for the write that holds the run's write turn to be
// published and its needs performed. A signal applied in a run's first
// workflow task (a child cancelled as it starts, a signal on its way while
// the run continued as new) ends the run while the run's own first write
// is in flight; the loop then saw the run over and closed the workflow,
// and the SDK drops a local activity still running when its workflow
// closes: the write that ended the run was not in the history and
// reached the read model late, or never. finish asks for the version only
// when the turn is held as it begins, so a run that closes without a
// write in flight, nearly every run, records no marker.
const changeFinishTakesTurn = "finish-takes-turn"

// finish waits for running handlers and closes the workflow as the run
// ended: Canceled for a cancelled run, else completed with its outcome.
func (r *runner) finish(ctx workflow.Context) (*Outcome, error) {
	// A Temporal cancellation that arrives once the run is over changes
	// nothing: wait for the handlers regardless.
	dctx, cancel := workflow.NewDisconnectedContext(ctx)
	defer cancel()
	turn := r.writing && workflow.GetVersion(dctx, changeFinishTakesTurn, workflow.DefaultVersion, 1) == 1
	if err := workflow.Await(dctx, func() bool {
		return workflow.AllHandlersFinished(dctx) && r.kids.idle() && !(turn && r.writing)
	}); err != nil {
		return nil, err
	}
	r.tellParent(dctx)
	if err := r.awaitDeliveries(dctx); err != nil {
		return nil, err
	}
	run := r.m.Run()
	if run.State == interpreter.RunCancelled {
		return nil, temporal.NewCanceledError(run.Ended)
	}
	return &Outcome{Outcome: run.Outcome, Ended: run.Ended}, nil
}

// cancelledInTemporal ends the run cancelled after a Temporal cancellation
// request (UI, CLI, client), with who and why read from history.
func (r *runner) cancelledInTemporal(ctx workflow.Context) (*Outcome, error) {
	dctx, cancel := workflow.NewDisconnectedContext(ctx)
	defer cancel()
	info := CancelInfo{}
	actx := workflow.WithActivityOptions(dctx, cancelRequestOptions())
	we := workflow.GetInfo(dctx).WorkflowExecution
	if err := workflow.ExecuteActivity(actx, ActivityCancelRequest, we.ID, we.RunID).Get(actx, &info); err != nil {
		workflow.GetLogger(dctx).Warn("reading the cancel request failed", "error", err)
	}
	by := info.Identity
	if by == "" {
		by = "temporal"
	}
	reason := info.Reason
	if reason == "" {
		reason = "Cancelled in Temporal."
	}
	cmd := interpreter.Cancel{Actor: interpreter.Actor{ID: by, Kind: interpreter.ActorSystem}, Reason: reason}
	release, err := r.take(dctx)
	if err != nil {
		return nil, err
	}
	if _, err := r.m.Apply(cmd, workflow.Now(dctx)); err != nil {
		var e *interpreter.Error
		if !errors.As(err, &e) || e.Code != interpreter.CodeConflict {
			release()
			return nil, err
		}
	}
	r.publish(dctx, nil)
	release()
	return r.finish(dctx)
}

// continueAsNew carries the run into a fresh history before Temporal's
// limits. The caller has let every running handler finish.
func (r *runner) continueAsNew(ctx workflow.Context) error {
	state, err := r.m.State()
	if err != nil {
		return err
	}
	next := r.in
	// The inputs are in the state's run data; a second copy would only
	// take room in the one payload the input is.
	next.Inputs = nil
	next.Continued = &Continued{State: state, Recent: keepRecent(r.recent), Seen: r.seen.encode(), SeenAll: r.keptAll && !r.seen.evicted, Notices: r.continuedNotices()}
	return workflow.NewContinueAsNewError(ctx, ProcessRun, next)
}
