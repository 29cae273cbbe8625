package workflows_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"

	"github.com/baton-run/baton/interpreter"
	"github.com/baton-run/baton/workflows"
)

// A parent cancelled while its children are still starting, with more
// of them asked for than Temporal starts at once, cancels every child
// once Temporal has it, with its reason: none is left running, none
// starts twice, and the parent's workflow closes only after. Both ways
// of cancelling: the cancel_run tool's write and Temporal's cancellation.
func TestCancellingParentWhileChildrenStart(t *testing.T) {
	h := setup(t)
	// No concurrency: the step asks for every child's start at once.
	f := publishFamily(t, h, strings.Replace(rfpSrc, "    concurrency: 2\n", "", 1))
	operator := interpreter.Actor{ID: "u_ops", Kind: interpreter.ActorOperator}
	var names []string
	for i := range 3 * workflows.StartWindow {
		names = append(names, fmt.Sprintf("supplier-%02d", i))
	}
	for _, how := range []string{"tool", "temporal"} {
		t.Run(how, func(t *testing.T) {
			parent := f.start(t, interpreter.ModeLive)
			d, err := h.c.DescribeWorkflowExecution(ctxFor(t), parent, "")
			if err != nil {
				t.Fatal(err)
			}
			firstRun := d.GetWorkflowExecutionInfo().GetExecution().GetRunId()
			h.submitSuppliers(t, parent, names...)
			note := "parent run " + parent + " cancelled: "
			if how == "tool" {
				h.write(t, parent, interpreter.Cancel{Actor: operator, Reason: "The RFP was withdrawn."})
				note += "The RFP was withdrawn."
			} else if err := h.c.CancelWorkflow(ctxFor(t), parent, ""); err != nil {
				t.Fatal(err)
			}
			if v := h.closedView(t, parent, false); v.Run.State != "cancelled" {
				t.Fatalf("the parent ended %s, want cancelled", v.Run.State)
			}
			if status := h.closedStatus(t, parent); status != enumspb.WORKFLOW_EXECUTION_STATUS_CANCELED {
				t.Fatalf("the parent's workflow is %s, want canceled", status)
			}
			if late := startsAfterCancel(h.history(t, parent, firstRun)); late == 0 {
				t.Fatal("every child had started before the cancellation: nothing raced")
			}
			starts, _ := h.childStarts(t, parent, firstRun)
			if len(starts) != len(names) {
				t.Fatalf("%d children started, want %d", len(starts), len(names))
			}
			for id, n := range starts {
				if n != 1 {
					t.Fatalf("child %s started %d times", id, n)
				}
				v := h.closedView(t, id, true)
				if v.Run.State != "cancelled" || v.Run.Ended == nil || v.Run.Ended.Note == nil || !strings.HasPrefix(*v.Run.Ended.Note, note) {
					t.Fatalf("child %s: %+v %+v", id, v.Run, v.Run.Ended)
				}
				if status := h.closedStatus(t, id); status != enumspb.WORKFLOW_EXECUTION_STATUS_CANCELED {
					t.Fatalf("child %s's workflow is %s, want canceled", id, status)
				}
			}
		})
	}
}

// startsAfterCancel counts the children whose start a run's history
// records after the run's cancellation came, by tool or by Temporal.
func startsAfterCancel(hist *historypb.History) int {
	late, cancelled := 0, false
	for _, ev := range hist.Events {
		switch {
		case ev.GetWorkflowExecutionCancelRequestedEventAttributes() != nil:
			cancelled = true
		case ev.GetWorkflowExecutionUpdateAcceptedEventAttributes().GetAcceptedRequest().GetInput().GetName() == workflows.UpdateCancel:
			cancelled = true
		case cancelled && ev.GetChildWorkflowExecutionStartedEventAttributes() != nil:
			late++
		}
	}
	return late
}

// closedStatus waits until a run's workflow closed and returns its status.
func (h *harness) closedStatus(t *testing.T, runID string) enumspb.WorkflowExecutionStatus {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		status, _ := h.describe(t, runID, "")
		if status != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
			return status
		}
		if time.Now().After(deadline) {
			t.Fatalf("run %s's workflow never closed", runID)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
