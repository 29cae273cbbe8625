// Package workflows holds ProcessRun, the Temporal workflow that runs one
// PROCESS.md: a thin event loop around interpreter.Machine. Writes arrive as
// updates whose validator is the machine's Check, so a refusal records
// nothing; reads are a query; time is one workflow timer set to the
// machine's next deadline.
package workflows

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
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

// deadlineTimer is the one workflow timer set to the machine's next
// deadline. Waking early for an update keeps it; a new deadline cancels it
// and starts another, so a run never leaves timers behind.
type deadlineTimer struct {
	at     time.Time
	future workflow.Future
	cancel workflow.CancelFunc
}

// arm makes the timer fire at next (none when !ok), keeping the running
// one when it already does.
func (t *deadlineTimer) arm(ctx workflow.Context, next time.Time, ok bool) {
	if t.future != nil && ok && t.at.Equal(next) && !t.future.IsReady() {
		return
	}
	if t.future != nil && !t.future.IsReady() {
		t.cancel()
	}
	t.future, t.cancel = nil, nil
	if !ok {
		return
	}
	wait := next.Sub(workflow.Now(ctx))
	if wait < time.Millisecond {
		wait = time.Millisecond
	}
	tctx, cancel := workflow.WithCancel(ctx)
	t.at, t.cancel = next, cancel
	t.future = workflow.NewTimerWithOptions(tctx, wait, workflow.TimerOptions{Summary: "next deadline " + next.UTC().Format(time.RFC3339)})
}

func (t *deadlineTimer) fired() bool { return t.future != nil && t.future.IsReady() }

var (
	keyProcess = temporal.NewSearchAttributeKeyKeyword(SearchProcess)
	keyVersion = temporal.NewSearchAttributeKeyInt64(SearchVersion)
	keyMode    = temporal.NewSearchAttributeKeyKeyword(SearchMode)
	keyState   = temporal.NewSearchAttributeKeyKeyword(SearchState)
	keyOutcome = temporal.NewSearchAttributeKeyKeyword(SearchOutcome)
	keyOrg     = temporal.NewSearchAttributeKeyKeyword(SearchOrg)
)

// runner is one run's workflow state around its machine.
type runner struct {
	in      Input
	m       *interpreter.Machine
	dirty   bool
	recent  []Answer
	seen    seenSet
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
	// records is set in runs that record their writes' requestIds
	// themselves (changeRunRecordsRequests); writing is then the write
	// turn, held from a change to the machine until it is published.
	records bool
	writing bool
	// reused is set when the start's requestId was another call's: the
	// run discards itself.
	reused bool
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
	} else {
		m, err := interpreter.StartRun(in.Start, now)
		if err != nil {
			// The gateway checks a start before it asks for one; this is a
			// caller's bug, not a business outcome.
			return nil, temporal.NewNonRetryableApplicationError("start refused: "+err.Error(), "start_refused", err)
		}
		r.m = m
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
		b, err := encodeAnswer(r.m.View(now), in.OmitBody)
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
		return encodeAnswer(r.m.View(workflow.Now(ctx)), q.OmitBody)
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
		return r.answer(ctx, q.Digest, r.m.View(workflow.Now(ctx)), r.in.OmitBody)
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
		events := workflow.GetSignalChannel(ctx, SignalEvent)
		refusals := workflow.GetSignalChannel(ctx, SignalRefusal)
		for {
			if err := workflow.Await(ctx, func() bool { return events.Len() > 0 || refusals.Len() > 0 }); err != nil {
				return
			}
			r.drainSignals(ctx)
		}
	})
	return nil
}

// eventCommand is the machine's command for an event signal.
func eventCommand(ev EventSignal) interpreter.SendEvent {
	sender := ev.Sender
	if sender == "" {
		sender = "temporal"
	}
	return interpreter.SendEvent{Name: ev.Name, Data: ev.Data, Actor: interpreter.Actor{ID: sender, Kind: interpreter.ActorSystem}}
}

