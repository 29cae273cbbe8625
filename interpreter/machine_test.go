package interpreter

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"
)

const supplierSrc = `---
name: supplier-onboarding
description: Check a new supplier and get finance approval.
inputs:
  vendorName: string
  amount: { type: number, description: Expected annual spend in USD }
  tier: { type: string, one_of: [gold, silver], optional: true }
steps:
  - id: check_vendor
    agent: Check the vendor against the sanctions lists.
    output:
      cleared: boolean
      summary: string
    evidence: [file]
    due: 1h
    next:
      - { to: approve, when: Vendor is cleared }
      - { to: decline, when: Any sanctions hit }

  - id: approve
    person: finance-approver
    approve: Approve only when the vendor is cleared.
    due: 2d
    on_reject: check_vendor
    next: done

  - id: decline
    finish: declined

  - id: done
    finish: onboarded
---

# Supplier onboarding
`

func supplier(t testing.TB) (*Process, *Machine) {
	t.Helper()
	p := loadSource(t, supplierSrc)
	m := start(t, p, map[string]any{"vendorName": "Acme", "amount": json.Number("48000")}, starter, ModeLive)
	return p, m
}

func goodSubmit(leaseID string) Submit {
	summary, next, reason := "Searched both lists; no hits.", "approve", "Vendor is cleared."
	return Submit{StepID: "check_vendor", LeaseID: leaseID, Actor: agentA, Submission: Submission{
		Output:   map[string]any{"cleared": true, "summary": "No matches."},
		Evidence: []Evidence{{Kind: "file", Ref: "f_91a"}},
		Summary:  &summary, Next: &next, Reason: &reason,
		Files: map[string]FileCheck{"f_91a": {Found: true, Matches: true, SHA256: "4f1c"}},
	}}
}

func TestStartChecksInputs(t *testing.T) {
	p := loadSource(t, supplierSrc)
	cases := []struct {
		name   string
		inputs map[string]any
		issues []string
	}{
		{"missing and mistyped", map[string]any{"amount": "lots"}, []string{"inputs.vendorName: missing", "inputs.amount: expected number"}},
		{"undeclared", map[string]any{"vendorName": "Acme", "amount": json.Number("1"), "extra": 1}, []string{"inputs.extra: not declared"}},
		{"one_of", map[string]any{"vendorName": "Acme", "amount": json.Number("1"), "tier": "bronze"}, []string{"inputs.tier: not one of gold, silver"}},
		{"null is not a value", map[string]any{"vendorName": nil, "amount": json.Number("1")}, []string{"inputs.vendorName: expected string"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := StartRun(Start{RunID: "r_1", Process: p, Version: 1, Inputs: tc.inputs, Starter: starter}, t0)
			e, ok := err.(*Error)
			if !ok || e.Code != CodeInvalid || !reflect.DeepEqual(e.Issues, tc.issues) {
				t.Fatalf("got %v, want invalid %q", err, tc.issues)
			}
		})
	}
}

func TestStartRefusesRunDataOverCap(t *testing.T) {
	p := loadSource(t, supplierSrc)
	big := string(bytes.Repeat([]byte("x"), 300))
	_, err := StartRun(Start{RunID: "r_1", Process: p, Version: 1, Starter: starter, Limits: Limits{RunDataBytes: 256},
		Inputs: map[string]any{"vendorName": big, "amount": json.Number("1")}}, t0)
	e, ok := err.(*Error)
	if !ok || e.Code != CodeInvalid || !reflect.DeepEqual(e.Issues, []string{"run data: over 256 bytes"}) {
		t.Fatalf("got %v", err)
	}
}

func TestStartRefusesInitiatorForAgentStarter(t *testing.T) {
	p := loadFixture(t, "expense-reimbursement")
	_, err := StartRun(Start{RunID: "r_1", Process: p, Version: 1, Inputs: Samples(p.Inputs), Starter: agentA}, t0)
	if e, ok := err.(*Error); !ok || e.Code != CodeInvalid || len(e.Issues) != 1 {
		t.Fatalf("got %v, want invalid with one issue", err)
	}
	m := start(t, p, Samples(p.Inputs), starter, ModeLive)
	w := openItemFor(t, m, t0, "receipts")
	if w.AssignedTo.Person != starter.ID {
		t.Fatalf("initiator step assigned to %+v, want the starter", w.AssignedTo)
	}
}

func TestStartFailsRunOnMissingPersonPath(t *testing.T) {
	p := loadSource(t, `---
name: p
description: d
inputs:
  owner: { type: person, optional: true }
steps:
  - id: review
    person: inputs.owner
    task: Review.
    next: done
  - id: done
    finish: ok
---
`)
	m := start(t, p, map[string]any{}, starter, ModeLive)
	r := m.Run()
	if r.State != RunEnded || r.Outcome != "failed" || r.Ended.By != "server" || r.Ended.Note == nil {
		t.Fatalf("run = %s/%s ended %+v, want ended failed by server", r.State, r.Outcome, r.Ended)
	}
	d := r.Data.Steps["review"]
	if stepState(m, "review") != StepFailed || d.Decision != DecisionFailed || d.By != "server" {
		t.Fatalf("review = %s %+v", stepState(m, "review"), d.Record)
	}
}

