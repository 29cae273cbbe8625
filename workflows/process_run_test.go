package workflows

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"

	"github.com/baton-run/baton/internal/testing/spectest"
	"github.com/baton-run/baton/interpreter"
)

var (
	agent    = interpreter.Actor{ID: "a_screener", Kind: interpreter.ActorAgent}
	person   = interpreter.Actor{ID: "mira@example.com", Kind: interpreter.ActorPerson, Groups: []string{"finance-approver"}}
	operator = interpreter.Actor{ID: "u_ops", Kind: interpreter.ActorOperator}
)

const supplierSrc = `---
name: supplier-onboarding
description: Check a new supplier and get finance approval.
inputs:
  vendorName: string
  amount: number
steps:
  - id: check_vendor
    agent: Check the vendor against the sanctions lists.
    output: { cleared: boolean }
    due: 1h
  - id: settled
    wait_for: vendor-registered
    timeout: 2d
    on_timeout: approve
  - id: approve
    person: finance-approver
    approve: Approve only when the vendor is cleared.
    on_reject: check_vendor
    next: done
  - id: done
    finish: onboarded
---
Body.
`

func parse(t *testing.T, src []byte) *interpreter.Process {
	t.Helper()
	o := interpreter.DefaultOffer()
	o.Profiles = append(o.Profiles, interpreter.ProfileCheck)
	p, err := interpreter.Parse(src, &interpreter.ParseOptions{Offer: &o})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// recorder stands in for the activities: it keeps what the workflow
// published and asked for.
type recorder struct {
	mu       sync.Mutex
	listings []*interpreter.Listing
	overdue  []interpreter.Effect
	// notices are the notices delivered, by type.
	notices map[interpreter.NoticeType][]*interpreter.Notice
	cancel  CancelInfo
	// deliver, when set, answers each delivery of a notice (nil: it is
	// delivered); tries counts the deliveries tried, by notice id.
	deliver func(n *interpreter.Notice) error
	tries   map[string]int
	// hook, when set, runs after each listing is recorded, inside the
	// local activity.
	hook func(ctx context.Context, l *interpreter.Listing)
	// answers are the writes' answers published, in order.
	answers []*Answered
	// outage is how many publishes fail before the next succeeds, as
	// while PostgreSQL is down.
	outage int
}

func (rc *recorder) last() *interpreter.Listing {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return rc.listings[len(rc.listings)-1]
}

type bundle struct {
	env *testsuite.TestWorkflowEnvironment
	rec *recorder
	t   *testing.T
}

func setup(t *testing.T) *bundle {
	var suite testsuite.WorkflowTestSuite
	suite.SetLogger(log.NewStructuredLogger(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))))
	env := suite.NewTestWorkflowEnvironment()
	env.SetDataConverter(DataConverter)
	env.SetStartTime(time.Date(2026, 10, 6, 9, 0, 0, 0, time.UTC))
	rec := &recorder{}
	env.RegisterWorkflowWithOptions(ProcessRun, workflowOptions())
	env.RegisterActivityWithOptions(func(ctx context.Context, org string, l *interpreter.Listing, a *Answered, notices []*interpreter.Notice) (Published, error) {
		// Every notice goes to one channel of the organization.
		rec.mu.Lock()
		if rec.outage > 0 {
			rec.outage--
			rec.mu.Unlock()
			return Published{}, errors.New("failed to connect to the database: connection refused")
		}
		if a != nil {
			rec.answers = append(rec.answers, a)
		}
		rec.mu.Unlock()
		var out Published
		for range notices {
			out.Channels = append(out.Channels, []string{"channel-of-" + org})
		}
		if l == nil {
			return out, nil
		}
		rec.mu.Lock()
		rec.listings = append(rec.listings, l)
		hook := rec.hook
		rec.mu.Unlock()
		if hook != nil {
			hook(ctx, l)
		}
		return out, nil
	}, activity.RegisterOptions{Name: ActivityPublishRun})
	// A cancellation that races a handler must not trip the deadlock
	// detector on a loaded machine.
	env.SetWorkerOptions(worker.Options{DeadlockDetectionTimeout: 10 * time.Second})
	env.RegisterActivityWithOptions(func(ctx context.Context, e interpreter.Effect) error {
		rec.mu.Lock()
		defer rec.mu.Unlock()
		rec.overdue = append(rec.overdue, e)
		return nil
	}, activity.RegisterOptions{Name: ActivityNotifyOverdue})
	env.RegisterActivityWithOptions(func(ctx context.Context, org, channel string, n *interpreter.Notice) error {
		rec.mu.Lock()
		defer rec.mu.Unlock()
		if rec.tries == nil {
			rec.tries = map[string]int{}
		}
		rec.tries[n.ID]++
		if rec.deliver != nil {
			if err := rec.deliver(n); err != nil {
				return err
			}
		}
		if rec.notices == nil {
			rec.notices = map[interpreter.NoticeType][]*interpreter.Notice{}
		}
		rec.notices[n.Type] = append(rec.notices[n.Type], n)
		return nil
	}, activity.RegisterOptions{Name: ActivityNotify})
	env.RegisterActivityWithOptions(func(ctx context.Context, id, runID string) (CancelInfo, error) {
		return rec.cancel, nil
	}, activity.RegisterOptions{Name: ActivityCancelRequest})
	return &bundle{env: env, rec: rec, t: t}
}