// settle lets running update handlers finish (Temporal fails accepted
// updates still running when a run continues as new) and applies the
// signals delivered but not yet applied (they would be lost with this
// run), until neither is left. It fails only when the workflow is
// cancelled meanwhile.
func (r *runner) settle(ctx workflow.Context) error {
	events := workflow.GetSignalChannel(ctx, SignalEvent)
	refusals := workflow.GetSignalChannel(ctx, SignalRefusal)
	for {
		if err := workflow.Await(ctx, func() bool { return workflow.AllHandlersFinished(ctx) }); err != nil {
			return err
		}
		if events.Len() == 0 && refusals.Len() == 0 {
			return nil
		}
		r.drainSignals(ctx)
	}
}

// drainSignals applies the signals delivered to this run and not yet
// applied, in the order they arrived on each channel.
func (r *runner) drainSignals(ctx workflow.Context) {
	events := workflow.GetSignalChannel(ctx, SignalEvent)
	refusals := workflow.GetSignalChannel(ctx, SignalRefusal)
	for {
		var ev EventSignal
		if !events.ReceiveAsync(&ev) {
			break
		}
		r.signal(ctx, eventCommand(ev))
	}
	for {
		var n interpreter.NoteRefusal
		if !refusals.ReceiveAsync(&n) {
			break
		}
		r.signal(ctx, n)
	}
}

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
	return refusal(r.m.Check(cmd, workflow.Now(ctx)))
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
// submission to a checked step asks the evaluator first (runCheck), a
// call_tool the tool (runCall). A refusal here, after the validator
// accepted, is remembered by Temporal under the update id
// (recordedRefusal).
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
	if err == nil {
		switch res.(type) {
		case *interpreter.CheckNeeded, *interpreter.CallNeeded:
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
			var again func()
			switch need := res.(type) {
			case *interpreter.CheckNeeded:
				res, err = r.runCheck(ctx, q.Command, need, &again)
			case *interpreter.CallNeeded:
				res, err = r.runCall(ctx, need, &again)
			}
			if again != nil {
				release = again
			}
			before = nil // other writes came in between: nothing to go back to
		}
	}
	if err != nil {
		if held {
			r.publish(ctx, &Answered{RequestID: r.requestID(ctx, q), Digest: q.Digest, RunID: r.in.RunID, Refused: true})
		}
		return Result{}, recordedRefusal(err)
	}
	r.dirty = true
	b, err := encodeAnswer(res, q.OmitBody)
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

// runCheck asks the evaluator about a checked submission, as an activity
// retried once (SPEC-DECISIONS §28), and applies its answers. The run has
// already marked the step as being checked, so its lease waits and other
// writes to the run go on meanwhile. It returns the run view when the
// submission was accepted and the check's refusal otherwise. It takes the
// write turn again before it applies the answers, and leaves its release
// in *release.
func (r *runner) runCheck(ctx workflow.Context, cmd interpreter.Command, need *interpreter.CheckNeeded, release *func()) (any, error) {
	done := interpreter.CheckDone{CheckID: need.CheckID, StepID: need.StepID, Request: need.Request}
	switch c := cmd.(type) {
	case *interpreter.Submit:
		done.Submission, done.By = c.Submission, c.Actor.ID
	case *interpreter.Decide:
		done.Submission, done.By, done.WorkItemID = c.Submission, c.Actor.ID, c.WorkItemID
	}
	actx := workflow.WithActivityOptions(ctx, evaluateOptions(need.StepID))
	var answers interpreter.CheckAnswers
	if err := workflow.ExecuteActivity(actx, ActivityEvaluate, need.Request).Get(actx, &answers); err != nil {
		done.Failure = err.Error()
		var ae *temporal.ApplicationError
		if errors.As(err, &ae) && ae.HasDetails() {
			_ = ae.Details(&done.Model)
		}
	} else {
		done.Answers = &answers
	}
	var err error
	if *release, err = r.take(ctx); err != nil {
		return nil, err
	}
	res, err := r.m.Apply(done, workflow.Now(ctx))
	if err != nil {
		return nil, err
	}
	out := res.(*interpreter.CheckOutcome)
	if out.Refusal != nil {
		r.dirty = true // the check is over: the lease counts again
		if out.Refusal.Code == interpreter.CodeNotAccepted {
			r.publish(ctx, nil) // the handoff changed what get_work shows
		}
		return nil, out.Refusal
	}
	return out.View, nil
}