func TestClaimOrdering(t *testing.T) {
	_, m := supplier(t)
	refused(t, m, Claim{StepID: "approve", Actor: agentA, LeaseID: "l1", Lease: lease}, t0, CodeForbidden)
	refused(t, m, Claim{StepID: "check_vendor", Actor: starter, LeaseID: "l1", Lease: lease}, t0, CodeForbidden)
	refused(t, m, Claim{StepID: "nope", Actor: agentA, LeaseID: "l1", Lease: lease}, t0, CodeNotFound)
	c := claim(t, m, "check_vendor", agentA, "l1", t0)
	if c.Handoff != nil || c.ExpiresAt != "2026-10-06T09:10:00.000Z" || c.Step.Next == nil || c.Body != "\n# Supplier onboarding\n" {
		t.Fatalf("claim = %+v", c)
	}
	refused(t, m, Claim{StepID: "check_vendor", Actor: agentA, LeaseID: "l2", Lease: lease}, t0, CodeConflict, IssueClaimedByYou)
	refused(t, m, Claim{StepID: "check_vendor", Actor: agentB, LeaseID: "l2", Lease: lease}, t0, CodeConflict, IssueClaimedByOther)
	must(t, m, goodSubmit("l1"), t0)
	refused(t, m, Claim{StepID: "check_vendor", Actor: agentB, LeaseID: "l3", Lease: lease}, t0, CodeConflict, IssueNotReady)
	// forbidden comes before not_ready (SPEC-DECISIONS §3).
	refused(t, m, Claim{StepID: "decline", Actor: agentB, LeaseID: "l3", Lease: lease}, t0, CodeForbidden)
	must(t, m, Cancel{Actor: operator, Reason: "Vendor withdrew."}, t0)
	refused(t, m, Claim{StepID: "approve", Actor: starter, LeaseID: "l4", Lease: lease}, t0, CodeConflict, IssueRunEnded)
}

func TestSubmitAcceptance(t *testing.T) {
	_, m := supplier(t)
	claim(t, m, "check_vendor", agentA, "l1", t0)
	blankSummary, bad, blankReason := " ", "elsewhere", ""
	sub := Submit{StepID: "check_vendor", LeaseID: "l1", Actor: agentA, Submission: Submission{
		Output:   map[string]any{"cleared": "yes", "extra": 1},
		Evidence: []Evidence{{Kind: "file", Ref: "f_000"}, {Kind: "file", Ref: "f_91a"}},
		Summary:  &blankSummary, Next: &bad, Reason: &blankReason,
		Files: map[string]FileCheck{"f_91a": {Found: true, Matches: false}},
	}}
	refused(t, m, sub, t0, CodeNotAccepted,
		"output.cleared: expected boolean",
		"output.summary: missing",
		"output.extra: not declared",
		"evidence f_000: not found",
		"evidence f_91a: content does not match its hash",
		"next: not one of approve, decline",
		"reason: required",
		"summary: missing",
	)
	noNext := goodSubmit("l1")
	noNext.Next, noNext.Evidence = nil, nil
	refused(t, m, noNext, t0, CodeNotAccepted, "evidence: file required", "next: required, one of approve, decline")
	v := must(t, m, goodSubmit("l1"), t0).(*View)
	d := v.Data.Steps["check_vendor"]
	if d.Next != "approve" || d.Reason != "Vendor is cleared." || d.By != agentA.ID || d.Evidence[0].SHA256 != "4f1c" {
		t.Fatalf("recorded %+v", d.Record)
	}
	if stepState(m, "approve") != StepWaiting || v.Run.State != "waiting" || len(v.WorkItems) != 1 {
		t.Fatalf("after submit: approve %s, run %s, %d items", stepState(m, "approve"), v.Run.State, len(v.WorkItems))
	}
	refused(t, m, goodSubmit("l1"), t0, CodeStale)
}

func TestSubmitOneNextRefusesRoute(t *testing.T) {
	p := loadFixture(t, "incident-postmortem")
	m := start(t, p, Samples(p.Inputs), starter, ModeLive)
	claim(t, m, "draft", agentA, "l1", t0)
	sub := sampleSubmission(p.Step("draft"))
	sub.Next, sub.Reason = ptr("review"), ptr("because")
	refused(t, m, Submit{StepID: "draft", LeaseID: "l1", Actor: agentA, Submission: sub}, t0, CodeNotAccepted,
		"next: not allowed, this step has one next", "reason: not allowed, this step has one next")
}

func TestSubmitRunDataCap(t *testing.T) {
	p := loadSource(t, supplierSrc)
	m, err := StartRun(Start{RunID: "r_1", Process: p, Version: 1, Starter: starter, Limits: Limits{RunDataBytes: 400},
		Inputs: map[string]any{"vendorName": "Acme", "amount": json.Number("1")}}, t0)
	if err != nil {
		t.Fatal(err)
	}
	claim(t, m, "check_vendor", agentA, "l1", t0)
	s := goodSubmit("l1")
	s.Output = map[string]any{"cleared": true, "summary": string(bytes.Repeat([]byte("y"), 400))}
	refused(t, m, s, t0, CodeNotAccepted, "run data: over 400 bytes")
}

