package workflows_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"

	"github.com/baton-run/baton/internal/drive"
	"github.com/baton-run/baton/internal/testing/drivetest"
	"github.com/baton-run/baton/internal/testing/workertest"
	"github.com/baton-run/baton/interpreter"
	"github.com/baton-run/baton/workflows"
)

// temporalVariants are the walks the workflow takes: every variant but
// expiry, which would wait out a real lease on the server's clock (the
// workflow's lease timer has tests of its own, on the test environment's
// clock).
var temporalVariants = []drivetest.Variant{
	drivetest.Happy, drivetest.Rework, drivetest.Escalation, drivetest.EventsEarly, drivetest.TestMode,
}

// recorded are the happy walks whose histories -record keeps in testdata/
// for the replay test; vendor-check's holds the evaluator activity of a
// check.
var recorded = map[string]bool{"invoice-approval": true, "major-incident": true, "vendor-check": true}

// Every fixture walks to a finish as a workflow on Temporal, driven
// through the workflows client alone, with the read model checked after
// every write. vendor-check is among them: its check step's submission
// waits on the evaluator activity, which asks a fake model over the
// OpenAI API that passes every question, and the walk's end shows each
// verdict on the step. Each ended run's workflow completed with its
// outcome, its search attributes say so, and so does its read-model row.
func TestFixturesOnTemporal(t *testing.T) {
	names := drivetest.Fixtures(t, nil)
	procs := drivetest.Processes(t, names)
	model := workertest.NewModel(t, procs)
	h := setupWith(t, &workertest.Options{Evaluator: model.Evaluator(t)})
	drivetest.Run(t, drivetest.Layer{
		New:        func(t *testing.T) drive.Driver { return h.driver(t, procs) },
		Fixtures:   names,
		Variants:   temporalVariants,
		CheckModel: workertest.ModelName,
		After: func(t *testing.T, w drivetest.Walked) {
			id, outcome := w.End.Run.ID, *w.End.Run.Outcome
			var out workflows.Outcome
			if err := h.c.GetWorkflow(ctxFor(t), id, "").Get(ctxFor(t), &out); err != nil || out.Outcome != outcome {
				t.Fatalf("workflow result %+v, %v; want outcome %s", out, err, outcome)
			}
			status, attrs := h.describe(t, id, "")
			if status != enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED {
				t.Fatalf("status %s", status)
			}
			if attrs[workflows.SearchState] != "ended" || attrs[workflows.SearchOutcome] != outcome ||
				attrs[workflows.SearchProcess] != w.Process.Name || attrs[workflows.SearchMode] != w.End.Run.Mode ||
				attrs[workflows.SearchOrg] != org {
				t.Fatalf("search attributes %v", attrs)
			}
			row, err := h.store.GetRun(ctxFor(t), org, id)
			if err != nil || row.State != "ended" || row.Outcome != outcome {
				t.Fatalf("read model %+v %v", row, err)
			}
			if got := firstTaskCommands(h.history(t, id, "")); got != "update-accepted marker update-completed" {
				t.Errorf("the run's first workflow task wrote %q; want its first write and that write's marker alone, with no version marker or upsert", got)
			}
			if w.Variant == drivetest.Happy && recorded[w.Fixture] {
				h.save(t, id, w.Fixture)
			}
		},
	})
}

// signalled delivers events by Temporal signal, as a system speaking
// Temporal directly does, instead of the send_event update.
type signalled struct {
	*drive.Temporal
	h *harness
	p *interpreter.Process
}

func (s signalled) SendEvent(ctx context.Context, who drive.Who, runID, name string, data map[string]any) (*interpreter.EventResult, error) {
	err := s.h.c.SignalWorkflow(ctx, runID, "", workflows.SignalEvent, workflows.EventSignal{Name: name, Data: data, Sender: "billing"})
	if err != nil {
		return nil, err
	}
	// A signal has no answer: wait for the waiting step to take the event.
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); {
		v, err := s.GetRun(ctx, who, runID)
		if err != nil {
			return nil, err
		}
		for _, sv := range v.Steps {
			if st := s.p.Step(sv.ID); st.Kind == interpreter.KindWaitFor && st.Text == name && sv.State != nil && *sv.State == "done" {
				return &interpreter.EventResult{ConsumedBy: &st.ID}, nil
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	return nil, fmt.Errorf("no step took the signalled event %s", name)
}

// An event signalled through Temporal feeds the same wait as send_event
// and records its sender.
func TestEventBySignal(t *testing.T) {
	t.Parallel()
	h := setup(t)
	p := drivetest.Fixture(t, "customer-offboarding")
	d := signalled{Temporal: h.driver(t, drive.Processes{p.Name: p}), h: h, p: p}
	w := drive.Walk{Process: p, Check: drivetest.Checker(p, interpreter.ModeLive)}
	end, err := w.Run(ctxFor(t), d)
	if err != nil {
		t.Fatal(err)
	}
	drivetest.WantEndedAtFinish(t, p, end)
	waits := 0
	for id, rec := range end.Data.Steps {
		if p.Step(id).Kind == interpreter.KindWaitFor {
			if rec.Record == nil || rec.By != "billing" {
				t.Fatalf("event step %s recorded %+v, want by billing", id, rec.Record)
			}
			waits++
		}
	}
	if waits == 0 {
		t.Fatal("the walk reached no wait_for step")
	}
	h.save(t, end.Run.ID, "customer-offboarding-signal")
}

// A wait_until is a real timer: publication two seconds from now waits
// for it, through a rework.
func TestWaitUntilIsATimer(t *testing.T) {
	t.Parallel()
	h := setup(t)
	p := drivetest.Fixture(t, "blog-publication")
	at := time.Now().Add(2 * time.Second).Truncate(time.Second)
	w := drive.Walk{Process: p, Inputs: drivetest.Inputs(p, at), RejectOnce: true, Check: drivetest.Checker(p, interpreter.ModeLive)}
	end, err := w.Run(ctxFor(t), h.driver(t, drive.Processes{p.Name: p}))
	if err != nil {
		t.Fatal(err)
	}
	drivetest.WantEndedAtFinish(t, p, end)
	if len(w.Rejected()) == 0 {
		t.Fatal("no approval was rejected")
	}
	if now := time.Now(); now.Before(at) {
		t.Fatalf("the run ended at %s, before its wait_until at %s", now, at)
	}
}

// firstTaskCommands names what a run's first workflow task wrote, in
// order: every marker and search-attribute upsert is a write of Temporal's,
// and an upsert a visibility write too, paid by every run as it starts.
func firstTaskCommands(h *historypb.History) string {
	var out []string
	completed := false
	for _, ev := range h.GetEvents() {
		switch ev.GetEventType() {
		case enumspb.EVENT_TYPE_WORKFLOW_TASK_COMPLETED:
			if completed {
				return strings.Join(out, " ")
			}
			completed = true
		case enumspb.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED:
			if completed {
				return strings.Join(out, " ")
			}
		case enumspb.EVENT_TYPE_MARKER_RECORDED:
			out = append(out, "marker")
		case enumspb.EVENT_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES:
			out = append(out, "upsert")
		case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED:
			out = append(out, "update-accepted")
		case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_COMPLETED:
			out = append(out, "update-completed")
		}
	}
	return strings.Join(out, " ")
}
