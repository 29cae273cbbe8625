package workflows_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"go.temporal.io/sdk/client"

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
	h := setupOn(t, c, nil)
	f := publishFamily(t, h, rfpSrc)
	parent := f.start(t, interpreter.ModeLive)
	firstRun := h.currentRun(t, parent)
	names := []string{"a", "b", "c", "d", "e", "f", "g", "h"}
	h.submitSuppliers(t, parent, names...)

	// Screen children one at a time until the parent has continued as new
	// while children run: those running then were started by an earlier
	// run, whose futures are gone.
	screened := map[string]bool{}
	var carried []string
	for carried == nil {
		v := h.until(t, parent, "a child to screen", func(v *interpreter.View) bool {
			for _, id := range running(v) {
				if !screened[id] {
					return true
				}
			}
			return false
		})
		if h.currentRun(t, parent) != firstRun {
			for _, id := range running(v) {
				if !screened[id] {
					carried = append(carried, id)
				}
			}
			break
		}
		for _, id := range running(v) {
			if !screened[id] {
				screened[id] = true
				h.screen(t, id)
				break
			}
		}
		if len(screened) == len(names) {
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
	screened[victim] = true
	for {
		v := h.until(t, parent, "a child to screen or the end", func(v *interpreter.View) bool {
			if v.Run.State != "active" && v.Run.State != "waiting" {
				return true
			}
			for _, id := range running(v) {
				if !screened[id] {
					return true
				}
			}
			return false
		})
		var next string
		for _, id := range running(v) {
			if !screened[id] {
				next = id
				break
			}
		}
		if next == "" {
			break
		}
		screened[next] = true
		h.screen(t, next)
	}
	v := h.closedView(t, parent, false)
	want := "child run " + victim + ` ended failed: "its workflow closed without ending the run: terminated"`
	if v.Run.State != "ended" || *v.Run.Outcome != interpreter.DecisionFailed || *v.Run.Ended.Note != want {
		t.Fatalf("parent of a terminated carried child: %+v, note %q", v.Run, *v.Run.Ended.Note)
	}
	h.saveRun(t, parent, now, "rfp-children-watch-carried")
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
