package workflows

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/baton-run/baton/interpreter"
)

// This file runs a process step's children (baton-subprocess-1) as
// Temporal child workflows of the run, one ProcessRun each. The machine
// asks for them (interpreter.ChildNeeded) and for their cancellation
// (interpreter.ChildCancelNeeded); the run only does it. A child's end
// comes back to its parent as the result of its workflow: the run that
// started it reads it from the child's future (watchChildren), and a run
// that continued as new meanwhile, where that future is gone, from
// Temporal (watchCarried). Children started before changeChildEndsByResult
// also tell their parent by signal (SignalChildEnded), which reaches the
// parent's workflow id whatever run it is then; an end told twice is
// refused the second time, and changes nothing. Children are abandoned
// when their parent's run closes, so that a continue-as-new keeps them;
// the machine cancels the ones it no longer waits for, with its reason.

// ChildEnd is the payload of SignalChildEnded: the child run, the outcome
// it ended with (cancelled for a cancelled run) and its ended.note.
type ChildEnd struct {
	RunID   string  `json:"runId"`
	Outcome string  `json:"outcome"`
	Note    *string `json:"note"`
}

// CancelSignal is the payload of SignalCancel: who cancels the run and why.
type CancelSignal struct {
	By     string `json:"by"`
	Reason string `json:"reason"`
}

// ChildVersionGone is the LoadChild activity's error type when the bound
// version is not in the registry.
const ChildVersionGone = "child_version_gone"

// ChildVersion is the published version a process step runs, as the
// LoadChild activity reads it: its definition, role bindings and own child
// bindings.
type ChildVersion struct {
	Process  *interpreter.Process `json:"process"`
	Roles    map[string]string    `json:"roles,omitempty"`
	Children interpreter.Bindings `json:"children,omitempty"`
}

// changeFanoutBatch versions how a run handles many children: version 1
// applies the signals delivered together in one write (applySignals),
// starts the children that one write asks for from one coroutine
// (startChildren) and watches every child's closing from one coroutine
// (watchChildren). Runs recorded before apply and publish each signal,
// and start and watch each child from coroutines of its own.
//
// The SDK gives every coroutine a turn at each workflow task and at each
// local activity's result, when it runs and again when it replays; a
// thousand children each with a coroutine and a read-model write made a
// million turns, and workflow tasks that outgrew their timeout and were
// replayed whole, slower each time.
//
// Version 2 also keeps at most startWindow children's starts in flight
// (startWindowed), where version 1 asks for every start of a batch in one
// workflow task.
const changeFanoutBatch = "fanout-batch"

// startWindow is how many children's starts a run keeps in flight at
// once since version 2 of changeFanoutBatch. Temporal starts a run's
// children one at a time, each holding the parent's workflow lock while
// it creates the child and records its start, and a start task that
// waits for that lock longer than history.cacheNonUserContextLockTimeout
// (500 ms by default) is put back with a backoff that grows to seconds:
// a thousand starts asked at once left the parent idle between bursts.
// A few starts in flight keep the lock busy; the next ones are asked as
// earlier ones are recorded, in the workflow tasks those records cause.
// The starts asked together also make a small batch of history events,
// which each start reads its initiation back from.
const startWindow = 16

// changeChildEndsByResult versions how a run learns of its children's
// ends: version 1 starts children that end by result (Input.EndsByResult)
// and reads each one's end from its workflow's result, the ends found
// together applied in one write. Runs recorded before start children
// that signal their end (SignalChildEnded) and read only the closing of
// a workflow that did not end its run from its result.
//
// Temporal records a child's start, its end signal and its completion in
// the parent's history, each under the parent's workflow lock and each
// waking the parent for a workflow task: the signal said again what the
// completion says, and a thousand children's ends were a thousand more
// of each. The version is asked as the run starts its first child.
const changeChildEndsByResult = "child-ends-by-result"

// endsByResult reports whether this run's children end by result: version
// 1 of changeChildEndsByResult, asked the first time a start needs it.
func (r *runner) endsByResult(ctx workflow.Context) bool {
	if !r.kids.endsAsked {
		r.kids.endsAsked = true
		r.kids.endsByResult = workflow.GetVersion(ctx, changeChildEndsByResult, workflow.DefaultVersion, 1) == 1
	}
	return r.kids.endsByResult
}

