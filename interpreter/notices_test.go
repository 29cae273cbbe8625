package interpreter

import (
	"strings"
	"testing"
	"time"
)

// overdueEffects keeps the EffectOverdue effects of a list.
func overdueEffects(effects []Effect) []Effect {
	var out []Effect
	for _, e := range effects {
		if e.Kind == EffectOverdue {
			out = append(out, e)
		}
	}
	return out
}

// notices keeps the notices of a list of effects.
func notices(effects []Effect) []*Notice {
	var out []*Notice
	for _, e := range effects {
		if e.Kind == EffectNotice {
			out = append(out, e.Notice)
		}
	}
	return out
}

// noticeLines is each notice as "type item-or-step", for comparing.
func noticeLines(ns []*Notice) string {
	var b []string
	for _, n := range ns {
		line := string(n.Type)
		switch {
		case n.WorkItem != nil:
			line += " " + n.WorkItem.ID + " " + n.WorkItem.StepID
		case n.Step != nil:
			line += " step " + n.Step.ID
		}
		b = append(b, line)
	}
	return strings.Join(b, "\n")
}

const noticeSrc = `---
name: invoice
description: Approve an invoice.
inputs:
  invoiceId: string
  manager: person
steps:
  - id: validate
    agent: |
      Match the invoice in ERP.
      Escalate discrepancies.
    due: 1h
  - id: approve
    person: inputs.manager
    approve: Approve the matched invoice.
    due: 2d
  - id: done
    finish: approved
---
`

// Each event of a run asks for one notice, with the item's details as the
// item has them, in the order they happened; the run ended is for its
// starter; replaying the same commands gives the same ids.
func TestNoticesOfARun(t *testing.T) {
	walk := func() []*Notice {
		p := loadSource(t, noticeSrc)
		m := start(t, p, map[string]any{"invoiceId": "INV-7", "manager": "rita@example.com"}, starter, ModeLive)
		var all []*Notice
		take := func() { all = append(all, notices(m.TakeEffects())...) }
		take()
		claim(t, m, "validate", agentA, "l1", t0.Add(55*time.Minute))
		m.Tick(t0.Add(time.Hour)) // the agent step is overdue
		take()
		must(t, m, Submit{StepID: "validate", LeaseID: "l1", Actor: agentA, Submission: sampleSubmission(p.Steps[0])}, t0.Add(time.Hour))
		take()
		w := openItemFor(t, m, t0.Add(time.Hour), "approve")
		m.Tick(t0.Add(time.Hour + 48*time.Hour))
		take()
		must(t, m, Decide{WorkItemID: w.ID, Snapshot: m.Snapshot(), Decision: DecisionApproved, Actor: Actor{ID: "rita@example.com", Kind: ActorPerson}}, t0.Add(50*time.Hour))
		take()
		return all
	}
	got := walk()
	want := strings.Join([]string{
		"work.overdue step validate",
		"work.opened w_1 approve",
		"work.overdue w_1 approve",
		"work.decided w_1 approve",
		"run.ended",
	}, "\n")
	if lines := noticeLines(got); lines != want {
		t.Fatalf("notices:\n%s\nwant:\n%s", lines, want)
	}
	ids := map[string]bool{}
	for _, n := range got {
		if !strings.HasPrefix(n.ID, "ev_") || len(n.ID) != 35 || ids[n.ID] {
			t.Fatalf("notice id %q is not a fresh ev_ id", n.ID)
		}
		ids[n.ID] = true
		if n.Run.ID != "r_1" || n.Run.Process != "invoice" || n.Run.Version != 1 || n.Run.Mode != ModeLive || n.Operators != DefaultOperators {
			t.Fatalf("notice run %+v operators %q", n.Run, n.Operators)
		}
	}
	opened := got[1].WorkItem
	due := t0.Add(time.Hour + 48*time.Hour)
	if opened.Kind != ItemApprove || opened.AssignedTo.Person != "rita@example.com" || opened.Title != "Approve the matched invoice." ||
		opened.Due == nil || !opened.Due.Equal(due) || !got[1].At.Equal(t0.Add(time.Hour)) {
		t.Fatalf("work.opened item %+v at %v", opened, got[1].At)
	}
	if s := got[0].Step; s == nil || !s.Due.Equal(t0.Add(time.Hour)) || !got[0].At.Equal(t0.Add(time.Hour)) {
		t.Fatalf("overdue agent step %+v", got[0])
	}
	if d := got[3].WorkItem; d.Decision != DecisionApproved || d.DecidedBy != "rita@example.com" {
		t.Fatalf("work.decided item %+v", d)
	}
	if end := got[4]; end.Run.Outcome != "approved" || end.Run.StartedBy.ID != starter.ID || !end.At.Equal(t0.Add(50*time.Hour)) {
		t.Fatalf("run.ended %+v", end)
	}
	again := walk()
	for i := range got {
		if again[i].ID != got[i].ID {
			t.Fatalf("notice %d has id %s the first time, %s the second", i, got[i].ID, again[i].ID)
		}
	}
}