func TestRenewAndLeaseExpiry(t *testing.T) {
	_, m := supplier(t)
	claim(t, m, "check_vendor", agentA, "l1", t0)
	r := must(t, m, Renew{StepID: "check_vendor", LeaseID: "l1", NewLeaseID: "l2", Lease: lease, Progress: "OFAC done"}, t0.Add(5*time.Minute)).(*RenewResult)
	if r.ExpiresAt != "2026-10-06T09:15:00.000Z" {
		t.Fatalf("renewed to %s", r.ExpiresAt)
	}
	refused(t, m, goodSubmit("l1"), t0.Add(6*time.Minute), CodeStale)
	if d, _ := m.NextDeadline(); !d.Equal(t0.Add(15 * time.Minute)) {
		t.Fatalf("next deadline %v, want the lease expiry", d)
	}
	late := t0.Add(15 * time.Minute)
	refused(t, m, goodSubmit("l2"), late, CodeStale)
	refused(t, m, Renew{StepID: "check_vendor", LeaseID: "l2", NewLeaseID: "l3", Lease: lease}, late, CodeStale)
	if w := m.AgentWork(late); len(w) != 1 || w[0].Handoff == nil || w[0].Handoff.Progress != "OFAC done" {
		t.Fatalf("agent work after expiry = %+v", w)
	}
	c := claim(t, m, "check_vendor", agentB, "l4", late)
	if c.Handoff == nil || c.Handoff.Progress != "OFAC done" {
		t.Fatalf("handoff = %+v", c.Handoff)
	}
}

func TestRefusedSubmissionIssuesReachTheHandoff(t *testing.T) {
	_, m := supplier(t)
	claim(t, m, "check_vendor", agentA, "l1", t0)
	bad := goodSubmit("l1")
	bad.Output = map[string]any{"cleared": true}
	e := refused(t, m, bad, t0, CodeNotAccepted, "output.summary: missing")
	snap := m.Snapshot()
	must(t, m, NoteRefusal{StepID: "check_vendor", LeaseID: "l1", Issues: e.Issues}, t0)
	if m.Snapshot() != snap {
		t.Fatal("noting a refusal changed the snapshot")
	}
	m.Tick(t0.Add(lease))
	c := claim(t, m, "check_vendor", agentB, "l2", t0.Add(lease))
	if c.Handoff == nil || !reflect.DeepEqual(c.Handoff.Issues, []string{"output.summary: missing"}) {
		t.Fatalf("handoff = %+v", c.Handoff)
	}
}

func TestDecideErrorOrder(t *testing.T) {
	_, m := supplier(t)
	claim(t, m, "check_vendor", agentA, "l1", t0)
	must(t, m, goodSubmit("l1"), t0)
	w := openItemFor(t, m, t0, "approve")
	fin := Actor{ID: "ann@example.com", Kind: ActorPerson, Groups: []string{"finance-approver"}}
	ok := Decide{WorkItemID: w.ID, Snapshot: w.Snapshot, Decision: DecisionApproved, Actor: fin}

	// invalid before anything else
	withNext := ok
	withNext.Next = ptr("done")
	refused(t, m, withNext, t0, CodeInvalid, "next: only with completed")
	noNote := ok
	noNote.Decision = DecisionRejected
	refused(t, m, noNote, t0, CodeInvalid, "note: required")
	completedNote := ok
	completedNote.Decision, completedNote.Note = DecisionCompleted, ptr("x")
	refused(t, m, completedNote, t0, CodeInvalid)
	wrongKind := ok
	wrongKind.Decision, wrongKind.Note = DecisionReturned, ptr("back")
	refused(t, m, wrongKind, t0, CodeInvalid, "decision: not one of approved, rejected, failed")

	missing := ok
	missing.WorkItemID = "w_99"
	refused(t, m, missing, t0, CodeNotFound)
	stale := ok
	stale.Snapshot = "0000"
	refused(t, m, stale, t0, CodeStale)
	asAgent := ok
	asAgent.Actor = agentA
	refused(t, m, asAgent, t0, CodeForbidden)
	asOutsider := ok
	asOutsider.Actor = outsider
	refused(t, m, asOutsider, t0, CodeForbidden)

	reject := ok
	reject.Decision, reject.Note = DecisionRejected, ptr("Spend not justified.")
	must(t, m, reject, t0)
	if stepState(m, "check_vendor") != StepReady || stepState(m, "approve") != StepNull {
		t.Fatalf("after rejection: check_vendor %s approve %s", stepState(m, "check_vendor"), stepState(m, "approve"))
	}
	// already_decided comes before stale
	refused(t, m, ok, t0, CodeConflict, IssueAlreadyDecided)
	must(t, m, Cancel{Actor: operator, Reason: "Stop."}, t0)
	// run_ended comes before already_decided
	refused(t, m, ok, t0, CodeConflict, IssueRunEnded)
}

func TestDecideStaleAfterRunDataChanges(t *testing.T) {
	p := loadFixture(t, "major-incident")
	m := start(t, p, Samples(p.Inputs), starter, ModeLive)
	claim(t, m, "activate", agentA, "l1", t0)
	must(t, m, Submit{StepID: "activate", LeaseID: "l1", Actor: agentA, Submission: sampleSubmission(p.Step("activate"))}, t0)
	for _, id := range []string{"operations", "security", "communications"} {
		if stepState(m, id) != StepWaiting {
			t.Fatalf("branch entry %s is %s after the fork", id, stepState(m, id))
		}
	}
	ops := openItemFor(t, m, t0, "operations")
	sec := openItemFor(t, m, t0, "security")
	must(t, m, Decide{WorkItemID: ops.ID, Snapshot: ops.Snapshot, Decision: DecisionCompleted, Actor: member(ops), Submission: sampleSubmission(p.Step("operations"))}, t0)
	// a sibling completion changed run data: the security decision is stale
	refused(t, m, Decide{WorkItemID: sec.ID, Snapshot: sec.Snapshot, Decision: DecisionCompleted, Actor: member(sec), Submission: sampleSubmission(p.Step("security"))}, t0, CodeStale)
	if stepState(m, "respond") != StepWaiting {
		t.Fatalf("respond joined early")
	}
}