// fanoutVersion is this run's version of changeFanoutBatch, asked the
// first time a signal or a child start needs to know.
func (r *runner) fanoutVersion(ctx workflow.Context) workflow.Version {
	if !r.kids.batchAsked {
		r.kids.batchAsked = true
		r.kids.version = workflow.GetVersion(ctx, changeFanoutBatch, workflow.DefaultVersion, 2)
	}
	return r.kids.version
}

// batching reports whether this run is version 1 or later of
// changeFanoutBatch.
func (r *runner) batching(ctx workflow.Context) bool { return r.fanoutVersion(ctx) >= 1 }

// kids is what a run's workflow keeps of its children between the
// machine's needs and Temporal: the starts and cancellations in flight
// and the versions read.
type kids struct {
	// busy counts the starts and cancellations not yet sent.
	busy int
	// starting holds the children whose start is in flight, by run id.
	starting map[string]bool
	// versions are the LoadChild activities, by process and version.
	versions map[string]workflow.Future
	// batchAsked says version is changeFanoutBatch's version, asked.
	batchAsked bool
	version    workflow.Version
	// inflight counts the starts asked of Temporal and not yet through,
	// since version 2 of changeFanoutBatch (startWindowed).
	inflight int
	// closing are the started children whose closing watchChildren
	// waits for, in start order; watching is set once it runs.
	closing  []startedChild
	watching bool
	// endsAsked says endsByResult is changeChildEndsByResult's version,
	// asked.
	endsAsked    bool
	endsByResult bool
	// ending counts the ends watchChildren took and has not yet applied.
	ending int
}

// startedChild is a child whose workflow Temporal started. byResult says
// it ends by result (Input.EndsByResult).
type startedChild struct {
	runID    string
	f        workflow.ChildWorkflowFuture
	byResult bool
}

// started counts a child's start as no longer in flight.
func (k *kids) started(runID string) {
	delete(k.starting, runID)
	k.busy--
}

// idle reports whether no start or cancellation of a child is in flight,
// and no end of a child that ends by result is left to apply: the run may
// continue as new or close. (Its next run would learn of such an end from
// the watch of carried children, later; and a run that only signals
// its children's ends has none.)
func (k *kids) idle() bool {
	return k.busy == 0 && k.ending == 0 && !slices.ContainsFunc(k.closing, func(c startedChild) bool { return c.byResult && c.f.IsReady() })
}

// perform does the asynchronous needs the machine made: each start and
// each cancellation goes on in a coroutine of its own, so that many
// children start in one workflow task.
func (r *runner) perform(ctx workflow.Context, needs []interpreter.Need) {
	var starts []*interpreter.ChildNeeded
	for _, n := range needs {
		switch n := n.(type) {
		case *interpreter.ChildNeeded:
			if r.kids.starting == nil {
				r.kids.starting = map[string]bool{}
			}
			r.kids.starting[n.Start.RunID] = true
			r.begun.ask(n.Start.RunID)
			r.kids.busy++
			if r.batching(ctx) {
				starts = append(starts, n)
				continue
			}
			workflow.Go(ctx, func(ctx workflow.Context) {
				defer func() { r.kids.busy-- }()
				r.startChild(ctx, n)
				delete(r.kids.starting, n.Start.RunID)
			})
		case *interpreter.ChildCancelNeeded:
			r.kids.busy++
			workflow.Go(ctx, func(ctx workflow.Context) {
				defer func() { r.kids.busy-- }()
				r.cancelChild(ctx, n)
			})
		default:
			workflow.GetLogger(ctx).Error("the run cannot perform a need", "need", fmt.Sprintf("%T", n))
		}
	}
	if len(starts) > 0 {
		if r.fanoutVersion(ctx) >= 2 {
			workflow.Go(ctx, func(ctx workflow.Context) { r.startWindowed(ctx, starts) })
		} else {
			workflow.Go(ctx, func(ctx workflow.Context) { r.startChildren(ctx, starts) })
		}
	}
}

// startingChild is a child whose start was asked of Temporal.
type startingChild struct {
	need *interpreter.ChildNeeded
	f    workflow.ChildWorkflowFuture
}

// through reports whether Temporal started the child or refused to.
func (c startingChild) through() bool { return c.f.GetChildWorkflowExecution().IsReady() }

