package workflows_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"

	"github.com/baton-run/baton/internal/store"
	"github.com/baton-run/baton/internal/testing/spectest"
	"github.com/baton-run/baton/interpreter"
	"github.com/baton-run/baton/workflows"
)

// The child every parent here runs: one agent step, then a finish.
const screeningSrc = `---
name: screening
description: Screen one supplier.
inputs:
  supplierName: string
steps:
  - id: screen
    agent: Screen the supplier.
    output: { cleared: boolean }
  - id: ok
    finish: cleared
---
Screen the supplier named in the inputs.
`

// rfpSrc fans out over its suppliers, two at a time.
const rfpSrc = `---
name: rfp
description: Run an RFP.
inputs:
  rfpId: string
steps:
  - id: collect
    agent: List every supplier that answered.
    output: { suppliers: { type: list, items: object } }
  - id: screen_each
    process: screening
    for_each: steps.collect.output.suppliers
    inputs: { supplierName: item.name }
    concurrency: 2
    next: compare
  - id: compare
    agent: Compare the screened suppliers.
  - id: done
    finish: awarded
---
Run the RFP.
`

// family is a parent process and its published child in one harness.
type family struct {
	h      *harness
	parent *interpreter.Process
	bound  interpreter.Bindings
}

// publishFamily publishes the child in the harness's registry and binds
// the parent to it, as publication does.
func publishFamily(t *testing.T, h *harness, parentSrc string) *family {
	t.Helper()
	return publishFamilyOf(t, h, screeningSrc, parentSrc)
}

// publishFamilyOf is publishFamily with the child's source.
func publishFamilyOf(t *testing.T, h *harness, childSrc, parentSrc string) *family {
	t.Helper()
	ctx := ctxFor(t)
	offer := interpreter.DefaultOffer()
	offer.Profiles = append(offer.Profiles, interpreter.ProfileSubprocess)
	child, err := interpreter.Parse([]byte(childSrc), &interpreter.ParseOptions{Offer: &offer})
	if err != nil {
		t.Fatal(err)
	}
	def, err := json.Marshal(child)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.store.PutDraft(ctx, nil, store.Draft{Org: org, Name: child.Name, Source: childSrc, Definition: def, Hash: child.Hash, ImportedBy: "u_ops"}); err != nil {
		t.Fatal(err)
	}
	v, err := h.store.Publish(ctx, nil, org, child.Name, "u_ops", nil)
	if err != nil {
		t.Fatal(err)
	}
	cat := interpreter.NewCatalog("published in this organization")
	cat.Add(interpreter.CatalogEntry{Process: child, Version: v.Version}, true)
	offer.Processes = cat
	p, bound, err := interpreter.ParseAndBind([]byte(parentSrc), &interpreter.ParseOptions{Offer: &offer})
	if err != nil {
		t.Fatal(err)
	}
	return &family{h: h, parent: p, bound: bound}
}

// start starts a run of the parent in mode and returns its id.
func (f *family) start(t *testing.T, mode string) string {
	t.Helper()
	return f.startWith(t, mode, interpreter.Values{"rfpId": "RFP-7"})
}

// startWith is start with the run's inputs.
func (f *family) startWith(t *testing.T, mode string, inputs interpreter.Values) string {
	t.Helper()
	rid := "req-" + randomHex(8)
	_, err := f.h.runs.StartRun(ctxFor(t), workflows.Input{Org: org, RequestID: rid, Digest: rid, Start: interpreter.Start{
		Process: f.parent, Version: 1, Inputs: inputs, Mode: mode, Starter: starter, Children: f.bound,
	}})
	if err != nil {
		t.Fatalf("start %s: %v", f.parent.Name, err)
	}
	return workflows.RunID(org, rid)
}

// startWithChild starts a live run of the parent, an rfp, over one
// supplier, and waits until the child that screens it has started. It
// returns the parent and the child.
func (f *family) startWithChild(t *testing.T) (parent, kid string) {
	t.Helper()
	parent = f.start(t, interpreter.ModeLive)
	f.h.submitSuppliers(t, parent, "Acme")
	kid = stepView(f.h.started(t, parent, 1), "screen_each").Children.RunningIDs[0]
	f.h.until(t, kid, "the child's start", func(*interpreter.View) bool { return true })
	return parent, kid
}