func TestParallelReworkRewindsRegion(t *testing.T) {
	p := loadFixture(t, "major-incident")
	m := start(t, p, Samples(p.Inputs), starter, ModeLive)
	claim(t, m, "activate", agentA, "l1", t0)
	must(t, m, Submit{StepID: "activate", LeaseID: "l1", Actor: agentA, Submission: sampleSubmission(p.Step("activate"))}, t0)
	for _, id := range []string{"operations", "security", "communications"} {
		w := openItemFor(t, m, t0, id)
		must(t, m, Decide{WorkItemID: w.ID, Snapshot: w.Snapshot, Decision: DecisionCompleted, Actor: member(w), Submission: sampleSubmission(p.Step(id))}, t0)
	}
	if stepState(m, "respond") != StepDone || stepState(m, "close_review") != StepWaiting {
		t.Fatalf("after the join: respond %s, close_review %s", stepState(m, "respond"), stepState(m, "close_review"))
	}
	later := t0.Add(30 * time.Minute)
	w := openItemFor(t, m, later, "close_review")
	v := must(t, m, Decide{WorkItemID: w.ID, Snapshot: w.Snapshot, Decision: DecisionRejected, Note: ptr("Security evidence is thin."), Actor: member(w)}, later).(*View)
	for _, id := range []string{"operations", "security", "communications"} {
		if stepState(m, id) != StepWaiting {
			t.Fatalf("%s is %s after rework, want waiting", id, stepState(m, id))
		}
		d := v.Data.Steps[id]
		if d.Record != nil || len(d.History) != 1 {
			t.Fatalf("%s data after rework = %+v", id, d)
		}
		_, sr := m.stepRun(id)
		if !sr.Due.Equal(later.Add(time.Hour)) {
			t.Fatalf("%s due %v, want a fresh clock", id, sr.Due)
		}
	}
	if stepState(m, "respond") != StepWaiting || stepState(m, "close_review") != StepNull || stepState(m, "activate") != StepDone {
		t.Fatalf("respond %s close_review %s activate %s", stepState(m, "respond"), stepState(m, "close_review"), stepState(m, "activate"))
	}
	cr := v.Data.Steps["close_review"]
	if cr.Decision != DecisionRejected || *cr.Note != "Security evidence is thin." {
		t.Fatalf("rejecting approval data = %+v", cr.Record)
	}
}

func TestBranchFailureCancelsSiblings(t *testing.T) {
	p := loadFixture(t, "major-incident")
	m := start(t, p, Samples(p.Inputs), starter, ModeLive)
	claim(t, m, "activate", agentA, "l1", t0)
	must(t, m, Submit{StepID: "activate", LeaseID: "l1", Actor: agentA, Submission: sampleSubmission(p.Step("activate"))}, t0)
	w := openItemFor(t, m, t0, "security")
	must(t, m, Decide{WorkItemID: w.ID, Snapshot: w.Snapshot, Decision: DecisionFailed, Note: ptr("Cannot contain."), Actor: member(w)}, t0)
	if stepState(m, "security") != StepFailed || stepState(m, "operations") != StepCancelled || stepState(m, "respond") != StepCancelled {
		t.Fatalf("states: security %s operations %s respond %s", stepState(m, "security"), stepState(m, "operations"), stepState(m, "respond"))
	}
	r := m.Run()
	if r.Outcome != "failed" || r.Ended.By != member(w).ID || *r.Ended.Note != "Cannot contain." {
		t.Fatalf("ended %+v", r.Ended)
	}
}

func TestRejectWithoutOnRejectEndsRun(t *testing.T) {
	p := loadFixture(t, "customer-offboarding")
	m := start(t, p, Samples(p.Inputs), starter, ModeLive)
	w := openItemFor(t, m, t0, "authorize")
	v := must(t, m, Decide{WorkItemID: w.ID, Snapshot: w.Snapshot, Decision: DecisionRejected, Note: ptr("Not the customer."), Actor: member(w)}, t0).(*View)
	if v.Run.State != "ended" || *v.Run.Outcome != "rejected" || *v.Run.Ended.Note != "Not the customer." {
		t.Fatalf("run = %+v", v.Run)
	}
}

