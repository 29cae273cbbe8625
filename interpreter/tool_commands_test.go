package interpreter

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/baton-run/baton/internal/testing/spectest"
)

const toolsSrc = `---
name: refund
description: Resolve a complaint with the crm's tools.
steps:
  - id: resolve
    agent: Resolve the complaint.
    tools:
      - crm/get_customer
      - crm/create_ticket
      - crm/send_sms
      - { ref: crm/refund, approvers: [finance-leads] }
    output: { ticket: string }
  - id: done
    finish: resolved
---
`

var toolCatalog = &ToolCatalog{Tools: []CatalogTool{
	{Server: "crm", Tool: "get_customer", Policy: PolicyRead, Idempotency: IdempotencyNone},
	{Server: "crm", Tool: "create_ticket", Policy: PolicyWrite, Idempotency: IdempotencyByKey},
	{Server: "crm", Tool: "send_sms", Policy: PolicyWrite, Idempotency: IdempotencyNone},
	{Server: "crm", Tool: "refund", Policy: PolicyApprovalRequired, Idempotency: IdempotencyByKey, Approvers: []string{"finance"}, ApprovalSLA: 4 * time.Hour},
}}

var (
	financeLead = Actor{ID: "lea@example.com", Kind: ActorPerson, Groups: []string{"finance", "g_finance_leads"}}
	financeOnly = Actor{ID: "fin@example.com", Kind: ActorPerson, Groups: []string{"finance"}}
)

type toolRun struct {
	t    *testing.T
	p    *Process
	m    *Machine
	sent []*CallNeeded
	// roles bind the process's roles as the gateway would; nil for
	// finance-leads alone.
	roles map[string]string
}

func startTools(t *testing.T, mode string) *toolRun {
	t.Helper()
	o := offerAll()
	o.Profiles = append(o.Profiles, ProfileTools)
	o.ToolCatalog = toolCatalog
	p, err := Parse([]byte(toolsSrc), &ParseOptions{Offer: o})
	if err != nil {
		t.Fatal(err)
	}
	m, err := StartRun(Start{RunID: "r_1", Process: p, Version: 1, Starter: starter, Mode: mode, Roles: map[string]string{"finance-leads": "g_finance_leads"}}, t0)
	if err != nil {
		t.Fatal(err)
	}
	return &toolRun{t: t, p: p, m: m}
}

// call builds a CallTool of the step's tool as the host would.
func (r *toolRun) call(lease, tool, args string) CallTool {
	r.t.Helper()
	raw, e := CheckCallArguments([]byte(args))
	if e != nil {
		r.t.Fatal(e)
	}
	digest, err := CallDigest(tool, raw)
	if err != nil {
		r.t.Fatal(err)
	}
	reg, _ := toolCatalog.Lookup(tool)
	roles := r.roles
	if roles == nil {
		roles = map[string]string{"finance-leads": "g_finance_leads"}
	}
	resolved, err := ResolveTool(*r.p.Steps[0].ToolUse(tool), reg, roles)
	if err != nil {
		r.t.Fatal(err)
	}
	return CallTool{StepID: "resolve", LeaseID: lease, Actor: agentA, Tool: tool, Arguments: raw, CallDigest: digest,
		Key: IdempotencyKey("o_test", "r_1", "resolve", digest), Resolved: resolved, Timeout: 30 * time.Second}
}

// send applies a call; a call that must be sent gets answer (the tool's
// result), or no answer when answer is "".
func (r *toolRun) send(c CallTool, answer string, notSent bool) (*CallResult, *Error) {
	r.t.Helper()
	res, err := r.m.Apply(c, t0)
	if err != nil {
		e, ok := err.(*Error)
		if !ok {
			r.t.Fatal(err)
		}
		return nil, e
	}
	need, ok := res.(*CallNeeded)
	if !ok {
		return res.(*CallResult), nil
	}
	if need.Key != c.Key || need.Digest != c.CallDigest {
		r.t.Fatalf("the call to send is %+v", need)
	}
	r.sent = append(r.sent, need)
	reply := CallReply{NotSent: notSent, Why: "no answer within 30s"}
	if answer != "" {
		reply.Result = json.RawMessage(answer)
		reply.IsError = strings.Contains(answer, `"isError":true`)
	}
	out, err := r.m.Answer(need, reply, t0)
	if err != nil {
		e, ok := err.(*Error)
		if !ok {
			r.t.Fatal(err)
		}
		return nil, e
	}
	return out.(*CallResult), nil
}