// startWindowed starts the children of one batch of needs, in order, as
// startChildren does, with at most startWindow starts in flight across
// the run: before asking for the next start it waits for a free place,
// and takes each start that came through meanwhile.
func (r *runner) startWindowed(ctx workflow.Context, needs []*interpreter.ChildNeeded) {
	ctx, _ = workflow.NewDisconnectedContext(ctx)
	var asked []startingChild
	for _, need := range needs {
		for r.kids.inflight >= startWindow {
			// The places may be held by another batch's starts: that
			// batch takes them as they come through.
			if err := workflow.Await(ctx, func() bool {
				return r.kids.inflight < startWindow || slices.ContainsFunc(asked, startingChild.through)
			}); err != nil {
				return
			}
			asked = r.takeStarted(ctx, asked)
		}
		in, initial, err := r.childInput(ctx, need)
		if err != nil {
			r.signal(ctx, need.NotStarted(err.Error()))
			r.kids.started(need.Start.RunID)
			continue
		}
		r.kids.inflight++
		asked = append(asked, startingChild{need: need, f: workflow.ExecuteChildWorkflow(r.childContext(ctx, need, in, initial), ProcessRun, in)})
	}
	for len(asked) > 0 {
		if err := workflow.Await(ctx, func() bool { return slices.ContainsFunc(asked, startingChild.through) }); err != nil {
			return
		}
		asked = r.takeStarted(ctx, asked)
	}
}

// takeStarted takes the starts of asked that came through, in order: a
// started child is watched (watchChildren), one Temporal refused is told
// to the machine. It returns those still in flight.
func (r *runner) takeStarted(ctx workflow.Context, asked []startingChild) []startingChild {
	var through []startingChild
	asked = slices.DeleteFunc(asked, func(c startingChild) bool {
		if c.through() {
			through = append(through, c)
			r.kids.inflight--
			return true
		}
		return false
	})
	for _, c := range through {
		r.takeStart(ctx, c.need, c.f)
	}
	return asked
}

// takeStart takes a child's start once Temporal has it: a started child
// is watched (watchChildren), one Temporal refused is told to the
// machine, and the start is no longer in flight.
func (r *runner) takeStart(ctx workflow.Context, need *interpreter.ChildNeeded, f workflow.ChildWorkflowFuture) {
	if err := f.GetChildWorkflowExecution().Get(ctx, nil); err != nil {
		r.signal(ctx, need.NotStarted("Temporal did not start it: "+err.Error()))
	} else {
		r.watch(ctx, need.Start.RunID, f)
	}
	r.kids.started(need.Start.RunID)
}

// startChildren starts the children of one batch of needs, in order, and
// then waits until Temporal has each, as startChild does for one: every
// start is asked for before the first is waited for, so they all go in
// one workflow task. A child Temporal started is watched by
// watchChildren.
func (r *runner) startChildren(ctx workflow.Context, needs []*interpreter.ChildNeeded) {
	ctx, _ = workflow.NewDisconnectedContext(ctx)
	type pending struct {
		need *interpreter.ChildNeeded
		f    workflow.ChildWorkflowFuture
	}
	var asked []pending
	for _, need := range needs {
		in, initial, err := r.childInput(ctx, need)
		if err != nil {
			r.signal(ctx, need.NotStarted(err.Error()))
			r.kids.started(need.Start.RunID)
			continue
		}
		asked = append(asked, pending{need: need, f: workflow.ExecuteChildWorkflow(r.childContext(ctx, need, in, initial), ProcessRun, in)})
	}
	for _, p := range asked {
		r.takeStart(ctx, p.need, p.f)
	}
}

// watch has watchChildren wait for a started child's closing.
func (r *runner) watch(ctx workflow.Context, runID string, f workflow.ChildWorkflowFuture) {
	r.kids.closing = append(r.kids.closing, startedChild{runID: runID, f: f, byResult: r.kids.endsByResult})
	if !r.kids.watching {
		r.kids.watching = true
		workflow.Go(ctx, r.watchChildren)
	}
}