func TestEscalateAndDecide(t *testing.T) {
	for _, decision := range []string{DecisionReturned, DecisionCompleted, DecisionFailed} {
		t.Run(decision, func(t *testing.T) {
			p, m := supplier(t)
			claim(t, m, "check_vendor", agentA, "l1", t0)
			refused(t, m, Escalate{StepID: "check_vendor", LeaseID: "l1", Actor: agentA, Note: " "}, t0, CodeInvalid, "note: required")
			v := must(t, m, Escalate{StepID: "check_vendor", LeaseID: "l1", Actor: agentA, Note: "The screening site is down."}, t0).(*View)
			refused(t, m, goodSubmit("l1"), t0, CodeStale)
			if len(v.WorkItems) != 1 || v.WorkItems[0].Escalation == nil || v.WorkItems[0].Kind != "agent" || v.WorkItems[0].AssignedTo.Group != "operators" {
				t.Fatalf("work items = %+v", v.WorkItems)
			}
			w := v.WorkItems[0]
			if !reflect.DeepEqual(w.Decide.Decisions, []string{"returned", "completed", "failed"}) {
				t.Fatalf("decisions %v", w.Decide.Decisions)
			}
			_, sr := m.stepRun("check_vendor")
			due := *sr.Due
			now := t0.Add(time.Minute)
			d := Decide{WorkItemID: w.ID, Snapshot: w.Snapshot, Decision: decision, Actor: operator}
			switch decision {
			case DecisionReturned:
				d.Note = ptr("Use the mirror.")
			case DecisionCompleted:
				g := goodSubmit("")
				d.Submission = g.Submission
				d.Summary = nil
			case DecisionFailed:
				d.Note = ptr("Vendor unknown.")
			}
			must(t, m, d, now)
			switch decision {
			case DecisionReturned:
				c := claim(t, m, "check_vendor", agentB, "l2", now)
				if c.Handoff == nil || c.Handoff.Returned == nil || c.Handoff.Returned.Note != "Use the mirror." || c.Handoff.Returned.By != operator.ID {
					t.Fatalf("handoff = %+v", c.Handoff)
				}
				if _, sr := m.stepRun("check_vendor"); !sr.Due.Equal(due) {
					t.Fatalf("returned restarted the due clock")
				}
			case DecisionCompleted:
				if stepState(m, "approve") != StepWaiting || m.Run().Data.Steps["check_vendor"].By != operator.ID {
					t.Fatalf("completed by the operator did not move on")
				}
			case DecisionFailed:
				if m.Run().Outcome != "failed" || stepState(m, "check_vendor") != StepFailed {
					t.Fatalf("failed did not end the run")
				}
			}
			_ = p
		})
	}
}

func TestDueMarksOverdueOnce(t *testing.T) {
	_, m := supplier(t)
	d, ok := m.NextDeadline()
	if !ok || !d.Equal(t0.Add(time.Hour)) {
		t.Fatalf("deadline %v", d)
	}
	m.Tick(d)
	m.Tick(d.Add(time.Minute))
	e := overdueEffects(m.TakeEffects())
	if len(e) != 1 || e[0].Kind != EffectOverdue || e[0].StepID != "check_vendor" {
		t.Fatalf("effects %+v", e)
	}
	v := m.View(d)
	if v.Steps[0].Overdue == nil || !*v.Steps[0].Overdue || m.Run().State != RunActive {
		t.Fatalf("step view %+v", v.Steps[0])
	}
}

func TestCancel(t *testing.T) {
	_, m := supplier(t)
	refused(t, m, Cancel{Actor: agentA, Reason: "x"}, t0, CodeForbidden)
	refused(t, m, Cancel{Actor: operator, Reason: " "}, t0, CodeInvalid, "reason: required")
	claim(t, m, "check_vendor", agentA, "l1", t0)
	v := must(t, m, Cancel{Actor: operator, Reason: "Vendor withdrew."}, t0).(*View)
	if v.Run.State != "cancelled" || v.Run.Outcome != nil || v.Run.Ended.By != operator.ID || *v.Run.Ended.Note != "Vendor withdrew." {
		t.Fatalf("run %+v", v.Run)
	}
	if *v.Steps[0].State != "cancelled" || v.Steps[1].State != nil {
		t.Fatalf("steps %+v", v.Steps)
	}
	refused(t, m, Cancel{Actor: operator, Reason: "again"}, t0, CodeConflict, IssueRunEnded)
	refused(t, m, goodSubmit("l1"), t0, CodeConflict, IssueRunEnded)
	refused(t, m, SendEvent{Name: "x", Actor: agentA}, t0, CodeConflict, IssueRunEnded)
}

const eventsSrc = `---
name: settle
description: Wait for settlement events.
steps:
  - id: first
    wait_for: settled
    timeout: 1d
    on_timeout: chase
  - id: second
    wait_for: settled
    next: done
  - id: chase
    agent: Chase the payment.
    next: done
  - id: done
    finish: ok
---
`

func TestEventsHeldAndConsumedOldestFirst(t *testing.T) {
	p := loadSource(t, eventsSrc)
	m := start(t, p, nil, starter, ModeLive)
	res := must(t, m, SendEvent{Name: "settled", Data: map[string]any{"n": json.Number("1")}, Actor: agentA}, t0).(*EventResult)
	if res.ConsumedBy == nil || *res.ConsumedBy != "first" {
		t.Fatalf("consumedBy %v", res.ConsumedBy)
	}
	// second is waiting now; hold two "other" events and one for nobody
	res = must(t, m, SendEvent{Name: "unrelated", Actor: operator}, t0).(*EventResult)
	if res.ConsumedBy != nil {
		t.Fatalf("unrelated event consumed by %s", *res.ConsumedBy)
	}
	must(t, m, SendEvent{Name: "settled", Actor: agentB}, t0)
	d := m.Run().Data.Steps["second"]
	if d.By != agentB.ID || d.Output == nil || len(d.Output) != 0 {
		t.Fatalf("second recorded %+v, want empty output from a_other", d.Record)
	}
	if m.Run().Outcome != "ok" {
		t.Fatalf("outcome %q", m.Run().Outcome)
	}
	if first := m.Run().Data.Steps["first"]; first.Output["n"] != json.Number("1") || first.By != agentA.ID {
		t.Fatalf("first recorded %+v", first.Record)
	}
}

