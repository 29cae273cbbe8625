package workflows

import (
	"slices"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/baton-run/baton/interpreter"
)

// This file watches the children a run carried across continue-as-new.
// The run that started a child learns of its end from the child's future
// (watchChildren), but a future does not survive continue-as-new, and
// Temporal tells only the run that started the child. So a run that
// continued as new while children ran asks Temporal about them, by the
// WatchChildren activity, until none it carried is running. A child
// started before changeChildEndsByResult also says its end by signal
// (SignalChildEnded), which reaches whichever run its parent is then; the
// watch then finds an end the machine has, or will refuse as told twice.

// ActivityWatchChildren waits until some of a run's children ended or
// closed without ending their run.
const ActivityWatchChildren = "WatchChildren"

// changeWatchCarried versions the watch of carried children: version 1
// runs WatchChildren in a run that continued as new while children ran,
// for the children whose workflow closed without ending their run;
// version 2 also asks it for the children that ended their run, with
// their end (WatchChildrenRequest.Ends), since children that end by
// result (changeChildEndsByResult) say it by no signal. It is asked only
// in such a run, so other runs record no marker. Runs recorded before
// wait for a carried child's signal alone.
const changeWatchCarried = "watch-carried-children"

// WatchChildrenRequest is WatchChildren's argument: the parent's workflow
// id and the children it waits for. For is how long the activity watches
// before it returns with nothing, so that the parent's history gains
// three events an hour at most, not one a poll. Ends asks for the
// children that ended their run too.
type WatchChildrenRequest struct {
	Parent   string        `json:"parent"`
	Children []string      `json:"children"`
	For      time.Duration `json:"for"`
	Ends     bool          `json:"ends,omitempty"`
}

// ClosedChild is a child whose workflow closed, as WatchChildren found
// it: its run id and the workflow's status ("terminated", "failed",
// "timed out" for one that closed without ending its run). Ended says it
// ended its run, with Outcome (cancelled for a cancelled run) and its
// ended.note; WatchChildren reports such children when asked for Ends.
type ClosedChild struct {
	RunID   string  `json:"runId"`
	Status  string  `json:"status"`
	Ended   bool    `json:"ended,omitempty"`
	Outcome string  `json:"outcome,omitempty"`
	Note    *string `json:"note,omitempty"`
}

// watchFor is WatchRequest.For.
const watchFor = time.Hour

// watchOptions run WatchChildren: it heartbeats between its looks at the
// children, and is tried again for as long as the run waits.
func watchOptions() workflow.ActivityOptions {
	return workflow.ActivityOptions{
		StartToCloseTimeout: watchFor + 5*time.Minute,
		HeartbeatTimeout:    2 * time.Minute,
		RetryPolicy:         &temporal.RetryPolicy{InitialInterval: time.Second, MaximumInterval: time.Minute},
		Summary:             "watch the children carried across continue-as-new",
	}
}

// runningChildren are the children the run's process steps wait for, in
// step and item order.
func runningChildren(run *interpreter.Run) []string {
	var ids []string
	for _, sr := range run.Steps {
		if sr.State != interpreter.StepWaiting || sr.Fanout == nil {
			continue
		}
		for _, c := range sr.Fanout.Children {
			if !c.Ended {
				ids = append(ids, c.RunID)
			}
		}
	}
	return ids
}

// watchCarried starts the watch of the children a continued run carries
// as running, when there are any.
func (r *runner) watchCarried(ctx workflow.Context) {
	if r.in.Continued == nil {
		return
	}
	carried := runningChildren(r.m.Run())
	if len(carried) == 0 {
		return
	}
	v := workflow.GetVersion(ctx, changeWatchCarried, workflow.DefaultVersion, 2)
	if v == workflow.DefaultVersion {
		return
	}
	// The watch stops once no child it carried runs, or the run is over:
	// checked each time the machine moves on, not at every turn of the
	// run's coroutines.
	ctx, stop := workflow.WithCancel(ctx)
	left := func() bool {
		running := runningChildren(r.m.Run())
		carried = slices.DeleteFunc(carried, func(id string) bool { return !slices.Contains(running, id) })
		return len(carried) > 0 && !r.m.Run().State.Over()
	}
	workflow.Go(ctx, func(ctx workflow.Context) {
		for seq := r.m.Run().Seq; ; seq = r.m.Run().Seq {
			if err := workflow.Await(ctx, func() bool { return r.m.Run().Seq != seq }); err != nil {
				return
			}
			if !left() {
				stop()
				return
			}
		}
	})
	workflow.Go(ctx, func(ctx workflow.Context) {
		actx := workflow.WithActivityOptions(ctx, watchOptions())
		for {
			if !left() {
				return
			}
			var closed []ClosedChild
			q := WatchChildrenRequest{Parent: r.in.RunID, Children: carried, For: watchFor, Ends: v >= 2}
			err := workflow.ExecuteActivity(actx, ActivityWatchChildren, q).Get(actx, &closed)
			if err != nil {
				if ctx.Err() != nil {
					return
				}
				workflow.GetLogger(ctx).Warn("watching carried children failed", "run", r.in.RunID, "error", err)
				if workflow.Sleep(ctx, time.Minute) != nil {
					return
				}
				continue
			}
			var cmds []interpreter.Command
			for _, c := range closed {
				if c.Ended {
					cmds = append(cmds, interpreter.ChildEnded{RunID: c.RunID, Outcome: c.Outcome, Note: c.Note})
					continue
				}
				note := closedNote(c.Status)
				cmds = append(cmds, interpreter.ChildEnded{RunID: c.RunID, Outcome: interpreter.DecisionFailed, Note: &note})
			}
			r.applySignals(ctx, cmds)
		}
	})
}
