package workflows_test

import (
	"context"
	"slices"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/baton-run/baton/internal/testing/workertest"
	"github.com/baton-run/baton/interpreter"
	temporaldev "github.com/baton-run/baton/temporal-dev"
	"github.com/baton-run/baton/workflows"
)

// A child whose workflow is terminated after its parent continued as new
// is seen by the parent: the continued run watches the children it
// carries (WatchChildren), counts the terminated one failed, and, once
// the others have ended, fails with a note naming it, as the run that
// started the child would have.
func TestTerminatedCarriedChildIsSeen(t *testing.T) {
	h := setupContinuing(t, nil)
	f := publishFamily(t, h, rfpSrc)
	parent, firstRun := f.startFanout(t)

	// Screen children one at a time until the parent has continued as new
	// while children run: those running then were started by an earlier
	// run, whose futures are gone.
	var screened, carried []string
	for carried == nil {
		next, v := h.nextToScreen(t, parent, screened)
		if h.currentRun(t, parent) != firstRun {
			for _, id := range running(v) {
				if !slices.Contains(screened, id) {
					carried = append(carried, id)
				}
			}
			break
		}
		screened = append(screened, next)
		h.screen(t, next)
		if len(screened) == len(suppliers) {
			t.Fatal("the parent never continued as new while children ran")
		}
	}
	now := h.currentRun(t, parent)
	starts, _ := h.childStarts(t, parent, now)
	victim := carried[0]
	if starts[victim] != 0 {
		t.Fatalf("child %s was started by the parent's current run %s, not carried", victim, now)
	}
	h.until(t, victim, "the child's start", func(*interpreter.View) bool { return true })
	if err := h.c.TerminateWorkflow(ctxFor(t), victim, "", "stuck supplier registry"); err != nil {
		t.Fatal(err)
	}
	h.until(t, parent, "the terminated child's end", func(v *interpreter.View) bool {
		return !slices.Contains(running(v), victim)
	})
	screened = append(screened, victim)
	for {
		v := h.until(t, parent, "a child to screen or the end", func(v *interpreter.View) bool {
			return (v.Run.State != "active" && v.Run.State != "waiting") || unscreened(v, screened) != ""
		})
		next := unscreened(v, screened)
		if next == "" {
			break
		}
		screened = append(screened, next)
		h.screen(t, next)
	}
	v := h.closedView(t, parent, false)
	want := "child run " + victim + ` ended failed: "its workflow closed without ending the run: terminated"`
	if v.Run.State != "ended" || *v.Run.Outcome != interpreter.DecisionFailed || *v.Run.Ended.Note != want {
		t.Fatalf("parent of a terminated carried child: %+v, note %q", v.Run, *v.Run.Ended.Note)
	}
	h.saveRun(t, parent, now, "rfp-children-watch-carried")
}

// setupContinuing is setupWith on a Temporal server of its own that
// suggests continue-as-new after 80 events, so that a fan-out continues as
// new while children run.
func setupContinuing(t *testing.T, o *workertest.Options) *harness {
	t.Helper()
	if testing.Short() {
		t.Skip("integration test: needs the embedded Temporal server and PostgreSQL")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	srv, err := temporaldev.Start(ctx, &temporaldev.Options{SearchAttributes: workflows.SearchAttributes, SuggestContinueAsNew: 80})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Stop() })
	c, err := srv.NewClient(ctx, client.Options{Identity: identity, DataConverter: workflows.DataConverter})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return setupOn(t, c, o)
}

// The watch of carried children stops once none of them runs: after the
// join, the parent, still running at its next step, has no activity
// pending but cancelled, where a watch left running would poll for up to
// an hour. (The activity learns of its cancellation at a heartbeat, which
// the SDK may hold back for most of its heartbeat timeout.)
func TestCarriedWatchStopsWhenTheChildrenEnd(t *testing.T) {
	h := setupContinuing(t, nil)
	f := publishFamily(t, h, rfpSrc)
	parent, firstRun := f.startFanout(t)
	h.screenEach(t, parent, len(suppliers))
	h.until(t, parent, "the join", func(v *interpreter.View) bool { return stepState(v, "compare") == "ready" })
	watched := false
	for id := firstRun; id != ""; {
		hist := h.history(t, parent, id)
		id = ""
		for _, ev := range hist.Events {
			if a := ev.GetActivityTaskScheduledEventAttributes(); a != nil && a.GetActivityType().GetName() == workflows.ActivityWatchChildren {
				watched = true
			}
			if a := ev.GetWorkflowExecutionContinuedAsNewEventAttributes(); a != nil {
				id = a.GetNewExecutionRunId()
			}
		}
	}
	if !watched {
		t.Fatal("no run of the parent watched carried children: it never continued as new while children ran")
	}
	deadline := time.Now().Add(time.Minute)
	for {
		d, err := h.c.DescribeWorkflowExecution(ctxFor(t), parent, "")
		if err != nil {
			t.Fatal(err)
		}
		live := 0
		for _, a := range d.GetPendingActivities() {
			if a.GetState() != enumspb.PENDING_ACTIVITY_STATE_CANCEL_REQUESTED {
				live++
			}
		}
		if live == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the parent at its next step still has %d activities pending: %v", live, d.GetPendingActivities()[0].GetActivityType().GetName())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// currentRun is the run id of a workflow's latest run.
func (h *harness) currentRun(t *testing.T, id string) string {
	t.Helper()
	d, err := h.c.DescribeWorkflowExecution(ctxFor(t), id, "")
	if err != nil {
		t.Fatal(err)
	}
	return d.GetWorkflowExecutionInfo().GetExecution().GetRunId()
}

// running are the running children of the parent's screen_each step.
func running(v *interpreter.View) []string {
	if c := stepView(v, "screen_each").Children; c != nil {
		return c.RunningIDs
	}
	return nil
}

// suppliers are the suppliers a fan-out that continues as new screens:
// more children than one run's history holds on setupContinuing's server.
var suppliers = []string{"a", "b", "c", "d", "e", "f", "g", "h"}

// startFanout starts a live run of the family's parent and submits
// suppliers to its collect step. It returns the run's id and its first
// run.
func (f *family) startFanout(t *testing.T) (parent, firstRun string) {
	t.Helper()
	parent = f.start(t, interpreter.ModeLive)
	firstRun = f.h.currentRun(t, parent)
	f.h.submitSuppliers(t, parent, suppliers...)
	return parent, firstRun
}

// unscreened is the first running child of the parent's screen_each step
// that is not in screened, or "".
func unscreened(v *interpreter.View, screened []string) string {
	for _, id := range running(v) {
		if !slices.Contains(screened, id) {
			return id
		}
	}
	return ""
}

// nextToScreen waits until the parent's screen_each step runs a child not
// in screened, and returns the first such child and the view it runs in.
func (h *harness) nextToScreen(t *testing.T, parent string, screened []string) (string, *interpreter.View) {
	t.Helper()
	v := h.until(t, parent, "a child to screen", func(v *interpreter.View) bool { return unscreened(v, screened) != "" })
	return unscreened(v, screened), v
}

// screenEach screens the children of the parent's screen_each step one
// at a time, as each runs, until it has screened n, and returns them in
// the order it screened them.
func (h *harness) screenEach(t *testing.T, parent string, n int) []string {
	t.Helper()
	var screened []string
	for len(screened) < n {
		next, _ := h.nextToScreen(t, parent, screened)
		screened = append(screened, next)
		h.screen(t, next)
	}
	return screened
}