const okAnswer = `{"content":[{"type":"text","text":"done"}],"isError":false}`

func (r *toolRun) claim(lease string) *ClaimResult {
	r.t.Helper()
	return claim(r.t, r.m, "resolve", agentA, lease, t0)
}

func TestToolCallReadAndWrite(t *testing.T) {
	r := startTools(t, ModeLive)
	r.claim("l1")
	res, e := r.send(r.call("l1", "crm/get_customer", `{"email":"alice@example.com"}`), okAnswer, false)
	if e != nil || res.Status != StatusCompleted || res.Reused {
		t.Fatalf("read: %+v %v", res, e)
	}
	// A read runs every time it is called.
	if _, ok := must(t, r.m, r.call("l1", "crm/get_customer", `{"email":"alice@example.com"}`), t0).(*CallNeeded); !ok {
		t.Fatal("a repeated read was not sent again")
	}
	r2 := startTools(t, ModeLive)
	r2.claim("l1")
	res, e = r2.send(r2.call("l1", "crm/create_ticket", `{"subject":"broken"}`), okAnswer, false)
	if e != nil || res.Status != StatusCompleted {
		t.Fatalf("write: %+v %v", res, e)
	}
	// The same write again, even in a later attempt, is answered from the
	// journal: never sent twice.
	res = must(t, r2.m, r2.call("l1", "crm/create_ticket", `{"subject": "broken"}`), t0).(*CallResult)
	if !res.Reused || res.Status != StatusCompleted || string(res.Result) != okAnswer {
		t.Fatalf("repeated write: %+v", res)
	}
	// Arguments outside the schema are not_accepted, nothing journaled.
	bad := r2.call("l1", "crm/create_ticket", `{"subject":7}`)
	bad.ArgumentIssues = []string{"arguments: subject: expected string"}
	refused(t, r2.m, bad, t0, CodeNotAccepted, "arguments: subject: expected string")
	// A tool the step does not list is forbidden.
	other := r2.call("l1", "crm/create_ticket", `{}`)
	other.Tool = "crm/delete_customer"
	refused(t, r2.m, other, t0, CodeForbidden)
	if n := len(r2.m.Journal("resolve")); n != 1 {
		t.Fatalf("journal holds %d entries, want 1", n)
	}
}

func TestToolCallApprovalStory(t *testing.T) {
	r := startTools(t, ModeLive)
	r.claim("l1")
	refund := r.call("l1", "crm/refund", `{"customer":"alice@example.com","amount":89,"currency":"EUR"}`)
	before := viewJSON(t, r.m, t0)
	res, e := r.send(refund, "", false)
	if e != nil || res.Status != StatusAwaitingApproval || res.WorkItemID == nil {
		t.Fatalf("proposal: %+v %v", res, e)
	}
	if string(viewJSON(t, r.m, t0)) == string(before) || stepState(r.m, "resolve") != StepWaiting {
		t.Fatalf("the proposal did not take the lease back: %s", stepState(r.m, "resolve"))
	}
	w := openItemFor(t, r.m, t0, "resolve")
	spectest.Validate(t, "work-item.json", w)
	if w.Kind != "approve" || strings.Join(w.Decide.Decisions, ",") != "approved,rejected" || w.AssignedTo.Group != "g_finance_leads" ||
		!strings.Contains(w.Text, `"amount": 89`) || !strings.Contains(w.Text, refund.CallDigest) || w.Due == nil {
		t.Fatalf("approval item %+v", w)
	}
	// The token is stale now: no second proposal.
	refused(t, r.m, refund, t0, CodeStale)
	// Agents never decide; a person in finance but not a finance lead may
	// not either (the step narrows the registration's approvers).
	refused(t, r.m, Decide{WorkItemID: w.ID, Snapshot: w.Snapshot, Decision: DecisionApproved, Actor: agentA}, t0, CodeForbidden)
	refused(t, r.m, Decide{WorkItemID: w.ID, Snapshot: w.Snapshot, Decision: DecisionApproved, Actor: financeOnly}, t0, CodeForbidden)
	refused(t, r.m, Decide{WorkItemID: w.ID, Snapshot: w.Snapshot, Decision: DecisionFailed, Note: ptr("no"), Actor: financeLead}, t0, CodeInvalid)
	must(t, r.m, Decide{WorkItemID: w.ID, Snapshot: w.Snapshot, Decision: DecisionApproved, Actor: financeLead}, t0)
	if stepState(r.m, "resolve") != StepReady {
		t.Fatalf("after the approval the step is %s", stepState(r.m, "resolve"))
	}
	c := claim(t, r.m, "resolve", agentB, "l2", t0)
	if len(c.Journal) != 1 || c.Journal[0].State != CallApproved || c.Journal[0].Decision.By != financeLead.ID || c.Journal[0].Attempt != 1 {
		t.Fatalf("the next claim's journal %+v", c.Journal)
	}
	// Another refund while the approved one has not run is divergent.
	divergent := r.call("l2", "crm/refund", `{"customer":"alice@example.com","amount":890,"currency":"EUR"}`)
	divergent.Actor = agentB
	e2 := refused(t, r.m, divergent, t0, CodeConflict, IssueDivergentCall)
	if !strings.Contains(e2.Message, refund.CallDigest) {
		t.Fatalf("the divergent call's message names no approved digest: %s", e2.Message)
	}
	approved := r.call("l2", "crm/refund", `{"amount":89.0,"customer":"alice@example.com","currency":"EUR"}`)
	approved.Actor = agentB
	res, e = r.send(approved, okAnswer, false)
	if e != nil || res.Status != StatusCompleted {
		t.Fatalf("the approved call: %+v %v", res, e)
	}
	// What runs is exactly what was approved, as first sent.
	if got := string(r.sent[len(r.sent)-1].Arguments); got != string(refund.Arguments) {
		t.Fatalf("sent %s, approved %s", got, refund.Arguments)
	}
	// Once run it is never run again.
	res = must(t, r.m, approved, t0).(*CallResult)
	if !res.Reused || res.Status != StatusCompleted {
		t.Fatalf("repeat after it ran: %+v", res)
	}
}

