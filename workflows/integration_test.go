package workflows_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/baton-run/baton/internal/drive"
	"github.com/baton-run/baton/internal/store"
	"github.com/baton-run/baton/internal/testing/drivetest"
	"github.com/baton-run/baton/internal/testing/spectest"
	"github.com/baton-run/baton/interpreter"
	"github.com/baton-run/baton/workflows"
)

// updateEvents returns the Accepted and Completed events of an update id.
func updateEvents(h *historypb.History, updateID string) []string {
	var out []string
	for _, ev := range h.Events {
		switch ev.GetEventType() {
		case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED:
			if ev.GetWorkflowExecutionUpdateAcceptedEventAttributes().GetAcceptedRequest().GetMeta().GetUpdateId() == updateID {
				out = append(out, ev.GetEventType().String())
			}
		case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_COMPLETED:
			if ev.GetWorkflowExecutionUpdateCompletedEventAttributes().GetMeta().GetUpdateId() == updateID {
				out = append(out, ev.GetEventType().String())
			}
		}
	}
	return out
}

func TestRefusedUpdateRecordsNothing(t *testing.T) {
	h := setup(t)
	p := drivetest.Fixture(t, "invoice-approval")
	r := h.start(p, interpreter.Samples(p.Inputs))
	r.must(workflows.UpdateClaim, claimReq("validate", "l1"))
	before := len(r.history("").Events)

	// a claim of a person step, and a submit whose output breaks the
	// declaration: both refused by the validator
	_, err := r.update(workflows.UpdateClaim, "claim-person", claimReq("manager_review", "l2"))
	if e, ok := workflows.AsRefusal(err); !ok || e.Code != interpreter.CodeForbidden {
		t.Fatalf("claim of a person step: %v", err)
	}
	good := submission(p.Step("validate"))
	bad := submission(p.Step("validate"))
	bad.Output = interpreter.Values{"totalUsd": "a lot", "supplier": "Acme", "matchSummary": "ok"}
	_, err = r.update(workflows.UpdateSubmit, "submit-1", workflows.Write{Digest: "bad",
		Command: interpreter.Submit{StepID: "validate", LeaseID: "l1", Actor: agent, Submission: bad}})
	if e, ok := workflows.AsRefusal(err); !ok || e.Code != interpreter.CodeNotAccepted {
		t.Fatalf("bad submit: %v", err)
	}
	hist := r.history("")
	for _, id := range []string{"claim-person", "submit-1"} {
		if evs := updateEvents(hist, id); len(evs) != 0 {
			t.Fatalf("refused update %s left %v in history", id, evs)
		}
	}
	if len(hist.Events) != before {
		t.Fatalf("history grew from %d to %d events over two refusals", before, len(hist.Events))
	}
	r.checkReadModel(r.view(), false)

	// the same update id succeeds once the request is right
	res, err := r.update(workflows.UpdateSubmit, "submit-1", workflows.Write{Digest: "good",
		Command: interpreter.Submit{StepID: "validate", LeaseID: "l1", Actor: agent, Submission: good}})
	if err != nil || res.Digest != "good" {
		t.Fatalf("submit after the refusal: %+v %v", res, err)
	}
	if evs := updateEvents(r.history(""), "submit-1"); len(evs) != 2 {
		t.Fatalf("accepted update submit-1 has events %v", evs)
	}
	r.checkReadModel(r.view(), true)
}

func TestRepeatedUpdateIDAnswersFirst(t *testing.T) {
	h := setup(t)
	p := drivetest.Fixture(t, "invoice-approval")
	r := h.start(p, interpreter.Samples(p.Inputs))
	first, err := r.update(workflows.UpdateClaim, "claim-1", claimReq("validate", "l1"))
	if err != nil {
		t.Fatal(err)
	}
	r.checkReadModel(r.view(), true)
	// the same id, other arguments: Temporal answers the first call, and
	// the digest tells the caller so
	again, err := r.update(workflows.UpdateClaim, "claim-1", claimReq("validate", "l2"))
	if err != nil {
		t.Fatalf("repeated update: %v", err)
	}
	if again.Digest != first.Digest || again.Digest == claimReq("validate", "l2").Digest || !bytes.Equal(again.Value, first.Value) {
		t.Fatalf("repeat answered %+v, first %+v", again, first)
	}
	if evs := updateEvents(r.history(""), "claim-1"); len(evs) != 2 {
		t.Fatalf("update claim-1 has events %v, want one accepted and one completed", evs)
	}
	// nothing changed: the first lease still holds
	r.checkReadModel(r.view(), false)
	r.must(workflows.UpdateSubmit, workflows.Write{Digest: "s",
		Command: interpreter.Submit{StepID: "validate", LeaseID: "l1", Actor: agent, Submission: submission(p.Step("validate"))}})
}