func TestEventsHeldBeforeWaitOldestFirst(t *testing.T) {
	p := loadSource(t, `---
name: held
description: Hold events.
steps:
  - id: work
    agent: Work.
  - id: wait_one
    wait_for: paid
  - id: wait_two
    wait_for: paid
  - id: done
    finish: ok
---
`)
	m := start(t, p, nil, starter, ModeLive)
	for i, who := range []Actor{agentA, agentB} {
		res := must(t, m, SendEvent{Name: "paid", Data: map[string]any{"i": json.Number(string(rune('1' + i)))}, Actor: who}, t0).(*EventResult)
		if res.ConsumedBy != nil {
			t.Fatalf("event consumed early by %s", *res.ConsumedBy)
		}
	}
	claim(t, m, "work", agentA, "l1", t0)
	must(t, m, Submit{StepID: "work", LeaseID: "l1", Actor: agentA, Submission: sampleSubmission(p.Step("work"))}, t0)
	one, two := m.Run().Data.Steps["wait_one"], m.Run().Data.Steps["wait_two"]
	if one.By != agentA.ID || two.By != agentB.ID || m.Run().Outcome != "ok" {
		t.Fatalf("wait_one by %s, wait_two by %s, outcome %q", one.By, two.By, m.Run().Outcome)
	}
}

func TestWaitForTimeout(t *testing.T) {
	p := loadSource(t, eventsSrc)
	m := start(t, p, nil, starter, ModeLive)
	d, _ := m.NextDeadline()
	if !d.Equal(t0.Add(24 * time.Hour)) {
		t.Fatalf("deadline %v", d)
	}
	m.Tick(d)
	if stepState(m, "first") != StepDone || stepState(m, "chase") != StepReady || stepState(m, "second") != StepNull {
		t.Fatalf("first %s chase %s second %s", stepState(m, "first"), stepState(m, "chase"), stepState(m, "second"))
	}
	if r := m.Run().Data.Steps["first"]; r.By != "server" || r.Output != nil {
		t.Fatalf("timeout recorded %+v", r.Record)
	}
}

func TestWaitUntil(t *testing.T) {
	p := loadFixture(t, "blog-publication")
	in := Samples(p.Inputs)
	cases := []struct {
		name      string
		publishAt any
		want      StepState
	}{
		{"past continues at once", "2026-10-01T00:00:00Z", StepDone},
		{"future waits", "2026-10-09T00:00:00+02:00", StepWaiting},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in["publishAt"] = tc.publishAt
			m := start(t, p, in, starter, ModeLive)
			claim(t, m, "draft", agentA, "l1", t0)
			must(t, m, Submit{StepID: "draft", LeaseID: "l1", Actor: agentA, Submission: sampleSubmission(p.Step("draft"))}, t0)
			w := openItemFor(t, m, t0, "editor_review")
			must(t, m, Decide{WorkItemID: w.ID, Snapshot: w.Snapshot, Decision: DecisionApproved, Actor: member(w)}, t0)
			if got := stepState(m, "publication_time"); got != tc.want {
				t.Fatalf("publication_time %s, want %s", got, tc.want)
			}
			if tc.want == StepWaiting {
				d, _ := m.NextDeadline()
				if !d.Equal(time.Date(2026, 10, 8, 22, 0, 0, 0, time.UTC)) {
					t.Fatalf("deadline %v", d)
				}
				m.Tick(d)
				if stepState(m, "publish") != StepReady {
					t.Fatalf("publish %s after the wait", stepState(m, "publish"))
				}
			}
		})
	}
}

func TestWaitUntilMissingFailsRun(t *testing.T) {
	p := loadSource(t, `---
name: w
description: d
inputs:
  at: { type: datetime, optional: true }
steps:
  - id: hold
    wait_until: inputs.at
  - id: done
    finish: ok
---
`)
	m := start(t, p, nil, starter, ModeLive)
	if m.Run().Outcome != "failed" || stepState(m, "hold") != StepFailed || m.Run().Data.Steps["hold"].By != "server" {
		t.Fatalf("run %s %s, hold %s", m.Run().State, m.Run().Outcome, stepState(m, "hold"))
	}
}

func TestStateRoundTrips(t *testing.T) {
	p, m := supplier(t)
	claim(t, m, "check_vendor", agentA, "l1", t0)
	must(t, m, Renew{StepID: "check_vendor", LeaseID: "l1", NewLeaseID: "l2", Lease: lease, Progress: "half"}, t0)
	b := state(t, m)
	m2, err := Restore(p, b)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b, state(t, m2)) {
		t.Fatalf("state changed through a round trip:\n%s\n%s", b, state(t, m2))
	}
	if _, err := Restore(loadFixture(t, "vendor-check"), b); err == nil {
		t.Fatal("restore accepted another process")
	}
	must(t, m2, goodSubmit("l2"), t0)
}

func TestViewSnapshotIgnoresNonDataChanges(t *testing.T) {
	_, m := supplier(t)
	s1 := m.Snapshot()
	claim(t, m, "check_vendor", agentA, "l1", t0)
	if m.Snapshot() != s1 {
		t.Fatal("a claim changed the snapshot")
	}
	must(t, m, goodSubmit("l1"), t0)
	if m.Snapshot() == s1 {
		t.Fatal("a submission did not change the snapshot")
	}
}