// A test-mode run asks for no notice, whatever happens in it (spec §3.3).
func TestNoNoticesInTestMode(t *testing.T) {
	p := loadSource(t, noticeSrc)
	m := start(t, p, map[string]any{"invoiceId": "INV-7", "manager": "rita@example.com"}, starter, ModeTest)
	claim(t, m, "validate", agentA, "l1", t0.Add(55*time.Minute))
	m.Tick(t0.Add(time.Hour))
	must(t, m, Submit{StepID: "validate", LeaseID: "l1", Actor: agentA, Submission: sampleSubmission(p.Steps[0])}, t0.Add(time.Hour))
	w := openItemFor(t, m, t0.Add(time.Hour), "approve")
	must(t, m, Decide{WorkItemID: w.ID, Snapshot: m.Snapshot(), Decision: DecisionRejected, Note: ptr("no"), Actor: Actor{ID: "rita@example.com", Kind: ActorPerson}}, t0.Add(2*time.Hour))
	if e := m.TakeEffects(); len(e) != 0 {
		t.Fatalf("a test run asked for %+v", e)
	}
}

// A refused command and a Check ask for nothing.
func TestNoNoticesFromRefusalsOrChecks(t *testing.T) {
	p := loadSource(t, noticeSrc)
	m := start(t, p, map[string]any{"invoiceId": "INV-7", "manager": "rita@example.com"}, starter, ModeLive)
	m.TakeEffects()
	claim(t, m, "validate", agentA, "l1", t0)
	sub := Submit{StepID: "validate", LeaseID: "l1", Actor: agentA, Submission: sampleSubmission(p.Steps[0])}
	if err := m.Check(sub, t0); err != nil {
		t.Fatal(err)
	}
	bad := sub
	bad.LeaseID = "l2"
	refused(t, m, bad, t0, CodeStale)
	if e := m.TakeEffects(); len(e) != 0 {
		t.Fatalf("a check and a refusal asked for %+v", e)
	}
}

// An escalation opens a work item for the operators; returning it is a
// decision.
func TestNoticesOfAnEscalation(t *testing.T) {
	p := loadSource(t, noticeSrc)
	m := start(t, p, map[string]any{"invoiceId": "INV-7", "manager": "rita@example.com"}, starter, ModeLive)
	claim(t, m, "validate", agentA, "l1", t0)
	must(t, m, Escalate{StepID: "validate", LeaseID: "l1", Actor: agentA, Note: "The totals differ."}, t0)
	w := openItemFor(t, m, t0, "validate")
	must(t, m, Decide{WorkItemID: w.ID, Snapshot: m.Snapshot(), Decision: DecisionReturned, Note: ptr("Use the second page."), Actor: operator}, t0)
	ns := notices(m.TakeEffects())
	if got := noticeLines(ns); got != "work.opened w_1 validate\nwork.decided w_1 validate" {
		t.Fatalf("notices:\n%s", got)
	}
	if it := ns[0].WorkItem; it.Kind != ItemEscalation || it.AssignedTo.Group != DefaultOperators || it.Title != "Escalated: Match the invoice in ERP." {
		t.Fatalf("escalation item %+v", it)
	}
	if d := ns[1].WorkItem; d.Decision != DecisionReturned || d.DecidedBy != operator.ID {
		t.Fatalf("decided %+v", d)
	}
}

// A call that needs approval tells of the item and of the call, and so
// does its decision; its SLA passing is work.overdue; a cancelled run
// ends cancelled.
func TestNoticesOfACallApproval(t *testing.T) {
	r := startTools(t, ModeLive)
	r.m.TakeEffects()
	r.claim("l1")
	r.send(r.call("l1", "crm/refund", `{"amount":89}`), "", false)
	w := openItemFor(t, r.m, t0, "resolve")
	r.m.Tick(t0.Add(4 * time.Hour))
	must(t, r.m, Decide{WorkItemID: w.ID, Snapshot: w.Snapshot, Decision: DecisionApproved, Actor: financeLead}, t0.Add(5*time.Hour))
	must(t, r.m, Cancel{Actor: operator, Reason: "Customer withdrew."}, t0.Add(6*time.Hour))
	ns := notices(r.m.TakeEffects())
	want := strings.Join([]string{
		"work.opened w_1 resolve",
		"call.awaiting_approval w_1 resolve",
		"work.overdue w_1 resolve",
		"work.decided w_1 resolve",
		"call.decided w_1 resolve",
		"run.ended",
	}, "\n")
	if got := noticeLines(ns); got != want {
		t.Fatalf("notices:\n%s\nwant:\n%s", got, want)
	}
	it := ns[1].WorkItem
	if it.Kind != ItemCallApproval || it.Tool != "crm/refund" || it.AssignedTo.Group != "g_finance_leads" ||
		it.Title != "Approve a call of crm/refund (step resolve)" || it.Due == nil || !it.Due.Equal(t0.Add(4*time.Hour)) {
		t.Fatalf("call approval item %+v", it)
	}
	if ns[0].ID == ns[1].ID || ns[3].ID == ns[4].ID {
		t.Fatal("an item's work and call events share an id")
	}
	if d := ns[4].WorkItem; d.Decision != DecisionApproved || d.DecidedBy != financeLead.ID {
		t.Fatalf("call.decided %+v", d)
	}
	if end := ns[5]; end.Run.Outcome != "cancelled" {
		t.Fatalf("run.ended of a cancelled run: %+v", end.Run)
	}
}