func TestToolCallRejected(t *testing.T) {
	r := startTools(t, ModeLive)
	r.claim("l1")
	refund := r.call("l1", "crm/refund", `{"amount":89}`)
	r.send(refund, "", false)
	w := openItemFor(t, r.m, t0, "resolve")
	refused(t, r.m, Decide{WorkItemID: w.ID, Snapshot: w.Snapshot, Decision: DecisionRejected, Actor: financeLead}, t0, CodeInvalid, "note: required")
	must(t, r.m, Decide{WorkItemID: w.ID, Snapshot: w.Snapshot, Decision: DecisionRejected, Note: ptr("Over the policy limit."), Actor: financeLead}, t0)
	r.claim("l2")
	again := r.call("l2", "crm/refund", `{"amount":89}`)
	res := must(t, r.m, again, t0).(*CallResult)
	if res.Status != StatusRejected || !strings.Contains(string(res.Result), "Rejected: a person did not approve this call. Reason: Over the policy limit.") {
		t.Fatalf("repeat of a rejected call: %+v %s", res, res.Result)
	}
}

func TestToolCallOutcomeUnknown(t *testing.T) {
	r := startTools(t, ModeLive)
	r.claim("l1")
	sms := r.call("l1", "crm/send_sms", `{"to":"+100"}`)
	// Not sent: safe to send again; nothing journaled.
	if _, e := r.send(sms, "", true); e == nil || e.Code != CodeRetry {
		t.Fatalf("not sent: %v", e)
	}
	if n := len(r.m.Journal("resolve")); n != 0 {
		t.Fatalf("a call that was not sent left %d journal entries", n)
	}
	// Sent with no answer: never sent again; the operators are asked.
	res, e := r.send(sms, "", false)
	if e != nil || res.Status != StatusOutcomeUnknown || stepState(r.m, "resolve") != StepWaiting {
		t.Fatalf("no answer: %+v %v", res, e)
	}
	w := openItemFor(t, r.m, t0, "resolve")
	spectest.Validate(t, "work-item.json", w)
	if w.Kind != "task" || w.AssignedTo.Group != "operators" || w.Output.Lookup("result") == nil {
		t.Fatalf("unknown-outcome item %+v", w)
	}
	refused(t, r.m, Decide{WorkItemID: w.ID, Snapshot: w.Snapshot, Decision: DecisionCompleted, Actor: operator, Submission: Submission{Output: map[string]any{}}}, t0, CodeNotAccepted, "output.result: missing")
	must(t, r.m, Decide{WorkItemID: w.ID, Snapshot: w.Snapshot, Decision: DecisionFailed, Note: ptr("The SMS gateway shows nothing."), Actor: operator}, t0)
	if r.m.Run().State.Over() || stepState(r.m, "resolve") != StepReady {
		t.Fatalf("failed on an unknown outcome ended the run or left the step %s", stepState(r.m, "resolve"))
	}
	r.claim("l2")
	res = must(t, r.m, r.call("l2", "crm/send_sms", `{"to":"+100"}`), t0).(*CallResult)
	if res.Status != StatusFailed || !res.Reused {
		t.Fatalf("after a person said it failed: %+v", res)
	}
}

