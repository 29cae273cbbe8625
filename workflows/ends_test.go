package workflows_test

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/workflow"

	"github.com/baton-run/baton/internal/testing/workertest"
	"github.com/baton-run/baton/interpreter"
	"github.com/baton-run/baton/workflows"
)

// A child started by a parent of this version ends by result: it sends no
// end signal, the parent's history receives none, and the parent still
// joins every child with its outcome, in item order. A child cancelled by
// a write, or in Temporal, comes back cancelled with its note.
func TestChildrenEndByResult(t *testing.T) {
	h := setup(t)
	f := publishFamily(t, h, rfpSrc)
	parent := f.start(t, interpreter.ModeLive)
	h.submitSuppliers(t, parent, "Acme", "Birch", "Cobalt")
	kids := h.screenEach(t, parent, 3)
	v := h.until(t, parent, "the join", func(v *interpreter.View) bool { return stepState(v, "screen_each") == "done" })
	items, _ := v.Data.Steps["screen_each"].Output["items"].([]any)
	var got []string
	for _, it := range items {
		m := it.(map[string]any)
		got = append(got, fmt.Sprint(m["runId"], " ", m["outcome"], " ", m["note"]))
	}
	want := []string{kids[0] + " cleared <nil>", kids[1] + " cleared <nil>", kids[2] + " cleared <nil>"}
	if !slices.Equal(got, want) || stepState(v, "compare") != "ready" {
		t.Fatalf("joined %v, want %v; compare %s", got, want, stepState(v, "compare"))
	}
	h.endsByResult(t, parent, kids...)
	h.save(t, parent, "rfp-children-ends")

	operator := interpreter.Actor{ID: "u_ops", Kind: interpreter.ActorOperator}
	parent, kid := f.startWithChild(t)
	h.write(t, kid, interpreter.Cancel{Actor: operator, Reason: "Duplicate supplier."})
	pv := h.closedView(t, parent, false)
	if note := "child run " + kid + ` ended cancelled: "Duplicate supplier."`; pv.Run.State != "ended" || *pv.Run.Outcome != interpreter.DecisionFailed || *pv.Run.Ended.Note != note {
		t.Fatalf("parent of a child cancelled by a write: %+v, note %q, want %q", pv.Run, *pv.Run.Ended.Note, note)
	}
	h.endsByResult(t, parent, kid)

	parent, kid = f.startWithChild(t)
	if err := h.c.CancelWorkflow(ctxFor(t), kid, ""); err != nil {
		t.Fatal(err)
	}
	kv := h.closedView(t, kid, true)
	pv = h.closedView(t, parent, false)
	if kv.Run.State != "cancelled" || kv.Run.Ended.Note == nil {
		t.Fatalf("child cancelled in Temporal: %+v %+v", kv.Run, kv.Run.Ended)
	}
	if note := "child run " + kid + " ended cancelled: " + strconv.Quote(*kv.Run.Ended.Note); *pv.Run.Ended.Note != note {
		t.Fatalf("parent of a child cancelled in Temporal: note %q, want %q", *pv.Run.Ended.Note, note)
	}
	h.endsByResult(t, parent, kid)
}

// A parent that starts children that signal their end, as parents from
// before changeChildEndsByResult did, and continues as new while they run,
// still joins them in the runs that carry them: an end comes both by
// signal and by the watch of carried children, and the second changes
// nothing. Every child starts once and joins once.
func TestSignallingChildrenCarriedByANewRun(t *testing.T) {
	older := &olderWorker{change: workflows.ChangeChildEndsByResult}
	older.before.Store(true)
	h := setupContinuing(t, &workertest.Options{Interceptors: []interceptor.WorkerInterceptor{older}})
	// Four children at a time, so that some the first run started still
	// run, unscreened, as it continues as new.
	f := publishFamily(t, h, strings.Replace(rfpSrc, "concurrency: 2", "concurrency: 4", 1))
	parent, firstRun := f.startFanout(t)
	var screened []string
	continued := false
	for len(screened) < len(suppliers) {
		next, _ := h.nextToScreen(t, parent, screened)
		if now := h.currentRun(t, parent); now != firstRun && !continued {
			// The worker is of this version from here on, and runs
			// start children that end by result; the ones running were
			// started by the first run and signal. Their ends come once
			// the run that carries them watches them.
			continued = true
			older.before.Store(false)
			deadline := time.Now().Add(30 * time.Second)
			for !slices.ContainsFunc(h.history(t, parent, now).Events, func(ev *historypb.HistoryEvent) bool { return watchesEnds(t, ev) }) {
				if time.Now().After(deadline) {
					t.Fatal("the continued run never watched the children it carries")
				}
				time.Sleep(50 * time.Millisecond)
			}
		}
		screened = append(screened, next)
		h.screen(t, next)
	}
	v := h.until(t, parent, "the join", func(v *interpreter.View) bool { return stepState(v, "screen_each") == "done" })
	items, _ := v.Data.Steps["screen_each"].Output["items"].([]any)
	joined := map[string]int{}
	for _, it := range items {
		m := it.(map[string]any)
		id, _ := m["runId"].(string)
		if m["outcome"] != "cleared" {
			t.Fatalf("joined %v", m)
		}
		joined[id]++
	}
	if len(items) != len(suppliers) || len(joined) != len(suppliers) || stepState(v, "compare") != "ready" {
		t.Fatalf("joined %d items of %d children (%v), compare %s", len(items), len(joined), joined, stepState(v, "compare"))
	}
	if !continuedWithChildren(h.history(t, parent, firstRun)) {
		t.Fatal("the first run did not continue as new while children ran")
	}
	starts, _ := h.childStarts(t, parent, firstRun)
	for id, n := range starts {
		if n != 1 || joined[id] != 1 {
			t.Fatalf("child %s started %d times, joined %d times", id, n, joined[id])
		}
	}
	// The first run's children signalled; a later run received some of
	// those signals, and watched the children it carried for their ends.
	signalled, watched := 0, false
	for id := h.nextRun(t, parent, firstRun); id != ""; id = h.nextRun(t, parent, id) {
		for _, ev := range h.history(t, parent, id).Events {
			if a := ev.GetWorkflowExecutionSignaledEventAttributes(); a != nil && a.GetSignalName() == workflows.SignalChildEnded {
				signalled++
			}
			if watchesEnds(t, ev) {
				watched = true
			}
		}
	}
	if signalled == 0 || !watched {
		t.Fatalf("the runs after the first received %d end signals, watched ends %v", signalled, watched)
	}
}

