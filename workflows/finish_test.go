package workflows_test

import (
	"errors"
	"testing"

	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"

	"github.com/baton-run/baton/interpreter"
	"github.com/baton-run/baton/workflows"
)

// A run cancelled by a signal that is already waiting in its first
// workflow task (a child its parent cancels as it starts, a run that
// continued as new while a signal was on its way) closes only once that
// signal's write is in the read model: the run's own first write and the
// signal's are in flight together, and the workflow must not close on
// the first while the second, the one that ends the run, is dropped.
func TestSignalInTheFirstTaskIsPublishedBeforeTheRunCloses(t *testing.T) {
	h := setup(t)
	p, err := interpreter.Parse([]byte(screeningSrc), nil)
	if err != nil {
		t.Fatal(err)
	}
	saved := !*record
	for i := 0; i < 10; i++ {
		id := "r_" + randomHex(10)
		in := workflows.Input{Org: org, Lean: true, Notices: true, Start: interpreter.Start{
			RunID: id, Process: p, Version: 1, Inputs: interpreter.Values{"supplierName": "Acme"}, Mode: interpreter.ModeLive, Starter: starter,
		}}
		ctx := ctxFor(t)
		wr, err := h.c.SignalWithStartWorkflow(ctx, id, workflows.SignalCancel, workflows.CancelSignal{By: "u_ops", Reason: "Withdrawn."},
			client.StartWorkflowOptions{ID: id, TaskQueue: h.queue}, workflows.WorkflowName, in)
		if err != nil {
			t.Fatal(err)
		}
		var cancelled *temporal.CanceledError
		if err := wr.Get(ctx, nil); !errors.As(err, &cancelled) {
			t.Fatalf("run %s closed with %v, want cancelled", id, err)
		}
		row, err := h.store.GetRun(ctx, org, id)
		if err != nil {
			t.Fatalf("run %s closed and is not in the read model: %v", id, err)
		}
		if row.State != "cancelled" {
			t.Fatalf("run %s closed cancelled and the read model says %s", id, row.State)
		}
		if !saved && hasVersionMarker(t, h.history(t, id, ""), "finish-takes-turn") {
			h.save(t, id, "finish-takes-turn")
			saved = true
		}
	}
	if !saved {
		t.Fatal("-record: no run closed with the signal's write in flight; run it again")
	}
}

// hasVersionMarker reports whether a history records a version of change.
func hasVersionMarker(t *testing.T, hist *historypb.History, change string) bool {
	t.Helper()
	for _, ev := range hist.Events {
		a := ev.GetMarkerRecordedEventAttributes()
		if a == nil || a.GetMarkerName() != "Version" {
			continue
		}
		var id string
		if err := converter.GetDefaultDataConverter().FromPayloads(a.GetDetails()["change-id"], &id); err != nil {
			t.Fatal(err)
		}
		if id == change {
			return true
		}
	}
	return false
}