func TestToolCallKeyedRetries(t *testing.T) {
	r := startTools(t, ModeLive)
	r.claim("l1")
	ticket := r.call("l1", "crm/create_ticket", `{"subject":"x"}`)
	if _, e := r.send(ticket, "", false); e == nil || e.Code != CodeRetry {
		t.Fatalf("keyed call with no answer: %v", e)
	}
	j := r.m.Journal("resolve")
	if len(j) != 1 || j[0].State != CallStarted {
		t.Fatalf("journal after no answer %+v", j)
	}
	res, e := r.send(ticket, okAnswer, false)
	if e != nil || res.Status != StatusCompleted {
		t.Fatalf("sent again with the same key: %+v %v", res, e)
	}
}

func TestToolCallTestRunSendsNothing(t *testing.T) {
	r := startTools(t, ModeTest)
	r.claim("l1")
	res := must(t, r.m, r.call("l1", "crm/create_ticket", `{"subject":"x"}`), t0).(*CallResult)
	if res.Status != StatusCompleted || !strings.Contains(string(res.Result), "Test run") || !r.m.Journal("resolve")[0].Test {
		t.Fatalf("test run write: %+v", res)
	}
	// A read is sent even in a test run.
	if _, ok := must(t, r.m, r.call("l1", "crm/get_customer", `{}`), t0).(*CallNeeded); !ok {
		t.Fatal("a test run's read was not sent")
	}
}

func TestToolCallApprovalSLAAndCancel(t *testing.T) {
	r := startTools(t, ModeLive)
	r.claim("l1")
	r.send(r.call("l1", "crm/refund", `{"amount":89}`), "", false)
	late := t0.Add(4*time.Hour + time.Minute)
	if d, ok := r.m.NextDeadline(); !ok || !d.Equal(t0.Add(4*time.Hour)) {
		t.Fatalf("next deadline %v, want the approval SLA", d)
	}
	r.m.Tick(late)
	w := openItemFor(t, r.m, late, "resolve")
	if !w.Overdue || len(r.m.TakeEffects()) == 0 || w.AssignedTo.Group != "g_finance_leads" {
		t.Fatalf("after the SLA: overdue %v, assigned %+v", w.Overdue, w.AssignedTo)
	}
	must(t, r.m, Cancel{Actor: operator, Reason: "Customer withdrew."}, late)
	refused(t, r.m, Decide{WorkItemID: w.ID, Snapshot: w.Snapshot, Decision: DecisionApproved, Actor: financeLead}, late, CodeConflict, IssueRunEnded)
}

func TestToolCallJournalIsBounded(t *testing.T) {
	r := startTools(t, ModeLive)
	r.claim("l1")
	for i := range MaxToolCallsPerStep {
		if _, e := r.send(r.call("l1", "crm/create_ticket", fmt.Sprintf(`{"n":%d}`, i)), okAnswer, false); e != nil {
			t.Fatal(e)
		}
	}
	refused(t, r.m, r.call("l1", "crm/create_ticket", `{"n":-1}`), t0, CodeNotAccepted, "journal: at most 100 calls in one step")
	big := `{"content":[{"type":"text","text":"` + strings.Repeat("x", 2*JournalResultBytes) + `"}],"isError":false}`
	r2 := startTools(t, ModeLive)
	r2.claim("l1")
	res, _ := r2.send(r2.call("l1", "crm/create_ticket", `{}`), big, false)
	if string(res.Result) != big || len(r2.m.Journal("resolve")[0].Result) > JournalResultBytes {
		t.Fatal("a long answer is not whole for the caller and short in the journal")
	}
}