func TestTemporalCancellation(t *testing.T) {
	cases := []struct {
		name     string
		cancel   func(c client.Client, id string) error
		wantNote string
	}{
		{"with reason", func(c client.Client, id string) error {
			return c.CancelWorkflowWithOptions(context.Background(), client.CancelWorkflowOptions{WorkflowID: id, Reason: "duplicate run"})
		}, "duplicate run"},
		{"plain", func(c client.Client, id string) error {
			return c.CancelWorkflow(context.Background(), id, "")
		}, "Cancelled in Temporal."},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := setup(t)
			p := drivetest.Fixture(t, "invoice-approval")
			r := h.start(p, interpreter.Samples(p.Inputs))
			r.must(workflows.UpdateClaim, claimReq("validate", "l1"))
			if err := tc.cancel(h.c, r.id); err != nil {
				t.Fatal(err)
			}
			var ce *temporal.CanceledError
			if err := r.wait(); !errors.As(err, &ce) {
				t.Fatalf("workflow error %v, want Canceled", err)
			}
			var ended interpreter.Ended
			if err := ce.Details(&ended); err != nil || ended.By != identity || ended.Note == nil || *ended.Note != tc.wantNote {
				t.Fatalf("cancel details %+v %v", ended, err)
			}
			status, attrs := r.describe("")
			if status != enumspb.WORKFLOW_EXECUTION_STATUS_CANCELED {
				t.Fatalf("status %s, want Canceled", status)
			}
			if attrs[workflows.SearchState] != "cancelled" {
				t.Fatalf("search attributes %v", attrs)
			}
			v := r.view()
			if v.Run.State != "cancelled" || v.Run.Ended == nil || v.Run.Ended.By != identity || v.Run.Ended.Note == nil || *v.Run.Ended.Note != tc.wantNote {
				t.Fatalf("view after cancel: %+v %+v", v.Run, v.Run.Ended)
			}
			row, err := h.store.GetRun(ctxFor(t), org, r.id)
			if err != nil || row.State != "cancelled" {
				t.Fatalf("read model %+v %v", row, err)
			}
			if work, err := h.store.RunWork(ctxFor(t), org, r.id); err != nil || len(work) != 0 {
				t.Fatalf("work after cancel %+v %v", work, err)
			}
			if i == 0 {
				h.save(t, r.id, "cancel-in-temporal")
			}
		})
	}
}

func TestCancelUpdateEndsCanceled(t *testing.T) {
	h := setup(t)
	p := drivetest.Fixture(t, "support-escalation")
	r := h.start(p, interpreter.Samples(p.Inputs))
	operator := interpreter.Actor{ID: "u_ops", Kind: interpreter.ActorOperator}
	res := r.must(workflows.UpdateCancel, workflows.Write{Digest: "c", Command: interpreter.Cancel{Actor: operator, Reason: "Customer withdrew."}})
	spectest.Validate(t, "run-view.json", res.Value)
	var ce *temporal.CanceledError
	if err := r.wait(); !errors.As(err, &ce) {
		t.Fatalf("workflow error %v, want Canceled", err)
	}
	status, attrs := r.describe("")
	if status != enumspb.WORKFLOW_EXECUTION_STATUS_CANCELED || attrs[workflows.SearchState] != "cancelled" || attrs[workflows.SearchOrg] != org {
		t.Fatalf("status %s, attributes %v", status, attrs)
	}
	v := r.view()
	if v.Run.Ended == nil || v.Run.Ended.By != operator.ID || *v.Run.Ended.Note != "Customer withdrew." {
		t.Fatalf("view %+v", v.Run)
	}
}