// write sends one command to a run as the gateway does and returns the
// answer's JSON.
func (h *harness) write(t *testing.T, runID string, cmd interpreter.Command) json.RawMessage {
	t.Helper()
	rid := "req-" + randomHex(8)
	res, err := h.runs.Write(ctxFor(t), workflows.Write{Org: org, RunID: runID, RequestID: rid, Digest: rid, Command: cmd})
	if err != nil {
		t.Fatalf("%T to %s: %v", cmd, runID, err)
	}
	return res
}

// viewOf returns a run's view; a child's must be core-2's exactly.
func (h *harness) viewOf(t *testing.T, runID string, core bool) *interpreter.View {
	t.Helper()
	raw, err := h.runs.View(ctxFor(t), runID)
	if err != nil {
		t.Fatalf("view of %s: %v", runID, err)
	}
	if core {
		spectest.Validate(t, "run-view.json", raw)
	}
	return decodeView(t, raw)
}

// until polls a run's view until ok says it holds: a child's end reaches
// its parent as its workflow closes, after the write that ended it answered.
func (h *harness) until(t *testing.T, runID, what string, ok func(v *interpreter.View) bool) *interpreter.View {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		raw, err := h.runs.View(ctxFor(t), runID)
		if err == nil {
			v := decodeView(t, raw)
			if ok(v) {
				return v
			}
			if time.Now().After(deadline) {
				t.Fatalf("run %s: %s never came; steps %+v, ended %+v", runID, what, v.Steps, v.Run.Ended)
			}
		} else if time.Now().After(deadline) || !errors.Is(err, workflows.ErrNoRun) {
			t.Fatalf("run %s: %s: %v", runID, what, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// closedView is an ended run's view: its workflow may have closed, and
// then the read model keeps it.
func (h *harness) closedView(t *testing.T, runID string, core bool) *interpreter.View {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		final, err := h.store.FinalView(ctxFor(t), org, runID)
		if err == nil && len(final) > 0 {
			if core {
				spectest.Validate(t, "run-view.json", final)
			}
			return decodeView(t, final)
		}
		if time.Now().After(deadline) {
			t.Fatalf("run %s never ended: %v", runID, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// started waits until n children of the parent's screen_each step run:
// its view names a child once Temporal has started it.
func (h *harness) started(t *testing.T, parent string, n int) *interpreter.View {
	t.Helper()
	return h.until(t, parent, fmt.Sprintf("%d children running", n), func(v *interpreter.View) bool {
		c := stepView(v, "screen_each").Children
		return c != nil && c.Running >= n
	})
}

func stepView(v *interpreter.View, id string) interpreter.StepView {
	for _, s := range v.Steps {
		if s.ID == id {
			return s
		}
	}
	return interpreter.StepView{}
}

// submitSuppliers claims and submits the parent's collect step.
func (h *harness) submitSuppliers(t *testing.T, runID string, names ...string) {
	t.Helper()
	items := []any{}
	for _, n := range names {
		items = append(items, map[string]any{"name": n})
	}
	h.write(t, runID, interpreter.Claim{StepID: "collect", Actor: agent, LeaseID: "lc", Lease: 10 * time.Minute})
	h.write(t, runID, interpreter.Submit{StepID: "collect", LeaseID: "lc", Actor: agent,
		Submission: interpreter.Submission{Output: interpreter.Values{"suppliers": items}, Summary: ptr("Listed them.")}})
}

// screen works a child to its finish: claim, then submit.
func (h *harness) screen(t *testing.T, childID string) {
	t.Helper()
	h.until(t, childID, "the child's start", func(v *interpreter.View) bool { return true })
	lease := "l-" + childID
	h.write(t, childID, interpreter.Claim{StepID: "screen", Actor: agent, LeaseID: lease, Lease: 10 * time.Minute})
	h.write(t, childID, interpreter.Submit{StepID: "screen", LeaseID: lease, Actor: agent,
		Submission: interpreter.Submission{Output: interpreter.Values{"cleared": true}, Summary: ptr("Clean.")}})
}

// childStarts counts the child workflows each run of a parent started, by
// workflow id, across its continued runs; first is the first run's id.
func (h *harness) childStarts(t *testing.T, parentID, first string) (starts map[string]int, runs int) {
	t.Helper()
	starts = map[string]int{}
	for id := first; id != ""; runs++ {
		hist := h.history(t, parentID, id)
		id = ""
		for _, ev := range hist.Events {
			if a := ev.GetStartChildWorkflowExecutionInitiatedEventAttributes(); a != nil {
				starts[a.GetWorkflowId()]++
			}
			if a := ev.GetWorkflowExecutionContinuedAsNewEventAttributes(); a != nil {
				id = a.GetNewExecutionRunId()
			}
		}
	}
	return starts, runs
}

// A for_each step's children are Temporal child workflows of the run: two
// at a time, each a run of its own (core-2 views, the parent's starter,
// mode and organization, a Summary naming its parent and step), the third
// started as one ends; the join records every outcome in item order, and
// the parent's history starts each child once.
func TestChildrenAreChildWorkflows(t *testing.T) {
	h := setup(t)
	f := publishFamily(t, h, rfpSrc)
	parent := f.start(t, interpreter.ModeTest)
	h.submitSuppliers(t, parent, "Acme", "Birch", "Cobalt")
	v := h.started(t, parent, 2)
	kids := stepView(v, "screen_each").Children
	if stepState(v, "screen_each") != "waiting" || kids == nil || kids.Total != 3 || kids.Running != 2 || len(kids.RunningIDs) != 2 {
		t.Fatalf("screen_each %s, children %+v", stepState(v, "screen_each"), kids)
	}
	first := kids.RunningIDs
	for i, id := range first {
		cv := h.until(t, id, "the child's start", func(*interpreter.View) bool { return true })
		h.viewOf(t, id, true)
		if cv.Run.StartedBy != starter.ID || cv.Run.Mode != interpreter.ModeTest || cv.Run.Process != "screening" || cv.Data.Inputs["supplierName"] != []string{"Acme", "Birch"}[i] {
			t.Fatalf("child %d: %+v, inputs %v", i, cv.Run, cv.Data.Inputs)
		}
		if _, err := h.store.GetRun(ctxFor(t), org, id); err != nil {
			t.Fatalf("child %d is not in its organization's read model: %v", i, err)
		}
		d, err := h.c.DescribeWorkflow(ctxFor(t), id, "")
		if err != nil {
			t.Fatal(err)
		}
		summary, err := d.GetStaticSummary()
		if err != nil {
			t.Fatal(err)
		}
		if d.ParentWorkflowExecution == nil || d.ParentWorkflowExecution.ID != parent || !strings.Contains(summary, "child of run "+parent+", step screen_each") {
			t.Fatalf("child %d: parent %+v, summary %q", i, d.ParentWorkflowExecution, summary)
		}
	}
	h.screen(t, first[1])
	v = h.until(t, parent, "the third child", func(v *interpreter.View) bool {
		c := stepView(v, "screen_each").Children
		return c != nil && c.Ended == 1 && c.Running == 2
	})
	third := stepView(v, "screen_each").Children.RunningIDs[1]
	h.screen(t, first[0])
	h.screen(t, third)
	v = h.until(t, parent, "the join", func(v *interpreter.View) bool { return stepState(v, "screen_each") == "done" })
	if stepState(v, "compare") != "ready" {
		t.Fatalf("after the join compare is %s", stepState(v, "compare"))
	}
	rec := v.Data.Steps["screen_each"]
	items, _ := rec.Output["items"].([]any)
	var got []string
	for _, it := range items {
		m := it.(map[string]any)
		got = append(got, fmt.Sprint(m["runId"], " ", m["outcome"], " ", m["note"]))
	}
	want := []string{first[0] + " cleared <nil>", first[1] + " cleared <nil>", third + " cleared <nil>"}
	if !slices.Equal(got, want) || rec.By != "server" || len(rec.History) != 0 {
		t.Fatalf("joined %v by %s, want %v", got, rec.By, want)
	}
	starts, _ := h.childStarts(t, parent, h.currentRun(t, parent))
	if len(starts) != 3 || starts[first[0]] != 1 || starts[first[1]] != 1 || starts[third] != 1 {
		t.Fatalf("child starts %v", starts)
	}
	h.save(t, parent, "rfp-children")
}

// A for_each over more children than the start window keeps at most
// that many starts in flight: the parent's history never has more
// children initiated and not yet started (Temporal starts a parent's
// children one at a time, and a start that waits too long for the parent
// is put back for seconds). Every child starts once, and the step joins
// every item in order.
func TestChildStartsInFlightAreBounded(t *testing.T) {
	h := setup(t)
	f := publishFamilyOf(t, h, workflows.EndsAtOnceSrc, workflows.FanSrc)
	n := workflows.StartWindow + 4
	items := make([]any, n)
	for i := range items {
		items[i] = fmt.Sprintf("item-%d", i)
	}
	parent := f.startWith(t, interpreter.ModeLive, interpreter.Values{"items": items})
	v := h.closedView(t, parent, false)
	if v.Run.State != "ended" || v.Run.Outcome == nil || *v.Run.Outcome != "done" {
		t.Fatalf("the parent is %s %v, want ended done", v.Run.State, v.Run.Outcome)
	}
	joined, _ := v.Data.Steps["each"].Output["items"].([]any)
	if len(joined) != n {
		t.Fatalf("joined %d items, want %d", len(joined), n)
	}
	seen := map[string]bool{}
	for i, it := range joined {
		m := it.(map[string]any)
		id, _ := m["runId"].(string)
		if m["outcome"] != "done" || seen[id] {
			t.Fatalf("item %d: %v", i, m)
		}
		seen[id] = true
		if cv := h.closedView(t, id, true); cv.Data.Inputs["item"] != items[i] {
			t.Fatalf("item %d ran child %s with %v", i, id, cv.Data.Inputs)
		}
	}
	hist := h.history(t, parent, "")
	inFlight, most, starts := 0, 0, map[string]int{}
	for _, ev := range hist.Events {
		switch {
		case ev.GetStartChildWorkflowExecutionInitiatedEventAttributes() != nil:
			starts[ev.GetStartChildWorkflowExecutionInitiatedEventAttributes().GetWorkflowId()]++
			inFlight++
			most = max(most, inFlight)
		case ev.GetChildWorkflowExecutionStartedEventAttributes() != nil, ev.GetStartChildWorkflowExecutionFailedEventAttributes() != nil:
			inFlight--
		}
	}
	if most != workflows.StartWindow {
		t.Fatalf("at most %d children were starting at once, want %d", most, workflows.StartWindow)
	}
	if len(starts) != n {
		t.Fatalf("%d children started, want %d", len(starts), n)
	}
	for id, k := range starts {
		if k != 1 || !seen[id] {
			t.Fatalf("child %s started %d times (joined %v)", id, k, seen[id])
		}
	}
	h.save(t, parent, "fanout-window")
}

// Cancelling a parent cancels its running children with its reason, by
// the cancel tool or by Temporal; an operator cancelling a child makes the
// parent see it cancelled.
func TestCancellingParentsAndChildren(t *testing.T) {
	h := setup(t)
	f := publishFamily(t, h, rfpSrc)
	operator := interpreter.Actor{ID: "u_ops", Kind: interpreter.ActorOperator}

	parent := f.start(t, interpreter.ModeLive)
	h.submitSuppliers(t, parent, "Acme", "Birch", "Cobalt")
	kids := stepView(h.started(t, parent, 2), "screen_each").Children.RunningIDs
	for _, id := range kids {
		h.until(t, id, "the child's start", func(*interpreter.View) bool { return true })
	}
	h.write(t, parent, interpreter.Cancel{Actor: operator, Reason: "The RFP was withdrawn."})
	for _, id := range kids {
		v := h.closedView(t, id, true)
		if v.Run.State != "cancelled" || v.Run.Ended.By != operator.ID || *v.Run.Ended.Note != "parent run "+parent+" cancelled: The RFP was withdrawn." {
			t.Fatalf("child %s: %+v %+v", id, v.Run, v.Run.Ended)
		}
	}

	parent, kid := f.startWithChild(t)
	if err := h.c.CancelWorkflow(ctxFor(t), parent, ""); err != nil {
		t.Fatal(err)
	}
	v := h.closedView(t, kid, true)
	if v.Run.State != "cancelled" || !strings.HasPrefix(*v.Run.Ended.Note, "parent run "+parent+" cancelled: ") {
		t.Fatalf("child of a parent cancelled in Temporal: %+v", v.Run.Ended)
	}

	parent, kid = f.startWithChild(t)
	h.write(t, kid, interpreter.Cancel{Actor: operator, Reason: "Duplicate supplier."})
	v = h.closedView(t, parent, false)
	want := "child run " + kid + ` ended cancelled: "Duplicate supplier."`
	if v.Run.State != "ended" || *v.Run.Outcome != interpreter.DecisionFailed || *v.Run.Ended.Note != want {
		t.Fatalf("parent of a cancelled child: %+v %+v", v.Run, v.Run.Ended)
	}
}

// A parent that continues as new while its children run keeps them: each
// child's end reaches the run the parent is then (the watch of carried
// children finds it, no child signals), the fan-out goes on in the new
// run, no child starts twice, and the step joins once.
func TestChildrenSurviveContinueAsNew(t *testing.T) {
	h := setupContinuing(t, nil)
	f := publishFamily(t, h, rfpSrc)
	parent, firstRun := f.startFanout(t)
	screened := h.screenEach(t, parent, len(suppliers))
	v := h.until(t, parent, "the join", func(v *interpreter.View) bool { return stepState(v, "screen_each") == "done" })
	rec := v.Data.Steps["screen_each"]
	if items, _ := rec.Output["items"].([]any); len(items) != len(suppliers) || len(rec.History) != 0 || stepState(v, "compare") != "ready" {
		t.Fatalf("joined %d items, history %d, compare %s", len(items), len(rec.History), stepState(v, "compare"))
	}
	if status, _ := h.describe(t, parent, firstRun); status != enumspb.WORKFLOW_EXECUTION_STATUS_CONTINUED_AS_NEW {
		t.Fatalf("the parent's first run is %s, want continued as new", status)
	}
	starts, runs := h.childStarts(t, parent, firstRun)
	if len(starts) != len(suppliers) {
		t.Fatalf("%d children started, want %d: %v", len(starts), len(suppliers), starts)
	}
	for id, n := range starts {
		if n != 1 || !slices.Contains(screened, id) {
			t.Fatalf("child %s started %d times (screened %v)", id, n, slices.Contains(screened, id))
		}
	}
	if first := h.history(t, parent, firstRun); !continuedWithChildren(first) {
		t.Fatal("the first run did not continue as new while children ran")
	}
	h.endsByResult(t, parent, screened...)
	t.Logf("the parent took %d runs", runs)
	h.saveRun(t, parent, firstRun, "rfp-children-ends-continued")
	h.saveRun(t, parent, h.nextRun(t, parent, firstRun), "rfp-children-ends-carried")
}

// continuedWithChildren reports whether a run's history ends in a
// continue-as-new whose state has children running.
func continuedWithChildren(hist *historypb.History) bool {
	last := hist.Events[len(hist.Events)-1].GetWorkflowExecutionContinuedAsNewEventAttributes()
	if last == nil {
		return false
	}
	var in workflows.Input
	if err := workflows.DataConverter.FromPayloads(last.GetInput(), &in); err != nil || in.Continued == nil {
		return false
	}
	var run interpreter.Run
	if err := json.Unmarshal(in.Continued.State, &run); err != nil {
		return false
	}
	for _, sr := range run.Steps {
		if sr.Fanout == nil {
			continue
		}
		for _, c := range sr.Fanout.Children {
			if !c.Ended {
				return true
			}
		}
	}
	return false
}