// TestToolCallJournalsAreBoundedInARun fills a run's journals: a new call
// past JournalRunBytes is not_accepted, a journaled call can still be
// repeated, and a result with no room left is kept as a note while its
// caller gets it whole.
func TestToolCallJournalsAreBoundedInARun(t *testing.T) {
	r := startTools(t, ModeLive)
	r.claim("l1")
	bigArgs := func(i int) string { return fmt.Sprintf(`{"n":%d,"text":"%s"}`, i, strings.Repeat("a", 60000)) }
	for i := range 4 {
		if _, e := r.send(r.call("l1", "crm/create_ticket", bigArgs(i)), okAnswer, false); e != nil {
			t.Fatalf("call %d: %v", i, e)
		}
	}
	refused(t, r.m, r.call("l1", "crm/create_ticket", bigArgs(4)), t0, CodeNotAccepted, "journal: over 262144 bytes in this run")
	if res, e := r.send(r.call("l1", "crm/create_ticket", bigArgs(0)), "", false); e != nil || !res.Reused {
		t.Fatalf("repeat of a journaled call: %+v %v", res, e)
	}
	answer := `{"content":[{"type":"text","text":"` + strings.Repeat("y", JournalResultBytes-100) + `"}],"isError":false}`
	noted := false
	for i := 0; ; i++ {
		res, e := r.send(r.call("l1", "crm/create_ticket", fmt.Sprintf(`{"small":%d}`, i)), answer, false)
		if e != nil {
			if e.Code != CodeNotAccepted || len(e.Issues) != 1 || e.Issues[0] != "journal: over 262144 bytes in this run" {
				t.Fatalf("small call %d: %v", i, e)
			}
			break
		}
		if string(res.Result) != answer {
			t.Fatalf("small call %d: the caller did not get the whole answer", i)
		}
		if n := r.m.journalBytes(); n > JournalRunBytes {
			t.Fatalf("after small call %d the journals take %d bytes", i, n)
		}
		j := r.m.Journal("resolve")
		if kept := string(j[len(j)-1].Result); kept != answer {
			if !strings.Contains(kept, "more than this run's journal has room for") {
				t.Fatalf("small call %d kept %s", i, kept)
			}
			noted = true
		}
	}
	if !noted {
		t.Fatal("no result was kept as a note")
	}
}

// An approval that several groups may give is listed to each of them: its
// assignedTo shows the first group, the listing names the others too, and
// a person of any of them decides it.
func TestToolCallApprovalListedToEveryApproverGroup(t *testing.T) {
	o := offerAll()
	o.Profiles = append(o.Profiles, ProfileTools)
	o.ToolCatalog = toolCatalog
	src := strings.Replace(toolsSrc, "approvers: [finance-leads]", "approvers: [finance-leads, cfo]", 1)
	p, err := Parse([]byte(src), &ParseOptions{Offer: o})
	if err != nil {
		t.Fatal(err)
	}
	roles := map[string]string{"finance-leads": "g_finance_leads", "cfo": "g_cfo"}
	m, err := StartRun(Start{RunID: "r_1", Process: p, Version: 1, Starter: starter, Mode: ModeLive, Roles: roles}, t0)
	if err != nil {
		t.Fatal(err)
	}
	r := &toolRun{t: t, p: p, m: m, roles: roles}
	r.claim("l1")
	if res, e := r.send(r.call("l1", "crm/refund", `{"customer":"alice@example.com","amount":89,"currency":"EUR"}`), "", false); e != nil || res.WorkItemID == nil {
		t.Fatalf("proposal: %+v %v", res, e)
	}
	l, err := m.Listing(t0)
	if err != nil {
		t.Fatal(err)
	}
	var approval *ListingWork
	for i := range l.Work {
		if l.Work[i].WorkItemID != "" {
			approval = &l.Work[i]
		}
	}
	if approval == nil || approval.Group != "g_finance_leads" || strings.Join(approval.AlsoGroups, ",") != "g_cfo" {
		t.Fatalf("the approval's listing: %+v, want group g_finance_leads and also g_cfo", approval)
	}
	w := openItemFor(t, m, t0, "resolve")
	cfo := Actor{ID: "cleo@example.com", Kind: ActorPerson, Groups: []string{"finance", "g_cfo"}}
	must(t, m, Decide{WorkItemID: w.ID, Snapshot: w.Snapshot, Decision: DecisionApproved, Actor: cfo}, t0)
	if l, _ := m.Listing(t0); len(l.Work) != 1 || l.Work[0].WorkItemID != "" {
		t.Fatalf("after the decision the run lists %+v, want only the ready agent step", l.Work)
	}
}