// olderWorker has the workflows of the worker it intercepts ask for
// change's version as a worker from before the change did while before is
// set: their newest supported version is workflow.DefaultVersion.
type olderWorker struct {
	interceptor.WorkerInterceptorBase
	change string
	before atomic.Bool
}

func (o *olderWorker) InterceptWorkflow(ctx workflow.Context, next interceptor.WorkflowInboundInterceptor) interceptor.WorkflowInboundInterceptor {
	return &olderWorkflow{WorkflowInboundInterceptorBase: interceptor.WorkflowInboundInterceptorBase{Next: next}, o: o}
}

type olderWorkflow struct {
	interceptor.WorkflowInboundInterceptorBase
	o *olderWorker
}

func (w *olderWorkflow) Init(out interceptor.WorkflowOutboundInterceptor) error {
	return w.Next.Init(&olderCalls{WorkflowOutboundInterceptorBase: interceptor.WorkflowOutboundInterceptorBase{Next: out}, o: w.o})
}

type olderCalls struct {
	interceptor.WorkflowOutboundInterceptorBase
	o *olderWorker
}

func (c *olderCalls) GetVersion(ctx workflow.Context, changeID string, minSupported, maxSupported workflow.Version) workflow.Version {
	if changeID == c.o.change && c.o.before.Load() {
		maxSupported = workflow.DefaultVersion
	}
	return c.Next.GetVersion(ctx, changeID, minSupported, maxSupported)
}

// endsByResult checks that a parent's children end by result: each was
// started so, and no run of the parent received an end signal.
func (h *harness) endsByResult(t *testing.T, parent string, kids ...string) {
	t.Helper()
	for id := h.firstRun(t, parent); id != ""; id = h.nextRun(t, parent, id) {
		for _, ev := range h.history(t, parent, id).Events {
			if a := ev.GetWorkflowExecutionSignaledEventAttributes(); a != nil && a.GetSignalName() == workflows.SignalChildEnded {
				t.Fatalf("parent %s run %s received an end signal: %v", parent, id, a)
			}
		}
	}
	for _, kid := range kids {
		hist := h.history(t, kid, "")
		var in workflows.Input
		if err := workflows.DataConverter.FromPayloads(hist.Events[0].GetWorkflowExecutionStartedEventAttributes().GetInput(), &in); err != nil {
			t.Fatal(err)
		}
		if !in.EndsByResult {
			t.Fatalf("child %s was started to signal its end", kid)
		}
		for _, ev := range hist.Events {
			if ev.GetSignalExternalWorkflowExecutionInitiatedEventAttributes() != nil {
				t.Fatalf("child %s signalled", kid)
			}
		}
	}
}

// watchesEnds reports whether an event schedules a watch of carried
// children that reports their ends.
func watchesEnds(t *testing.T, ev *historypb.HistoryEvent) bool {
	a := ev.GetActivityTaskScheduledEventAttributes()
	if a == nil || a.GetActivityType().GetName() != workflows.ActivityWatchChildren {
		return false
	}
	var q workflows.WatchChildrenRequest
	if err := workflows.DataConverter.FromPayloads(a.GetInput(), &q); err != nil {
		t.Fatal(err)
	}
	return q.Ends
}

// firstRun is the run id of a workflow's first run.
func (h *harness) firstRun(t *testing.T, id string) string {
	t.Helper()
	d, err := h.c.DescribeWorkflowExecution(ctxFor(t), id, "")
	if err != nil {
		t.Fatal(err)
	}
	return d.GetWorkflowExecutionInfo().GetFirstRunId()
}

// nextRun is the run a run of a workflow continued as, or "".
func (h *harness) nextRun(t *testing.T, id, runID string) string {
	t.Helper()
	hist := h.history(t, id, runID)
	if a := hist.Events[len(hist.Events)-1].GetWorkflowExecutionContinuedAsNewEventAttributes(); a != nil {
		return a.GetNewExecutionRunId()
	}
	return ""
}