// TestContinueAsNewPastUpdateLimit renews one lease more times than
// Temporal allows updates in one run: the workflow continues as new on the
// way, the lease stays live, and the run ends normally.
func TestContinueAsNewPastUpdateLimit(t *testing.T) {
	if testing.Short() {
		t.Skip("long")
	}
	h := setup(t)
	p := drivetest.Fixture(t, "invoice-approval")
	r := h.start(p, interpreter.Samples(p.Inputs))
	begin := time.Now()
	lease := "l0"
	r.must(workflows.UpdateClaim, claimReq("validate", lease))
	const renews = 2100
	for i := 1; i <= renews; i++ {
		next := fmt.Sprintf("l%d", i)
		res, err := r.update(workflows.UpdateRenew, next, workflows.Write{Digest: next,
			Command: interpreter.Renew{StepID: "validate", LeaseID: lease, NewLeaseID: next, Lease: 10 * time.Minute, Progress: next}})
		if err != nil {
			t.Fatalf("renew %d: %v", i, err)
		}
		var rr interpreter.RenewResult
		if err := json.Unmarshal(res.Value, &rr); err != nil || rr.LeaseID != next {
			t.Fatalf("renew %d answered %s (%v)", i, res.Value, err)
		}
		lease = next
	}
	t.Logf("%d renews in %s (%.0f/s)", renews, time.Since(begin).Round(time.Millisecond), renews/time.Since(begin).Seconds())
	r.must(workflows.UpdateSubmit, workflows.Write{Digest: "s",
		Command: interpreter.Submit{StepID: "validate", LeaseID: lease, Actor: agent, Submission: submission(p.Step("validate"))}})
	w := drive.Walk{Process: p, Check: drivetest.Checker(p, interpreter.ModeLive)}
	v, err := w.Continue(ctxFor(t), h.driver(t, drive.Processes{p.Name: p}), r.view())
	if err != nil {
		t.Fatal(err)
	}
	if v.Run.State != "ended" || *v.Run.Outcome != "approved" {
		t.Fatalf("run %+v", v.Run)
	}
	if err := r.wait(); err != nil {
		t.Fatal(err)
	}
	if status, _ := r.describe(r.firstRun); status != enumspb.WORKFLOW_EXECUTION_STATUS_CONTINUED_AS_NEW {
		t.Fatalf("first run status %s, want ContinuedAsNew", status)
	}
	d, err := h.c.DescribeWorkflowExecution(ctxFor(t), r.id, "")
	if err != nil {
		t.Fatal(err)
	}
	if last := d.GetWorkflowExecutionInfo().GetExecution().GetRunId(); last == r.firstRun {
		t.Fatal("one run took every update")
	}
	runs := 1
	for id := r.firstRun; ; runs++ {
		hist := r.history(id)
		lastEv := hist.Events[len(hist.Events)-1]
		if lastEv.GetEventType() != enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW {
			break
		}
		id = lastEv.GetWorkflowExecutionContinuedAsNewEventAttributes().GetNewExecutionRunId()
	}
	t.Logf("the run took %d executions, %s in all", runs, time.Since(begin).Round(time.Millisecond))
}

// An update sent straight to Temporal, without the gateway's digest (an
// SRE's, from Temporal's CLI), is applied and shown in the read model
// like any write; it leaves no request record, since no requestId
// replays it.
func TestWriteWithoutDigestReachesTheReadModel(t *testing.T) {
	h := setup(t)
	p := drivetest.Fixture(t, "invoice-approval")
	r := h.start(p, interpreter.Samples(p.Inputs))
	if _, err := r.update(workflows.UpdateClaim, "sre-claim", workflows.Write{
		Command: interpreter.Claim{StepID: "validate", Actor: agent, LeaseID: "l1", Lease: 10 * time.Minute}}); err != nil {
		t.Fatal(err)
	}
	r.checkReadModel(r.view(), true)
	if _, err := h.store.GetRequest(ctxFor(t), org, "sre-claim"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("request record of a write without digest: %v, want none", err)
	}
	for _, ev := range r.history("").Events {
		if f := ev.GetMarkerRecordedEventAttributes().GetFailure(); f != nil {
			t.Fatalf("event %d: a local activity failed: %s", ev.EventId, f.GetMessage())
		}
	}
}