// watchChildren waits, in one coroutine, for the workflows of the started
// children to close, and tells the machine of those that ended by result,
// in one write for those that closed together, and of those that closed
// without ending their run (closed).
func (r *runner) watchChildren(ctx workflow.Context) {
	ready := func(c startedChild) bool { return c.f.IsReady() }
	for {
		if err := workflow.Await(ctx, func() bool { return slices.ContainsFunc(r.kids.closing, ready) }); err != nil {
			return
		}
		var closed []startedChild
		r.kids.closing = slices.DeleteFunc(r.kids.closing, func(c startedChild) bool {
			if c.f.IsReady() {
				closed = append(closed, c)
				return true
			}
			return false
		})
		var ends []interpreter.Command
		for _, c := range closed {
			if c.byResult {
				ends = append(ends, resultEnd(ctx, c.runID, c.f))
				r.kids.ending++
				continue
			}
			r.closed(ctx, c.runID, c.f.Get(ctx, nil))
		}
		r.applySignals(ctx, ends)
		r.kids.ending -= len(ends)
	}
}

// resultEnd is the end a child that ends by result told by its closed
// workflow: its outcome and ended.note, outcome cancelled for a
// cancelled run (its workflow closed cancelled, with the run's ended as
// details), or failed for a workflow that closed without ending its run.
func resultEnd(ctx workflow.Context, runID string, f workflow.Future) interpreter.ChildEnded {
	var out Outcome
	err := f.Get(ctx, &out)
	var cancelled *temporal.CanceledError
	switch {
	case err == nil:
		end := interpreter.ChildEnded{RunID: runID, Outcome: out.Outcome}
		if out.Ended != nil {
			end.Note = out.Ended.Note
		}
		return end
	case errors.As(err, &cancelled):
		end := interpreter.ChildEnded{RunID: runID, Outcome: interpreter.OutcomeCancelled}
		var ended interpreter.Ended
		if cancelled.HasDetails() && cancelled.Details(&ended) == nil {
			end.Note = ended.Note
		}
		return end
	}
	note := closedNote(closedStatus(err))
	return interpreter.ChildEnded{RunID: runID, Outcome: interpreter.DecisionFailed, Note: &note}
}

// closedNote is the note of a child whose workflow closed, with status,
// without ending its run.
func closedNote(status string) string {
	return "its workflow closed without ending the run: " + status
}

// closedStatus is the status of a child's workflow that closed with err,
// as the watch of carried children says it (ClosedChild.Status): not the
// error's text, which names Temporal's ids and event numbers.
func closedStatus(err error) string {
	var terminated *temporal.TerminatedError
	var timedOut *temporal.TimeoutError
	switch {
	case errors.As(err, &terminated):
		return "terminated"
	case errors.As(err, &timedOut):
		return "timed out"
	}
	return "failed"
}

// closed tells the machine of a child whose workflow closed with err
// without ending its run, for a child that signals its end: one that ends
// or is cancelled says so by signal. One whose workflow closed otherwise
// (terminated, or failed by a bug) never will: while this run lasts, its
// closing stands for its end.
func (r *runner) closed(ctx workflow.Context, runID string, err error) {
	var cancelled *temporal.CanceledError
	if err == nil || errors.As(err, &cancelled) {
		return
	}
	note := closedNote(closedStatus(err))
	r.signal(ctx, interpreter.ChildEnded{RunID: runID, Outcome: interpreter.DecisionFailed, Note: &note})
}

// startChild starts one child workflow and waits until Temporal has it. A
// child that cannot start (its version cannot be read, it refuses its
// inputs, Temporal refuses the start) is told to the machine, which fails
// the step.
func (r *runner) startChild(ctx workflow.Context, need *interpreter.ChildNeeded) {
	// A parent being cancelled still starts what it asked for, and then
	// cancels it with its reason: Temporal's cancellation of the parent, or
	// of this context, would cancel the child without one. So the context
	// is never cancelled.
	ctx, _ = workflow.NewDisconnectedContext(ctx)
	in, initial, err := r.childInput(ctx, need)
	if err != nil {
		r.signal(ctx, need.NotStarted(err.Error()))
		return
	}
	f := workflow.ExecuteChildWorkflow(r.childContext(ctx, need, in, initial), ProcessRun, in)
	if err := f.GetChildWorkflowExecution().Get(ctx, nil); err != nil {
		r.signal(ctx, need.NotStarted("Temporal did not start it: "+err.Error()))
		return
	}
	workflow.Go(ctx, func(ctx workflow.Context) {
		if !in.EndsByResult {
			r.closed(ctx, in.RunID, f.Get(ctx, nil))
		} else {
			r.signal(ctx, resultEnd(ctx, in.RunID, f))
		}
	})
}