func input(t *testing.T, src string) Input {
	return Input{Org: "o_test", Start: interpreter.Start{
		RunID: "r_1", Process: parse(t, []byte(src)), Version: 1,
		Inputs:  interpreter.Values{"vendorName": "Acme", "amount": json.Number("48000.10")},
		Mode:    interpreter.ModeLive,
		Starter: person,
	}}
}

// at sends an update at a workflow time; check receives its outcome.
func (b *bundle) at(d time.Duration, name, id string, arg any, check func(Result, error)) {
	b.env.RegisterDelayedCallback(func() {
		b.env.UpdateWorkflow(name, id, &testsuite.TestUpdateCallback{
			OnReject: func(err error) { check(Result{}, err) },
			OnAccept: func() {},
			OnComplete: func(v any, err error) {
				if err != nil {
					check(Result{}, err)
					return
				}
				check(v.(Result), nil)
			},
		}, arg)
	}, d)
}

func ok(t *testing.T, what string) func(Result, error) {
	return func(r Result, err error) {
		if err != nil {
			t.Errorf("%s: %v", what, err)
		}
	}
}

func refused(t *testing.T, what string, code interpreter.Code, issues ...string) func(Result, error) {
	return func(r Result, err error) {
		e, isRefusal := AsRefusal(err)
		if !isRefusal || e.Code != code || (issues != nil && !equal(e.Issues, issues)) {
			t.Errorf("%s: got %v (%+v), want %s %v", what, err, e, code, issues)
		}
	}
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func claim(step, lease string) Write {
	return Write{Digest: "d-" + lease, Command: interpreter.Claim{StepID: step, Actor: agent, LeaseID: lease, Lease: 10 * time.Minute}}
}

func submit(step, lease string, out interpreter.Values) Write {
	summary := "Checked both lists."
	return Write{Digest: "s-" + lease, Command: interpreter.Submit{StepID: step, LeaseID: lease, Actor: agent,
		Submission: interpreter.Submission{Output: out, Summary: &summary}}}
}

func view(t *testing.T, b *bundle) *interpreter.View {
	t.Helper()
	q, err := b.env.QueryWorkflow(QueryView)
	if err != nil {
		t.Fatal(err)
	}
	var raw json.RawMessage
	if err := q.Get(&raw); err != nil {
		t.Fatal(err)
	}
	spectest.Validate(t, "run-view.json", raw)
	var v interpreter.View
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	if err := d.Decode(&v); err != nil {
		t.Fatal(err)
	}
	return &v
}

func TestHappyPathWithHeldEvent(t *testing.T) {
	b := setup(t)
	var snapshot, itemID string
	// an event before its wait is held
	b.at(time.Second, UpdateSendEvent, "u0", Write{Digest: "e", Command: interpreter.SendEvent{Name: "vendor-registered", Actor: agent}}, func(r Result, err error) {
		var er interpreter.EventResult
		if err != nil || json.Unmarshal(r.Value, &er) != nil || er.ConsumedBy != nil {
			t.Errorf("send_event: %v %s", err, r.Value)
		}
	})
	b.at(2*time.Second, UpdateClaim, "u1", claim("check_vendor", "l1"), func(r Result, err error) {
		if err != nil || r.Digest != "d-l1" {
			t.Errorf("claim: %v %+v", err, r)
			return
		}
		var c interpreter.ClaimResult
		_ = json.Unmarshal(r.Value, &c)
		spectest.Validate(t, "tools/claim.result.json", c.Wire("tok"))
	})
	b.at(3*time.Second, UpdateSubmit, "u2", submit("check_vendor", "l1", interpreter.Values{"cleared": "no"}), refused(t, "bad submit", interpreter.CodeNotAccepted, "output.cleared: expected boolean"))
	b.at(4*time.Second, UpdateSubmit, "u3", submit("check_vendor", "l1", interpreter.Values{"cleared": true}), func(r Result, err error) {
		if err != nil {
			t.Errorf("submit: %v", err)
			return
		}
		spectest.Validate(t, "tools/submit.result.json", r.Value)
		var v interpreter.View
		_ = json.Unmarshal(r.Value, &v)
		// the held event was consumed in the same write
		if len(v.WorkItems) != 1 || v.Data.Steps["settled"] == nil {
			t.Errorf("after submit: %+v", v.Steps)
			return
		}
		snapshot, itemID = v.WorkItems[0].Snapshot, v.WorkItems[0].ID
	})
	b.env.RegisterDelayedCallback(func() {
		b.at(0, UpdateDecide, "u4", Write{Digest: "x", Command: interpreter.Decide{WorkItemID: itemID, Snapshot: snapshot, Decision: "approved", Actor: agent}}, refused(t, "agent decides", interpreter.CodeForbidden))
		b.at(time.Second, UpdateDecide, "u5", Write{Digest: "x", Command: interpreter.Decide{WorkItemID: itemID, Snapshot: snapshot, Decision: "approved", Actor: person}}, ok(t, "approve"))
	}, 5*time.Second)
	b.env.ExecuteWorkflow(ProcessRun, input(t, supplierSrc))
	if !b.env.IsWorkflowCompleted() {
		t.Fatal("workflow did not complete")
	}
	var out Outcome
	if err := b.env.GetWorkflowResult(&out); err != nil || out.Outcome != "onboarded" || out.Ended.By != "server" {
		t.Fatalf("result %+v %v", out, err)
	}
	l := b.rec.last()
	if l.State != "ended" || l.Outcome != "onboarded" || len(l.Work) != 0 {
		t.Fatalf("last listing %+v", l)
	}
	if n := l.Inputs["amount"]; n != json.Number("48000.10") {
		t.Fatalf("amount travelled as %#v", n)
	}
}

func TestLeaseExpiryDueAndWaitForTimeout(t *testing.T) {
	b := setup(t)
	b.at(time.Second, UpdateClaim, "u1", claim("check_vendor", "l1"), ok(t, "claim"))
	b.at(2*time.Second, UpdateRenew, "u2", Write{Command: interpreter.Renew{StepID: "check_vendor", LeaseID: "l1", NewLeaseID: "l2", Lease: 10 * time.Minute, Progress: "OFAC done"}}, ok(t, "renew"))
	// the lease (renewed at 2s for 10m) has ended by 11m
	b.at(11*time.Minute, UpdateSubmit, "u3", submit("check_vendor", "l2", interpreter.Values{"cleared": true}), refused(t, "late submit", interpreter.CodeStale))
	b.at(12*time.Minute, UpdateClaim, "u4", claim("check_vendor", "l3"), func(r Result, err error) {
		var c interpreter.ClaimResult
		if err != nil || json.Unmarshal(r.Value, &c) != nil || c.Handoff == nil || c.Handoff.Progress != "OFAC done" {
			t.Errorf("claim after expiry: %v %s", err, r.Value)
		}
	})
	b.at(70*time.Minute, UpdateSubmit, "u5", submit("check_vendor", "l3", interpreter.Values{"cleared": true}), func(r Result, err error) {
		if err == nil {
			t.Errorf("submit with an expired lease at 70m was accepted")
		}
	})
	b.at(13*time.Minute, UpdateSubmit, "u6", submit("check_vendor", "l3", interpreter.Values{"cleared": true}), ok(t, "submit"))
	// no event: the wait_for times out after 2d into approve; then cancel
	b.env.RegisterDelayedCallback(func() {
		v := view(t, b)
		if st := v.Steps[2].State; st == nil || *st != "waiting" {
			t.Errorf("approve after the timeout is %v", st)
		}
		b.at(0, UpdateCancel, "u7", Write{Command: interpreter.Cancel{Actor: operator, Reason: "Vendor withdrew."}}, ok(t, "cancel"))
	}, 3*24*time.Hour)
	b.env.ExecuteWorkflow(ProcessRun, input(t, supplierSrc))
	err := b.env.GetWorkflowError()
	var ce *temporal.CanceledError
	if !errors.As(err, &ce) {
		t.Fatalf("workflow error %v, want Canceled", err)
	}
	if len(b.rec.overdue) != 0 {
		t.Fatalf("overdue before due: %+v", b.rec.overdue)
	}
	l := b.rec.last()
	if l.State != "cancelled" {
		t.Fatalf("last listing state %s", l.State)
	}
}

func TestDueNotifiesOnceAndNeverInTestMode(t *testing.T) {
	for _, mode := range []string{interpreter.ModeLive, interpreter.ModeTest} {
		t.Run(mode, func(t *testing.T) {
			b := setup(t)
			in := input(t, supplierSrc)
			in.Mode = mode
			b.env.RegisterDelayedCallback(func() {
				b.at(0, UpdateCancel, "c", Write{Command: interpreter.Cancel{Actor: operator, Reason: "done"}}, ok(t, "cancel"))
			}, 3*time.Hour)
			b.env.ExecuteWorkflow(ProcessRun, in)
			want := 1
			if mode == interpreter.ModeTest {
				want = 0
			}
			overdue := b.rec.notices[interpreter.NoticeWorkOverdue]
			if len(overdue) != want || len(b.rec.overdue) != 0 {
				t.Fatalf("%d overdue notices (and %d of the earlier kind), want %d", len(overdue), len(b.rec.overdue), want)
			}
			// The cancelled run's end is delivered before its workflow
			// closes.
			if ended := b.rec.notices[interpreter.NoticeRunEnded]; len(ended) != want || (want > 0 && ended[0].Run.Outcome != "cancelled") {
				t.Fatalf("run.ended notices %+v, want %d", ended, want)
			}
		})
	}
}

func TestTemporalCancellationEndsRunCancelled(t *testing.T) {
	b := setup(t)
	b.rec.cancel = CancelInfo{Identity: "sre@host", Reason: "duplicate run"}
	b.env.RegisterDelayedCallback(func() { b.env.CancelWorkflow() }, time.Minute)
	b.env.ExecuteWorkflow(ProcessRun, input(t, supplierSrc))
	var ce *temporal.CanceledError
	if err := b.env.GetWorkflowError(); !errors.As(err, &ce) {
		t.Fatalf("workflow error %v, want Canceled", err)
	}
	var ended *interpreter.Ended
	if err := ce.Details(&ended); err != nil || ended.By != "sre@host" || *ended.Note != "duplicate run" {
		t.Fatalf("cancel details %+v %v", ended, err)
	}
	if l := b.rec.last(); l.State != "cancelled" {
		t.Fatalf("listing %+v", l)
	}
}

func TestSignalDeliversEvent(t *testing.T) {
	b := setup(t)
	b.at(time.Second, UpdateClaim, "u1", claim("check_vendor", "l1"), ok(t, "claim"))
	b.at(2*time.Second, UpdateSubmit, "u2", submit("check_vendor", "l1", interpreter.Values{"cleared": true}), ok(t, "submit"))
	b.env.RegisterDelayedCallback(func() {
		b.env.SignalWorkflow(SignalEvent, EventSignal{Name: "vendor-registered", Data: interpreter.Values{"id": json.Number("7")}})
	}, time.Hour)
	b.env.RegisterDelayedCallback(func() {
		v := view(t, b)
		d := v.Data.Steps["settled"]
		if d == nil || d.Record == nil || d.By != "temporal" || d.Output["id"] != json.Number("7") {
			t.Errorf("settled = %+v (%#v)", d, d.Record)
		}
		b.env.CancelWorkflow()
	}, 2*time.Hour)
	b.env.ExecuteWorkflow(ProcessRun, input(t, supplierSrc))
}

func TestContinueAsNewKeepsLeaseAndAnswers(t *testing.T) {
	b := setup(t)
	b.at(time.Second, UpdateClaim, "u1", claim("check_vendor", "l1"), ok(t, "claim"))
	b.env.RegisterDelayedCallback(func() { b.env.SetContinueAsNewSuggested(true) }, 2*time.Second)
	b.env.ExecuteWorkflow(ProcessRun, input(t, supplierSrc))
	err := b.env.GetWorkflowError()
	var can *workflowContinueAsNew
	if !asContinueAsNew(err, &can) {
		t.Fatalf("workflow error %v, want continue-as-new", err)
	}
	next := can.input
	if next.Continued == nil || len(next.Continued.Recent) != 1 || next.Continued.Recent[0].UpdateID != "u1" {
		t.Fatalf("continued %+v", next.Continued)
	}
	// the new run keeps the lease: a submit with it is accepted, and a
	// retried claim update id answers as before
	b2 := setup(t)
	b2.at(time.Second, UpdateClaim, "u1", claim("check_vendor", "other"), func(r Result, err error) {
		if err != nil || r.Digest != "d-l1" {
			t.Errorf("replayed claim: %v %+v", err, r)
		}
	})
	b2.at(2*time.Second, UpdateSubmit, "u2", submit("check_vendor", "l1", interpreter.Values{"cleared": true}), ok(t, "submit after CAN"))
	b2.env.RegisterDelayedCallback(func() { b2.env.CancelWorkflow() }, time.Minute)
	b2.env.ExecuteWorkflow(ProcessRun, next)
}

// cancelOnce returns a listing hook that asks Temporal to cancel the
// workflow, once, while the local activity publishing the first listing
// that matches is still running, so the cancellation lands while an update
// handler is unfinished.
func (b *bundle) cancelOnce(match func(*interpreter.Listing) bool) func(context.Context, *interpreter.Listing) {
	var once sync.Once
	return func(ctx context.Context, l *interpreter.Listing) {
		if !match(l) {
			return
		}
		once.Do(func() {
			b.env.CancelWorkflow()
			select {
			case <-ctx.Done():
			case <-time.After(200 * time.Millisecond):
			}
		})
	}
}

func TestCancelWhileDrainingForContinueAsNew(t *testing.T) {
	b := setup(t)
	b.rec.cancel = CancelInfo{Identity: "sre@host", Reason: "stop it"}
	var once sync.Once
	// While the claim's handler is still publishing, Temporal suggests
	// continue-as-new and an event wakes the loop, which waits for the
	// handler; then the run is cancelled.
	b.rec.hook = func(ctx context.Context, l *interpreter.Listing) {
		if l.State != "active" || len(l.Work) != 0 {
			return
		}
		once.Do(func() {
			// the environment's main loop runs these in order
			cancelled := make(chan struct{})
			b.env.RegisterDelayedCallback(func() {
				b.env.SetContinueAsNewSuggested(true)
				b.env.SignalWorkflow(SignalEvent, EventSignal{Name: "vendor-registered"})
				b.env.RegisterDelayedCallback(func() {
					b.env.CancelWorkflow()
					close(cancelled)
				}, 0)
			}, 0)
			select {
			case <-cancelled:
			case <-time.After(10 * time.Second):
				t.Error("the cancellation was never sent")
			}
		})
	}
	b.at(time.Second, UpdateClaim, "u1", claim("check_vendor", "l1"), ok(t, "claim"))
	b.env.ExecuteWorkflow(ProcessRun, input(t, supplierSrc))
	var ce *temporal.CanceledError
	if err := b.env.GetWorkflowError(); !errors.As(err, &ce) {
		t.Fatalf("workflow error %v, want Canceled", err)
	}
	// the details are the run's Ended when the machine cancelled the run
	var details any
	if err := ce.Details(&details); err != nil {
		t.Fatal(err)
	}
	var ended interpreter.Ended
	if b, _ := json.Marshal(details); json.Unmarshal(b, &ended) != nil || ended.By != "sre@host" {
		t.Fatalf("cancel details %#v: the run was not cancelled through the machine", details)
	}
	if l := b.rec.last(); l.State != "cancelled" {
		t.Fatalf("last listing %s, want cancelled", l.State)
	}
}

func TestRunThatEndsCompletesDespiteLateCancel(t *testing.T) {
	b := setup(t)
	b.rec.hook = b.cancelOnce(func(l *interpreter.Listing) bool { return l.State == "ended" })
	b.at(time.Second, UpdateClaim, "u1", claim("check_vendor", "l1"), ok(t, "claim"))
	b.at(2*time.Second, UpdateSubmit, "u2", submit("check_vendor", "l1", interpreter.Values{"cleared": true}), ok(t, "submit"))
	b.at(3*time.Second, UpdateSendEvent, "u3", Write{Digest: "e", Command: interpreter.SendEvent{Name: "vendor-registered", Actor: agent}}, ok(t, "event"))
	b.env.RegisterDelayedCallback(func() {
		v := view(t, b)
		w := v.WorkItems[0]
		b.at(0, UpdateDecide, "u4", Write{Digest: "x", Command: interpreter.Decide{WorkItemID: w.ID, Snapshot: w.Snapshot, Decision: "approved", Actor: person}}, ok(t, "approve"))
	}, 4*time.Second)
	b.env.ExecuteWorkflow(ProcessRun, input(t, supplierSrc))
	var out Outcome
	if err := b.env.GetWorkflowResult(&out); err != nil || out.Outcome != "onboarded" {
		t.Fatalf("result %+v %v, want onboarded", out, err)
	}
	if l := b.rec.last(); l.State != "ended" {
		t.Fatalf("last listing %s", l.State)
	}
}

func TestSignalInTheContinueAsNewTaskIsKept(t *testing.T) {
	b := setup(t)
	// the signal is delivered without a workflow task; the next task, in
	// which the workflow decides to continue as new, is the first to see it
	b.env.RegisterDelayedCallback(func() {
		b.env.SignalWorkflowSkippingWorkflowTask(SignalEvent, EventSignal{Name: "vendor-registered", Sender: "erp"})
	}, time.Second)
	b.env.RegisterDelayedCallback(func() { b.env.SetContinueAsNewSuggested(true) }, 2*time.Second)
	b.env.ExecuteWorkflow(ProcessRun, input(t, supplierSrc))
	var can *workflowContinueAsNew
	if err := b.env.GetWorkflowError(); !asContinueAsNew(err, &can) {
		t.Fatalf("workflow error %v, want continue-as-new", err)
	}
	in := can.input
	m, err := interpreter.Restore(in.Process, in.Continued.State)
	if err != nil {
		t.Fatal(err)
	}
	if held := m.Run().Held; len(held) != 1 || held[0].Name != "vendor-registered" {
		t.Fatalf("held events carried over: %+v", held)
	}
}

// The run's details in the Temporal UI link to the run and to each open
// work item in the web inbox.
func TestDetailsLinkToTheInbox(t *testing.T) {
	p := parse(t, []byte(supplierSrc))
	m, err := interpreter.StartRun(interpreter.Start{RunID: "r_1", Process: p, Version: 1, Starter: person,
		Inputs: interpreter.Values{"vendorName": "Acme", "amount": json.Number("1")}}, time.Date(2026, 10, 6, 9, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	d := details(m, time.Date(2026, 10, 6, 9, 0, 0, 0, time.UTC), "https://baton.example.com/inbox/")
	if !strings.Contains(d, "(https://baton.example.com/inbox/runs/r_1)") {
		t.Fatalf("details link no run page:\n%s", d)
	}
	if strings.Contains(details(m, time.Now(), ""), "inbox") {
		t.Fatal("details link an inbox that is not there")
	}
}

// TestUpdateAnsweredBeforeContinueAsNew re-sends an update id the run
// answered in an earlier execution, whose answer it no longer holds: the
// validator refuses it as answered before instead of applying it again.
func TestUpdateAnsweredBeforeContinueAsNew(t *testing.T) {
	b := setup(t)
	b.at(time.Second, UpdateClaim, "u1", claim("check_vendor", "l1"), ok(t, "claim"))
	b.env.RegisterDelayedCallback(func() { b.env.SetContinueAsNewSuggested(true) }, 2*time.Second)
	b.env.ExecuteWorkflow(ProcessRun, input(t, supplierSrc))
	var can *workflowContinueAsNew
	if !asContinueAsNew(b.env.GetWorkflowError(), &can) {
		t.Fatalf("workflow error %v, want continue-as-new", b.env.GetWorkflowError())
	}
	next := can.input
	if seen := decodeSeen(next.Continued.Seen); !seen.has("u1") || seen.has("u2") {
		t.Fatalf("seen ids carried %q", next.Continued.Seen)
	}
	// As if u1's answer had dropped out of the recent answers.
	next.Continued.Recent = nil
	b2 := setup(t)
	b2.at(time.Second, UpdateClaim, "u1", claim("check_vendor", "l1"), func(_ Result, err error) {
		var ae *temporal.ApplicationError
		if !errors.As(err, &ae) || ae.Type() != answeredBeforeType {
			t.Errorf("re-sent u1: %v, want %s", err, answeredBeforeType)
		}
	})
	// The lease from u1 is still the run's: the claim was not applied again.
	b2.at(2*time.Second, UpdateSubmit, "u2", submit("check_vendor", "l1", interpreter.Values{"cleared": true}), ok(t, "submit after CAN"))
	b2.env.RegisterDelayedCallback(func() { b2.env.CancelWorkflow() }, time.Minute)
	b2.env.ExecuteWorkflow(ProcessRun, next)
}

func TestSeenIDsAreBoundedAndSurviveEncoding(t *testing.T) {
	var s seenSet
	for i := range seenIDs + 10 {
		s.add(fmt.Sprintf("id-%d", i))
	}
	s.add("id-20") // already there: no change of order
	got := decodeSeen(s.encode())
	if len(got.order) != seenIDs {
		t.Fatalf("%d ids kept, want %d", len(got.order), seenIDs)
	}
	for _, id := range []string{"id-0", "id-9"} {
		if got.has(id) {
			t.Errorf("%s kept past the bound", id)
		}
	}
	for _, id := range []string{"id-10", "id-20", fmt.Sprintf("id-%d", seenIDs+9)} {
		if !got.has(id) {
			t.Errorf("%s lost", id)
		}
	}
}