// A write that asks for it answers without the process's body, as do a
// start and the view query, in the update's history event and in the
// record alike: the
// gateway adds the body back from the published version. A write that
// does not ask (a gateway from before) gets the body.
func TestAnswersLeaveOutTheBodyWhenAsked(t *testing.T) {
	h := setup(t)
	p := drivetest.Fixture(t, "invoice-approval")
	// The body's longest plain words, written the same in any JSON.
	marker := []byte(slices.MaxFunc(regexp.MustCompile(`[A-Za-z ]+`).FindAllString(p.Body, -1), func(a, b string) int { return len(a) - len(b) }))
	if len(marker) < 20 {
		t.Fatalf("invoice-approval's body %q has too little to look for", p.Body)
	}
	ctx := ctxFor(t)
	rid := "req-" + randomHex(8)
	res, err := h.runs.StartRun(ctx, workflows.Input{Org: org, RequestID: rid, Digest: rid, OmitBody: true,
		Start: interpreter.Start{Process: p, Version: 1, Inputs: interpreter.Samples(p.Inputs), Starter: starter}})
	if err != nil {
		t.Fatal(err)
	}
	if v := decodeView(t, res); v.Body != "" || v.Run.Process != p.Name || v.Run.Version != 1 || len(v.Steps) == 0 {
		t.Fatalf("start without the body answered %s", res)
	}
	id := workflows.RunID(org, rid)

	claim := claimReq("validate", "l1")
	claim.RunID, claim.RequestID, claim.OmitBody = id, "req-claim", true
	raw, err := h.runs.Write(ctx, claim)
	if err != nil {
		t.Fatal(err)
	}
	var c interpreter.ClaimResult
	if err := json.Unmarshal(raw, &c); err != nil {
		t.Fatal(err)
	}
	if c.Body != "" || c.Process != p.Name || c.Version != 1 || c.Step.ID != "validate" {
		t.Fatalf("claim without the body answered %s", raw)
	}

	escalate := workflows.Write{RunID: id, RequestID: "req-escalate", Digest: "escalate",
		Command: interpreter.Escalate{StepID: "validate", LeaseID: "l1", Actor: agent, Note: "Stuck."}}
	raw, err = h.runs.Write(ctx, escalate)
	if err != nil {
		t.Fatal(err)
	}
	if v := decodeView(t, raw); v.Body != p.Body {
		t.Fatalf("a write that did not ask answered the body %q, want %q", v.Body, p.Body)
	}

	raw, err = h.runs.ViewWithoutBody(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if v := decodeView(t, raw); v.Body != "" || v.Run.ID != id {
		t.Fatalf("the view without the body: %s", raw)
	}
	raw, err = h.runs.View(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if v := decodeView(t, raw); v.Body != p.Body {
		t.Fatalf("the view has the body %q, want %q", v.Body, p.Body)
	}

	for _, req := range []string{rid, "req-claim"} {
		r, err := h.store.GetRequest(ctx, org, req)
		if err != nil {
			t.Fatal(err)
		}
		if r.Result == nil || bytes.Contains(r.Result, marker) {
			t.Errorf("record of %s: %s, want an answer without the body", req, r.Result)
		}
	}
	withBody := 0
	for _, ev := range h.history(t, id, "").Events {
		if a := ev.GetWorkflowExecutionUpdateCompletedEventAttributes(); a != nil {
			if bytes.Contains(a.GetOutcome().GetSuccess().GetPayloads()[0].GetData(), marker) {
				withBody++
			}
		}
	}
	if withBody != 1 {
		t.Errorf("%d answers in the history with the body, want 1 (the escalation's)", withBody)
	}
}

// A run's start input leaves out the process's canonical frontmatter,
// which repeated its steps: the run never reads it, and pins the process
// by its hash. The run still runs.
func TestStartInputLeavesOutTheFrontmatter(t *testing.T) {
	h := setup(t)
	p := drivetest.Fixture(t, "invoice-approval")
	if len(p.Frontmatter) == 0 {
		t.Fatal("the parsed fixture has no frontmatter")
	}
	r := h.start(p, interpreter.Samples(p.Inputs))
	if len(p.Frontmatter) == 0 {
		t.Fatal("the start changed the caller's process")
	}
	first := r.history("").Events[0].GetWorkflowExecutionStartedEventAttributes()
	var in workflows.Input
	if err := json.Unmarshal(first.GetInput().GetPayloads()[0].GetData(), &in); err != nil {
		t.Fatal(err)
	}
	if fm := string(in.Process.Frontmatter); fm != "" && fm != "null" {
		t.Errorf("the start's input has the frontmatter: %.200s", fm)
	}
	if in.Process.Hash != p.Hash || len(in.Process.Steps) != len(p.Steps) || in.Process.Body != p.Body {
		t.Fatalf("the start's input lost more than the frontmatter: hash %s, %d steps", in.Process.Hash, len(in.Process.Steps))
	}
	r.must(workflows.UpdateClaim, claimReq("validate", "l1"))
	if stepState(r.view(), "validate") != "claimed" {
		t.Fatalf("validate is %s after the claim", stepState(r.view(), "validate"))
	}
}