func TestDecideInvalidCombinations(t *testing.T) {
	_, m := supplier(t)
	claim(t, m, "check_vendor", agentA, "l1", t0)
	must(t, m, goodSubmit("l1"), t0)
	w := openItemFor(t, m, t0, "approve")
	fin := Actor{ID: "ann@example.com", Kind: ActorPerson, Groups: []string{"finance-approver"}}
	out := map[string]any{"x": 1}
	cases := []struct {
		name   string
		d      Decide
		issues []string
	}{
		{"unknown decision", Decide{Decision: "maybe"}, []string{"decision: not one of completed, approved, rejected, returned, failed"}},
		{"output on approved", Decide{Decision: DecisionApproved, Submission: Submission{Output: out}}, []string{"output: only with completed"}},
		{"evidence on rejected", Decide{Decision: DecisionRejected, Note: ptr("n"), Submission: Submission{Evidence: []Evidence{}}}, []string{"evidence: only with completed"}},
		{"summary on failed", Decide{Decision: DecisionFailed, Note: ptr("n"), Submission: Submission{Summary: ptr("s")}}, []string{"summary: only with completed"}},
		{"reason on approved", Decide{Decision: DecisionApproved, Submission: Submission{Reason: ptr("r")}}, []string{"reason: only with completed"}},
		{"blank note on failed", Decide{Decision: DecisionFailed, Note: ptr("  ")}, []string{"note: required"}},
		{"completed on an approval", Decide{Decision: DecisionCompleted}, []string{"decision: not one of approved, rejected, failed"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := tc.d
			d.WorkItemID, d.Snapshot, d.Actor = w.ID, w.Snapshot, fin
			refused(t, m, d, t0, CodeInvalid, tc.issues...)
			// invalid comes before forbidden and stale, too
			d.Actor, d.Snapshot = agentA, "old"
			refused(t, m, d, t0, CodeInvalid, tc.issues...)
		})
	}
	// approved may carry a note, and it is recorded (SPEC-DECISIONS §25)
	must(t, m, Decide{WorkItemID: w.ID, Snapshot: w.Snapshot, Decision: DecisionApproved, Note: ptr("Fine."), Actor: fin}, t0)
	if n := m.Run().Data.Steps["approve"].Note; n == nil || *n != "Fine." {
		t.Fatalf("note on approved = %v", n)
	}
}

func TestPersonPathIntoStepOutput(t *testing.T) {
	p := loadSource(t, `---
name: route
description: d
steps:
  - id: pick
    agent: Pick a reviewer.
    output: { reviewer: person }
  - id: review
    person: steps.pick.output.reviewer
    approve: Review it.
    due: 4h
    next: done
  - id: done
    finish: ok
---
`)
	m := start(t, p, nil, starter, ModeLive)
	claim(t, m, "pick", agentA, "l1", t0)
	sub := sampleSubmission(p.Step("pick"))
	sub.Output = map[string]any{"reviewer": "rita@example.com"}
	must(t, m, Submit{StepID: "pick", LeaseID: "l1", Actor: agentA, Submission: sub}, t0)
	w := openItemFor(t, m, t0, "review")
	if w.AssignedTo.Person != "rita@example.com" {
		t.Fatalf("assigned to %+v", w.AssignedTo)
	}
	if got := m.PersonWork(t0, Actor{ID: "Rita@Example.com", Kind: ActorPerson}); len(got) != 1 {
		t.Fatalf("rita's inbox has %d items", len(got))
	}
	if got := m.PersonWork(t0, outsider); len(got) != 0 {
		t.Fatalf("an outsider sees %d items", len(got))
	}
	refused(t, m, Decide{WorkItemID: w.ID, Snapshot: w.Snapshot, Decision: DecisionApproved, Actor: outsider}, t0, CodeForbidden)
	m.Tick(t0.Add(4 * time.Hour))
	e := overdueEffects(m.TakeEffects())
	if len(e) != 1 || e[0].WorkItemID != w.ID || e[0].AssignedTo.Person != "rita@example.com" || e[0].Operators != "operators" {
		t.Fatalf("overdue effects %+v", e)
	}
	if w := openItemFor(t, m, t0.Add(4*time.Hour), "review"); w.Due == nil || !w.Overdue {
		t.Fatalf("work item due %v overdue %v", w.Due, w.Overdue)
	}
}

// A live lease belongs to the agent that claimed it: another agent holding
// its token cannot submit, renew or escalate with it.
func TestTokenBelongsToItsHolder(t *testing.T) {
	_, m := supplier(t)
	claim(t, m, "check_vendor", agentA, "l1", t0)
	stolen := goodSubmit("l1")
	stolen.Actor = agentB
	refused(t, m, stolen, t0, CodeForbidden)
	refused(t, m, Renew{StepID: "check_vendor", LeaseID: "l1", NewLeaseID: "l2", Lease: lease, Actor: agentB}, t0, CodeForbidden)
	refused(t, m, Escalate{StepID: "check_vendor", LeaseID: "l1", Actor: agentB, Note: "mine now"}, t0, CodeForbidden)
	// the holder is an agent: an operator or person with the same id text
	// is someone else
	sameName := goodSubmit("l1")
	sameName.Actor = Actor{ID: agentA.ID, Kind: ActorOperator}
	refused(t, m, sameName, t0, CodeForbidden)
	sameName.Actor.Kind = ActorPerson
	refused(t, m, sameName, t0, CodeForbidden)
	// stale comes first: a token whose lease ended is stale for anyone
	refused(t, m, stolen, t0.Add(lease), CodeStale)
	must(t, m, Renew{StepID: "check_vendor", LeaseID: "l1", NewLeaseID: "l2", Lease: lease, Actor: agentA}, t0)
	must(t, m, goodSubmit("l2"), t0)
}