// tightened returns a call resolved under a registration that made its
// tool approval_required (approvers finance), or write.
func tightened(c CallTool, p Policy) CallTool {
	c.Resolved.Policy = p
	if p == PolicyApprovalRequired {
		c.Resolved.Approvers = []string{"finance"}
	}
	return c
}

// A journal entry keeps the policy it was made under, but an operator who
// tightens the tool afterwards is obeyed: the tighter policy applies
// before the call is sent again.
func TestToolCallEntryTakesATightenedPolicy(t *testing.T) {
	// A write that got no answer, then the tool needs approval: the
	// repeat is a proposal, not a send.
	r := startTools(t, ModeLive)
	r.claim("l1")
	ticket := r.call("l1", "crm/create_ticket", `{"subject":"x"}`)
	if _, e := r.send(ticket, "", false); e == nil || e.Code != CodeRetry {
		t.Fatalf("keyed call with no answer: %v", e)
	}
	res, e := r.send(tightened(ticket, PolicyApprovalRequired), okAnswer, false)
	if e != nil || res.Status != StatusAwaitingApproval || res.WorkItemID == nil || len(r.sent) != 1 {
		t.Fatalf("repeat after the tool needs approval: %+v %v, sent %d", res, e, len(r.sent))
	}
	if j := r.m.Journal("resolve"); len(j) != 1 || j[0].Policy != PolicyApprovalRequired || j[0].State != CallProposed {
		t.Fatalf("journal %+v", j)
	}
	w := openItemFor(t, r.m, t0, "resolve")
	if w.Kind != "approve" || w.AssignedTo.Group != "finance" || stepState(r.m, "resolve") != StepWaiting {
		t.Fatalf("approval item %+v, step %s", w, stepState(r.m, "resolve"))
	}
	must(t, r.m, Decide{WorkItemID: w.ID, Snapshot: w.Snapshot, Decision: DecisionApproved, Actor: financeOnly}, t0)
	r.claim("l2")
	// Approved, sent and no answer: sent again, not proposed again.
	if _, e := r.send(tightened(r.call("l2", "crm/create_ticket", `{"subject":"x"}`), PolicyApprovalRequired), "", false); e == nil || e.Code != CodeRetry {
		t.Fatalf("the approved call with no answer: %v", e)
	}
	res, e = r.send(tightened(r.call("l2", "crm/create_ticket", `{"subject":"x"}`), PolicyApprovalRequired), okAnswer, false)
	if e != nil || res.Status != StatusCompleted || len(r.sent) != 3 {
		t.Fatalf("the approved call sent again: %+v %v, sent %d", res, e, len(r.sent))
	}

	// A read that ran, then the tool writes: answered from the journal.
	r2 := startTools(t, ModeLive)
	r2.claim("l1")
	read := r2.call("l1", "crm/get_customer", `{"email":"alice@example.com"}`)
	if _, e := r2.send(read, okAnswer, false); e != nil {
		t.Fatal(e)
	}
	res = must(t, r2.m, tightened(read, PolicyWrite), t0).(*CallResult)
	if !res.Reused || res.Status != StatusCompleted {
		t.Fatalf("a read repeated after the tool writes: %+v", res)
	}
	// A read with no answer, then the tool needs approval: proposed.
	r3 := startTools(t, ModeLive)
	r3.claim("l1")
	read = r3.call("l1", "crm/get_customer", `{"email":"bob@example.com"}`)
	if _, e := r3.send(read, "", false); e == nil || e.Code != CodeRetry {
		t.Fatalf("a read with no answer: %v", e)
	}
	res, e = r3.send(tightened(read, PolicyApprovalRequired), okAnswer, false)
	if e != nil || res.Status != StatusAwaitingApproval || len(r3.sent) != 1 {
		t.Fatalf("a read repeated after the tool needs approval: %+v %v, sent %d", res, e, len(r3.sent))
	}
	// Loosening changes nothing: the entry's policy stays.
	r4 := startTools(t, ModeLive)
	r4.claim("l1")
	ticket = r4.call("l1", "crm/create_ticket", `{"subject":"y"}`)
	if _, e := r4.send(ticket, okAnswer, false); e != nil {
		t.Fatal(e)
	}
	if res := must(t, r4.m, tightened(ticket, PolicyRead), t0).(*CallResult); !res.Reused {
		t.Fatalf("a write repeated after the tool became a read: %+v", res)
	}
}