// childContext carries the options a child's workflow starts with.
func (r *runner) childContext(ctx workflow.Context, need *interpreter.ChildNeeded, in Input, initial interpreter.RunState) workflow.Context {
	return workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{
		WorkflowID:            in.RunID,
		WorkflowIDReusePolicy: enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
		ParentClosePolicy:     enumspb.PARENT_CLOSE_POLICY_ABANDON,
		StaticSummary: fmt.Sprintf("%s v%d (%s), child of run %s, step %s",
			in.Process.Name, in.Version, in.Mode, r.in.RunID, need.StepID),
		StaticDetails:         staticDetails(in),
		TypedSearchAttributes: startAttributes(in, initial),
	})
}

// childInput builds the child's start from the need and its version, and
// checks it as the child's machine will.
func (r *runner) childInput(ctx workflow.Context, need *interpreter.ChildNeeded) (Input, interpreter.RunState, error) {
	key := fmt.Sprintf("%s@%d", need.Binding.Process, need.Binding.Version)
	if r.kids.versions == nil {
		r.kids.versions = map[string]workflow.Future{}
	}
	f, ok := r.kids.versions[key]
	if !ok {
		actx := workflow.WithActivityOptions(ctx, loadChildOptions(need.Binding))
		f = workflow.ExecuteActivity(actx, ActivityLoadChild, r.in.Org, need.Binding)
		r.kids.versions[key] = f
	}
	var v ChildVersion
	if err := f.Get(ctx, &v); err != nil {
		return Input{}, "", fmt.Errorf("version %d of %s cannot be read: %w", need.Binding.Version, need.Binding.Process, err)
	}
	if v.Process == nil || v.Process.Hash != need.Binding.Hash {
		return Input{}, "", fmt.Errorf("version %d of %s is not the one the step was bound to", need.Binding.Version, need.Binding.Process)
	}
	st := need.Start
	st.Process, st.Roles, st.Children = v.Process, v.Roles, v.Children
	m, err := interpreter.StartRun(st, workflow.Now(ctx))
	if err != nil {
		var e *interpreter.Error
		if errors.As(err, &e) && len(e.Issues) > 0 {
			err = errors.New(strings.Join(e.Issues, "; "))
		}
		return Input{}, "", err
	}
	// Notices as every start since changeNotices: the child delivers its
	// notices without a version marker of its own to ask for it.
	in := Input{Org: r.in.Org, Start: st, InboxURL: r.in.InboxURL, Lean: true, Notices: true, OmitBody: r.in.OmitBody, EndsByResult: r.endsByResult(ctx)}
	return in, m.Run().State, nil
}

// cancelChild asks a child to cancel itself with the machine's reason,
// once its start is through.
func (r *runner) cancelChild(ctx workflow.Context, need *interpreter.ChildCancelNeeded) {
	ctx, cancel := workflow.NewDisconnectedContext(ctx)
	defer cancel()
	if err := workflow.Await(ctx, func() bool { return !r.kids.starting[need.RunID] }); err != nil {
		return
	}
	err := workflow.SignalExternalWorkflow(ctx, need.RunID, "", SignalCancel, CancelSignal{By: need.By, Reason: need.Note}).Get(ctx, nil)
	if err != nil {
		// A child that closed meanwhile needs no cancelling.
		workflow.GetLogger(ctx).Info("cancelling a child failed", "run", r.in.RunID, "child", need.RunID, "error", err)
	}
}

// tellParent tells the run that started this one, when a process step did,
// that it ended, for a child that signals its end (a child that ends by
// result tells it by closing). A parent that has ended no longer listens.
func (r *runner) tellParent(ctx workflow.Context) {
	run := r.m.Run()
	if run.Parent == nil || r.in.EndsByResult {
		return
	}
	end := ChildEnd{RunID: run.ID, Outcome: run.Outcome}
	if run.State == interpreter.RunCancelled {
		end.Outcome = interpreter.OutcomeCancelled
	}
	if run.Ended != nil {
		end.Note = run.Ended.Note
	}
	err := workflow.SignalExternalWorkflow(ctx, run.Parent.RunID, "", SignalChildEnded, end).Get(ctx, nil)
	if err != nil {
		workflow.GetLogger(ctx).Info("telling the parent run failed", "run", run.ID, "parent", run.Parent.RunID, "error", err)
	}
}