// runCall sends one call to a downstream tool as an activity of the run
// (profile-tools §6.3): a read or idempotency: key call up to
// interpreter.ToolCallAttempts times with the same key, an idempotency:
// none call once. It journals the outcome and returns call_tool's data, or
// the refusal its caller gets. It takes the write turn again before it
// journals, and leaves its release in *release.
func (r *runner) runCall(ctx workflow.Context, need *interpreter.CallNeeded, release *func()) (any, error) {
	actx := workflow.WithActivityOptions(ctx, callOptions(need))
	var out CallOutput
	done := interpreter.CallDone{StepID: need.StepID, Digest: need.Digest}
	if err := workflow.ExecuteActivity(actx, ActivityCallTool, r.in.Org, need).Get(actx, &out); err != nil {
		done.Why = err.Error()
		var ae *temporal.ApplicationError
		done.NotSent = errors.As(err, &ae) && ae.Type() == CallNotSent
	} else {
		done.Result, done.IsError = out.Result, out.IsError
	}
	var err error
	if *release, err = r.take(ctx); err != nil {
		return nil, err
	}
	res, err := r.m.Apply(done, workflow.Now(ctx))
	if err != nil {
		return nil, err
	}
	o := res.(*interpreter.CallOutcome)
	if o.Refusal != nil {
		return nil, o.Refusal
	}
	return o.Result, nil
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

// signal applies a command that arrived by signal. A refusal is logged:
// a signal has no one to answer.
func (r *runner) signal(ctx workflow.Context, cmd interpreter.Command) {
	// A signal taken from its channel is applied even when the run is
	// being cancelled meanwhile.
	dctx, cancel := workflow.NewDisconnectedContext(ctx)
	defer cancel()
	release, err := r.take(dctx)
	if err != nil {
		return
	}
	defer release()
	if _, err := r.m.Apply(cmd, workflow.Now(ctx)); err != nil {
		workflow.GetLogger(ctx).Info("signal refused", "run", r.in.RunID, "error", err)
		return
	}
	r.dirty = true
	r.publish(ctx, nil)
}

// publish writes the read model (when the run changed since the last
// write) and the answer of a write (when given) in one local activity,
// asks for the effects the machine wants, and refreshes what the Temporal
// UI shows. The activity is retried until it succeeds: a write answers
// only once its read-model rows and its answer are stored, so a get_work
// after it sees it and a replay after the run ends finds it.
//
// It reports false when the answer's requestId was another call's: then
// nothing was stored, and the caller discards the write.
func (r *runner) publish(ctx workflow.Context, answer *Answered) bool {
	now := workflow.Now(ctx)
	run := r.m.Run()
	var l *interpreter.Listing
	if run.Seq != r.publishedSeq || !r.everPublished {
		var err error
		if l, err = r.m.Listing(now); err != nil {
			workflow.GetLogger(ctx).Error("listing failed", "run", r.in.RunID, "error", err)
			l = nil
		} else if l.Final != nil && r.in.OmitBody {
			// get_run adds the body to an ended run's view, as to answers.
			if l.Final, err = encodeAnswer(r.m.View(now), true); err != nil {
				workflow.GetLogger(ctx).Error("final view failed", "run", r.in.RunID, "error", err)
				l = nil
			}
		}
	}
	// The machine has moved on: the write happens even when the workflow
	// is being cancelled meanwhile.
	dctx, cancel := workflow.NewDisconnectedContext(ctx)
	defer cancel()
	lctx := workflow.WithLocalActivityOptions(dctx, publishOptions())
	var out Published
	if err := workflow.ExecuteLocalActivity(lctx, ActivityPublishRun, r.in.Org, l, answer).Get(lctx, &out); err != nil {
		workflow.GetLogger(ctx).Error("publish run failed", "run", r.in.RunID, "error", err)
	} else if out.Reused {
		return false
	} else if l != nil {
		r.publishedSeq, r.everPublished = l.Seq, true
	}
	for _, e := range r.m.TakeEffects() {
		e.Org = r.in.Org
		actx := workflow.WithActivityOptions(ctx, notifyOptions())
		// Fire and forget: a failing notification never blocks the run.
		workflow.ExecuteActivity(actx, ActivityNotifyOverdue, e)
	}
	if string(run.State) != r.state || run.Outcome != r.outcome {
		r.state, r.outcome = string(run.State), run.Outcome
		updates := []temporal.SearchAttributeUpdate{keyState.ValueSet(r.state)}
		if run.Outcome != "" {
			updates = append(updates, keyOutcome.ValueSet(run.Outcome))
		}
		if err := workflow.UpsertTypedSearchAttributes(ctx, updates...); err != nil {
			workflow.GetLogger(ctx).Error("upsert search attributes failed", "error", err)
		}
	}
	workflow.SetCurrentDetails(ctx, details(r.m, now, r.in.InboxURL))
	return true
}

// upsertOrg sets the run's BatonOrg search attribute.
func (r *runner) upsertOrg(ctx workflow.Context) {
	if err := workflow.UpsertTypedSearchAttributes(ctx, keyOrg.ValueSet(r.in.Org)); err != nil {
		workflow.GetLogger(ctx).Error("upsert the organization's search attribute failed", "error", err)
	}
}

// details is the markdown the Temporal UI shows as the run's current
// details: its state and the step table.
func details(m *interpreter.Machine, now time.Time, inboxURL string) string {
	v := m.View(now)
	var b strings.Builder
	fmt.Fprintf(&b, "**%s** v%d — run %s is **%s**", v.Run.Process, v.Run.Version, v.Run.ID, v.Run.State)
	if v.Run.Outcome != nil {
		fmt.Fprintf(&b, " (%s)", *v.Run.Outcome)
	}
	if inboxURL != "" {
		fmt.Fprintf(&b, " — [open in the inbox](%s)", InboxLink(inboxURL, v.Run.ID, ""))
	}
	b.WriteString("\n\n| step | kind | state | due |\n|---|---|---|---|\n")
	for _, s := range v.Steps {
		st := "—"
		if s.State != nil {
			st = *s.State
		}
		due := s.Due
		if s.Overdue != nil && *s.Overdue {
			due += " (overdue)"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", s.ID, s.Kind, st, due)
	}
	if inboxURL != "" && len(v.WorkItems) > 0 {
		b.WriteString("\nOpen work: ")
		for i, w := range v.WorkItems {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "[%s on %s](%s)", w.ID, w.StepID, InboxLink(inboxURL, v.Run.ID, w.ID))
		}
		b.WriteString("\n")
	}
	return b.String()
}

// finish waits for running handlers and closes the workflow as the run
// ended: Canceled for a cancelled run, else completed with its outcome.
func (r *runner) finish(ctx workflow.Context) (*Outcome, error) {
	// A Temporal cancellation that arrives once the run is over changes
	// nothing: wait for the handlers regardless.
	dctx, cancel := workflow.NewDisconnectedContext(ctx)
	defer cancel()
	if err := workflow.Await(dctx, func() bool { return workflow.AllHandlersFinished(dctx) }); err != nil {
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
	next.Continued = &Continued{State: state, Recent: keepRecent(r.recent), Seen: r.seen.encode()}
	return workflow.NewContinueAsNewError(ctx, ProcessRun, next)
}