// A run that time ended answers run_ended to every write, even before a
// Tick has applied it.
func TestRunEndedByTimeComesFirst(t *testing.T) {
	p := loadSource(t, `---
name: timed
description: Work, wait a day, finish.
steps:
  - id: work
    agent: Work.
    next: [pause, other]
  - id: pause
    wait: 1d
    next: done
  - id: other
    agent: Not taken.
    next: done
  - id: done
    finish: ok
---
`)
	m := start(t, p, nil, starter, ModeLive)
	claim(t, m, "work", agentA, "l1", t0)
	must(t, m, Submit{StepID: "work", LeaseID: "l1", Actor: agentA, Submission: sampleSubmission(p.Step("work"))}, t0)
	later := t0.Add(25 * time.Hour)
	for _, cmd := range []Command{
		Claim{StepID: "other", Actor: agentA, LeaseID: "l2", Lease: lease},
		Submit{StepID: "work", LeaseID: "l1", Actor: agentA, Submission: sampleSubmission(p.Step("work"))},
		Cancel{Actor: agentA, Reason: "stop"},
		SendEvent{Name: "x", Actor: starter},
	} {
		refused(t, m, cmd, later, CodeConflict, IssueRunEnded)
	}
}

// TestFinishOutcomesRejectedAndFailed: a finish may use the outcome words
// rejected and failed (SPEC-DECISIONS §33); run.ended tells such a finish
// (note null, no failed step) from a server failure (a note, a failed step).
func TestFinishOutcomesRejectedAndFailed(t *testing.T) {
	p := loadSource(t, `---
name: outcomes
description: A finish whose outcome looks like the run's own.
inputs:
  who: { type: person, optional: true }
steps:
  - id: triage
    agent: Triage.
    next: [refuse, give_up, ask]
  - id: refuse
    finish: rejected
  - id: give_up
    finish: failed
  - id: ask
    person: inputs.who
    task: Answer.
    next: give_up
---
`)
	for _, tc := range []struct{ route, outcome string }{{"refuse", "rejected"}, {"give_up", "failed"}} {
		m := start(t, p, nil, starter, ModeLive)
		claim(t, m, "triage", agentA, "l1", t0)
		sub := sampleSubmission(p.Step("triage"))
		sub.Next = ptr(tc.route)
		v := must(t, m, Submit{StepID: "triage", LeaseID: "l1", Actor: agentA, Submission: sub}, t0).(*View)
		if v.Run.State != "ended" || v.Run.Outcome == nil || *v.Run.Outcome != tc.outcome {
			t.Fatalf("%s: run %+v", tc.route, v.Run)
		}
		if e := v.Run.Ended; e == nil || e.By != "server" || e.Note != nil {
			t.Fatalf("%s: ended %+v, want by server with a null note", tc.route, e)
		}
		if stepState(m, tc.route) != StepDone {
			t.Fatalf("%s is %s, want done", tc.route, stepState(m, tc.route))
		}
	}
	// A server failure: the person path resolves to nothing.
	m := start(t, p, nil, starter, ModeLive)
	claim(t, m, "triage", agentA, "l1", t0)
	sub := sampleSubmission(p.Step("triage"))
	sub.Next = ptr("ask")
	v := must(t, m, Submit{StepID: "triage", LeaseID: "l1", Actor: agentA, Submission: sub}, t0).(*View)
	if *v.Run.Outcome != "failed" || v.Run.Ended.Note == nil || stepState(m, "ask") != StepFailed {
		t.Fatalf("server failure: run %+v ended %+v ask %s", v.Run, v.Run.Ended, stepState(m, "ask"))
	}
}

// The cap counts run data as written: <, > and & are one byte each, as
// RunDataSize (and the cap at start and on events) counts them, not the six
// of an HTML-escaped encoding.
func TestRunDataCapCountsCharactersAsWritten(t *testing.T) {
	p := loadSource(t, supplierSrc)
	inputs := map[string]any{"vendorName": "A&B <Ltd>", "amount": json.Number("1")}
	probe, err := StartRun(Start{RunID: "r_1", Process: p, Version: 1, Starter: starter, Inputs: inputs}, t0)
	if err != nil {
		t.Fatal(err)
	}
	claim(t, probe, "check_vendor", agentA, "l1", t0)
	s := goodSubmit("l1")
	s.Output = map[string]any{"cleared": true, "summary": strings.Repeat("<&>", 30)}
	must(t, probe, s, t0)
	exact := RunDataSize(&probe.Run().Data)

	// A cap of exactly that size takes the same submission.
	m, err := StartRun(Start{RunID: "r_1", Process: p, Version: 1, Starter: starter, Limits: Limits{RunDataBytes: exact}, Inputs: inputs}, t0)
	if err != nil {
		t.Fatal(err)
	}
	claim(t, m, "check_vendor", agentA, "l1", t0)
	must(t, m, s, t0)
}

// A step's output of HTML counts as many bytes as the same output without
// it: the records are not HTML-escaped when the run data is measured.
func TestRunDataSizeOfOutputsIgnoresHTML(t *testing.T) {
	size := func(summary string) int {
		_, m := supplier(t)
		claim(t, m, "check_vendor", agentA, "l1", t0)
		s := goodSubmit("l1")
		s.Output = map[string]any{"cleared": true, "summary": summary}
		must(t, m, s, t0)
		return RunDataSize(&m.Run().Data)
	}
	if html, plain := size(strings.Repeat("<&>", 30)), size(strings.Repeat("abc", 30)); html != plain {
		t.Fatalf("run data with HTML in an output is %d bytes, without %d", html, plain)
	}
}
