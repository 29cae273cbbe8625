package tests

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/baton-run/baton/activities/downstream"
	"github.com/baton-run/baton/internal/testing/crmtest"
	"github.com/baton-run/baton/internal/testing/spectest"
	"github.com/baton-run/baton/interpreter"
)

// The baton-tools-1 profile end to end (docs/profile-tools.md): a real
// downstream MCP server (internal/testing/crmtest) registered with policies, the
// refund example process, agents calling tools through call_tool and
// people approving over MCP.

const toolsRegistration = `servers:
  - name: crm
    url: %s
    timeout: 2s
    tools:
      get_customer: read
      create_ticket: { policy: write, idempotency: key }
      refund: { policy: approval_required, idempotency: key, approvers: [finance], approval_sla: 4h }
  - name: forgetful
    url: %s
    timeout: 1s
    tools:
      create_ticket: { policy: write, idempotency: none }
`

type toolsBench struct {
	b            *baton
	crm          *crmtest.Server
	forgetful    *crmtest.Server
	agent, a2    *user
	lea, finOnly *user
	ops          *user
	mira         *user
}

func startTools(t *testing.T) *toolsBench {
	crm, err := crmtest.Start(nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = crm.Close() })
	forgetful, err := crmtest.Start(&crmtest.Options{IgnoreKeys: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = forgetful.Close() })
	b := start(t, options{tools: fmt.Sprintf(toolsRegistration, crm.URL(), forgetful.URL())})
	src, err := os.ReadFile("../examples/refund/PROCESS.md")
	if err != nil {
		t.Fatal(err)
	}
	b.publish(string(src) + "\n")
	b.publish(forgetfulSrc)
	return &toolsBench{
		b: b, crm: crm, forgetful: forgetful,
		agent: b.connect(agentID), a2: b.connect(agent2ID),
		lea:     b.connect(personID("lea@example.com", "finance", "finance-leads")),
		finOnly: b.connect(personID("fin@example.com", "finance")),
		ops:     b.connect(operatorID),
		mira:    b.connect(personID("mira@example.com")),
	}
}

const forgetfulSrc = `---
name: forgetful
description: Open a ticket on a server that does not deduplicate.
steps:
  - id: open
    agent: Open the ticket.
    tools: [forgetful/create_ticket]
    output: { ticket: string }
  - id: done
    finish: opened
---
`

func (tb *toolsBench) startRefund(t *testing.T) view {
	var v view
	tb.mira.ok("start_run", map[string]any{"process": "refund", "requestId": rid(), "inputs": map[string]any{
		"customer": "alice@example.com", "order": "1042", "complaint": "It arrived broken."}}, &v)
	return v
}

type callResult struct {
	Status     string          `json:"status"`
	Tool       string          `json:"tool"`
	Digest     string          `json:"digest"`
	Reused     bool            `json:"reused"`
	Result     json.RawMessage `json:"result"`
	WorkItemID *string         `json:"workItemId"`
	Message    string          `json:"message"`
}

func callArgs(token, tool string, args map[string]any) map[string]any {
	return map[string]any{"token": token, "tool": tool, "arguments": args, "requestId": rid()}
}

func (u *user) callTool(token, tool string, args map[string]any) callResult {
	u.t.Helper()
	var r callResult
	u.ok("call_tool", callArgs(token, tool, args), &r)
	return r
}

func extension(t *testing.T, c interpreter.ClaimWire) interpreter.ToolsExtension {
	t.Helper()
	raw, err := json.Marshal(c.Extensions[interpreter.ProfileTools])
	if err != nil || c.Extensions == nil {
		t.Fatalf("claim has no baton-tools-1 extension: %+v", c.Extensions)
	}
	spectest.Validate(t, spectest.ProfileToolsDir+"/claim-extension.json", json.RawMessage(raw))
	var ext interpreter.ToolsExtension
	if err := json.Unmarshal(raw, &ext); err != nil {
		t.Fatal(err)
	}
	return ext
}

var refundArgs = map[string]any{"customer": "alice@example.com", "amount": json.Number("89"), "currency": "EUR", "reason": "Order 1042 arrived broken"}

// The refund story (profile-tools, issue's steps 1–7): read and write
// run at once and once; a refund waits for the exact call's approval by a
// person in both finance and finance-leads; the approved call runs once,
// with its key, and other arguments are divergent.
func TestTools_RefundStory(t *testing.T) {
	t.Parallel()
	tb := startTools(t)
	var d struct {
		Profiles []string `json:"profiles"`
		Tools    []string `json:"tools"`
	}
	tb.agent.ok("describe", nil, &d)
	if !strings.Contains(strings.Join(d.Profiles, ","), interpreter.ProfileTools) || !strings.Contains(strings.Join(d.Tools, ","), "call_tool") {
		t.Fatalf("describe: %+v", d)
	}
	v := tb.startRefund(t)
	c := claimStep(tb.agent, v.Run.ID, "resolve")
	ext := extension(t, c)
	if len(ext.Tools) != 3 || ext.Tools[2].Policy != interpreter.PolicyApprovalRequired || ext.Tools[0].Description == nil || len(ext.Tools[0].InputSchema) < 10 || len(ext.Journal) != 0 {
		t.Fatalf("claim extension %+v", ext)
	}

	if r := tb.agent.callTool(c.Token, "crm/get_customer", map[string]any{"email": "alice@example.com"}); r.Status != "completed" || !strings.Contains(string(r.Result), "Alice") {
		t.Fatalf("read: %+v", r)
	}
	ticket := map[string]any{"customer": "alice@example.com", "subject": "Order 1042 arrived broken"}
	if r := tb.agent.callTool(c.Token, "crm/create_ticket", ticket); r.Status != "completed" || r.Reused {
		t.Fatalf("write: %+v", r)
	}
	if r := tb.agent.callTool(c.Token, "crm/create_ticket", ticket); !r.Reused || tb.crm.Effects("create_ticket") != 1 {
		t.Fatalf("a repeated write: %+v, %d tickets", r, tb.crm.Effects("create_ticket"))
	}
	// Arguments outside the tool's schema are not accepted.
	tb.agent.refused("call_tool", callArgs(c.Token, "crm/create_ticket", map[string]any{"customer": 7}), interpreter.CodeNotAccepted)
	tb.agent.refused("call_tool", callArgs(c.Token, "crm/delete_everything", map[string]any{}), interpreter.CodeForbidden)

	proposal := callArgs(c.Token, "crm/refund", refundArgs)
	var r callResult
	tb.agent.ok("call_tool", proposal, &r)
	if r.Status != "awaiting_approval" || r.WorkItemID == nil || tb.crm.Effects("refund") != 0 {
		t.Fatalf("proposal: %+v", r)
	}
	var again callResult
	tb.agent.ok("call_tool", proposal, &again)
	if again.Status != r.Status || *again.WorkItemID != *r.WorkItemID {
		t.Fatalf("the re-sent proposal: %+v", again)
	}
	tb.agent.refused("submit", map[string]any{"token": c.Token, "requestId": rid(), "summary": "s", "output": map[string]any{"ticket": "T", "decision": "refunded"}}, interpreter.CodeStale)

	v = getRun(tb.agent, v.Run.ID)
	w := itemFor(v, "resolve")
	if w == nil || w.Kind != "approve" || !strings.Contains(w.Text, r.Digest) || !strings.Contains(w.Text, `"amount": 89`) {
		t.Fatalf("approval item %+v", w)
	}
	found := false
	for _, pi := range personWork(tb.lea, v.Run.ID) {
		found = found || pi.WorkItem.ID == w.ID
	}
	if !found {
		t.Fatal("the finance lead does not see the approval in get_work")
	}
	tb.agent.refused("decide", decideArgs(v, w, "approved", nil), interpreter.CodeForbidden)
	tb.finOnly.refused("decide", decideArgs(v, w, "approved", nil), interpreter.CodeForbidden)
	tb.lea.ok("decide", decideArgs(v, w, "approved", nil), &v)
	if v.StepState("resolve") != "ready" {
		t.Fatalf("after the approval: %s", v.StepStates())
	}

	c2 := claimStep(tb.a2, v.Run.ID, "resolve")
	j := extension(t, c2).Journal
	if len(j) != 3 || j[2].State != interpreter.CallApproved || j[2].Decision == nil || j[2].Decision.By != "lea@example.com" {
		t.Fatalf("the next claim's journal: %+v", j)
	}
	more := map[string]any{"customer": "alice@example.com", "amount": json.Number("890"), "currency": "EUR", "reason": "Order 1042 arrived broken"}
	e := tb.a2.refused("call_tool", callArgs(c2.Token, "crm/refund", more), interpreter.CodeConflict, interpreter.IssueDivergentCall)
	if !strings.Contains(e.Message, r.Digest) {
		t.Fatalf("divergent call message: %s", e.Message)
	}
	if r := tb.a2.callTool(c2.Token, "crm/refund", refundArgs); r.Status != "completed" || r.Reused {
		t.Fatalf("the approved call: %+v", r)
	}
	if r := tb.a2.callTool(c2.Token, "crm/refund", refundArgs); !r.Reused || r.Status != "completed" {
		t.Fatalf("repeat of the approved call: %+v", r)
	}
	refunds := tb.crm.Calls("refund")
	if tb.crm.Effects("refund") != 1 || len(refunds) != 1 || refunds[0].MetaKey == "" || refunds[0].MetaKey != refunds[0].HeaderKey || refunds[0].MetaKey != j[2].IdempotencyKey {
		t.Fatalf("refunds at the crm: %d, calls %+v", tb.crm.Effects("refund"), refunds)
	}
	tb.a2.ok("submit", map[string]any{"token": c2.Token, "requestId": rid(), "summary": "Refunded 89 EUR after approval.",
		"output": map[string]any{"ticket": "T-1", "refund": "R-1", "decision": "refunded"}}, &v)
	if v.StepState("resolve") != "done" {
		t.Fatalf("after the submission: %s", v.StepStates())
	}
}

// A rejected call never runs; the agent's repeat reads the note. A run
// cancelled while an approval waits refuses a late decision.
func TestTools_RejectedAndCancelled(t *testing.T) {
	t.Parallel()
	tb := startTools(t)
	v := tb.startRefund(t)
	c := claimStep(tb.agent, v.Run.ID, "resolve")
	tb.agent.callTool(c.Token, "crm/refund", refundArgs)
	v = getRun(tb.agent, v.Run.ID)
	w := itemFor(v, "resolve")
	tb.lea.refused("decide", decideArgs(v, w, "rejected", nil), interpreter.CodeInvalid, "note: required")
	tb.lea.ok("decide", decideArgs(v, w, "rejected", map[string]any{"note": "Over the goodwill limit."}), &v)
	c = claimStep(tb.agent, v.Run.ID, "resolve")
	r := tb.agent.callTool(c.Token, "crm/refund", refundArgs)
	if r.Status != "rejected" || !strings.Contains(string(r.Result), "Rejected: a person did not approve this call. Reason: Over the goodwill limit.") {
		t.Fatalf("repeat of a rejected call: %+v", r)
	}

	v = tb.startRefund(t)
	c = claimStep(tb.agent, v.Run.ID, "resolve")
	tb.agent.callTool(c.Token, "crm/refund", refundArgs)
	v = getRun(tb.agent, v.Run.ID)
	w = itemFor(v, "resolve")
	tb.ops.ok("cancel", map[string]any{"runId": v.Run.ID, "reason": "The customer withdrew.", "requestId": rid()}, nil)
	tb.lea.refused("decide", decideArgs(v, w, "approved", nil), interpreter.CodeConflict, interpreter.IssueRunEnded)
	if tb.crm.Effects("refund") != 0 {
		t.Fatal("a refund ran without an approval")
	}
}

// The downstream server is down: retry, nothing journaled as done; the
// same requestId goes through once it is back.
func TestTools_DownstreamDown(t *testing.T) {
	t.Parallel()
	tb := startTools(t)
	v := tb.startRefund(t)
	c := claimStep(tb.agent, v.Run.ID, "resolve")
	if err := tb.crm.SetDown(true); err != nil {
		t.Fatal(err)
	}
	args := callArgs(c.Token, "crm/create_ticket", map[string]any{"customer": "alice@example.com", "subject": "x"})
	tb.agent.refused("call_tool", args, interpreter.CodeRetry)
	if err := tb.crm.SetDown(false); err != nil {
		t.Fatal(err)
	}
	var r callResult
	tb.agent.ok("call_tool", args, &r)
	if r.Status != "completed" || tb.crm.Effects("create_ticket") != 1 {
		t.Fatalf("after the server came back: %+v", r)
	}
}

// Baton's worker dies during the approved call: the activity is retried
// with the same key, and the crm refunds once.
func TestTools_WorkerDiesDuringTheCall(t *testing.T) {
	t.Parallel()
	tb := startTools(t)
	v := tb.startRefund(t)
	c := claimStep(tb.agent, v.Run.ID, "resolve")
	tb.agent.callTool(c.Token, "crm/refund", refundArgs)
	v = getRun(tb.agent, v.Run.ID)
	tb.lea.ok("decide", decideArgs(v, itemFor(v, "resolve"), "approved", nil), &v)
	c = claimStep(tb.agent, v.Run.ID, "resolve")

	tb.crm.SetDelay(1500 * time.Millisecond)
	var wg sync.WaitGroup
	var r callResult
	args := callArgs(c.Token, "crm/refund", refundArgs)
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			res := tb.agent.call("call_tool", args)
			if res.OK {
				_ = interpreter.DecodeExact(res.Data, &r)
				return
			}
			if res.Error.Code != interpreter.CodeRetry {
				t.Errorf("the approved call: %+v", res.Error)
				return
			}
		}
	}()
	// The worker dies while the crm holds the call.
	for deadline := time.Now().Add(time.Minute); len(tb.crm.Calls("refund")) == 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the approved refund never reached the crm")
		}
	}
	tb.b.worker.Stop()
	tb.crm.SetDelay(0)
	tb.b.worker.Start()
	wg.Wait()
	if r.Status != "completed" || tb.crm.Effects("refund") != 1 {
		t.Fatalf("after the worker died: %+v, %d refunds", r, tb.crm.Effects("refund"))
	}
	calls := tb.crm.Calls("refund")
	if len(calls) < 2 {
		t.Fatalf("the crm saw %d refund calls; the worker's death should have made the activity send it again", len(calls))
	}
	for _, cl := range calls {
		if cl.MetaKey != calls[0].MetaKey {
			t.Fatalf("the retried call changed its key: %+v", calls)
		}
	}
}

// idempotency: none with no answer: never sent again; the operators are
// asked, and their answer is journaled.
func TestTools_OutcomeUnknown(t *testing.T) {
	t.Parallel()
	tb := startTools(t)
	var v view
	tb.mira.ok("start_run", map[string]any{"process": "forgetful", "requestId": rid(), "inputs": map[string]any{}}, &v)
	c := claimStep(tb.agent, v.Run.ID, "open")
	tb.forgetful.SetDelay(3 * time.Second)
	r := tb.agent.callTool(c.Token, "forgetful/create_ticket", map[string]any{"customer": "bob@example.com", "subject": "y"})
	if r.Status != "outcome_unknown" || r.WorkItemID == nil {
		t.Fatalf("no answer: %+v", r)
	}
	// The call Baton stopped waiting for lands at the server meanwhile.
	for deadline := time.Now().Add(time.Minute); len(tb.forgetful.Calls("create_ticket")) == 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the call never reached the forgetful server")
		}
	}
	v = getRun(tb.agent, v.Run.ID)
	w := itemFor(v, "open")
	if w == nil || w.Kind != "task" || w.AssignedTo.Group != "operators" {
		t.Fatalf("the operators' item: %+v", w)
	}
	tb.ops.ok("decide", decideArgs(v, w, "completed", map[string]any{"output": map[string]any{"result": "Ticket T-7 exists."}}), &v)
	c = claimStep(tb.agent, v.Run.ID, "open")
	r = tb.agent.callTool(c.Token, "forgetful/create_ticket", map[string]any{"customer": "bob@example.com", "subject": "y"})
	if r.Status != "completed" || !r.Reused || !strings.Contains(string(r.Result), "Ticket T-7 exists.") || tb.forgetful.Effects("create_ticket") != 1 {
		t.Fatalf("after the operator's answer: %+v, %d tickets", r, tb.forgetful.Effects("create_ticket"))
	}
}

// An operator tightens a tool after a call of it was journaled: the
// repeat of that call waits for approval instead of being sent again
// (docs/profile-tools.md §6.1 step 2), and runs once approved.
func TestTools_TightenedPolicyAppliesToAJournaledCall(t *testing.T) {
	t.Parallel()
	tb := startTools(t)
	v := tb.startRefund(t)
	c := claimStep(tb.agent, v.Run.ID, "resolve")
	if err := tb.crm.SetDown(true); err != nil {
		t.Fatal(err)
	}
	ticket := map[string]any{"customer": "alice@example.com", "subject": "Order 1042 arrived broken"}
	tb.agent.refused("call_tool", callArgs(c.Token, "crm/create_ticket", ticket), interpreter.CodeRetry)
	if err := tb.crm.SetDown(false); err != nil {
		t.Fatal(err)
	}
	tightened := strings.Replace(fmt.Sprintf(toolsRegistration, tb.crm.URL(), tb.forgetful.URL()),
		"create_ticket: { policy: write, idempotency: key }", "create_ticket: { policy: approval_required, idempotency: key, approvers: [finance] }", 1)
	file := filepath.Join(t.TempDir(), "tools.yaml")
	if err := os.WriteFile(file, []byte(tightened), 0o600); err != nil {
		t.Fatal(err)
	}
	d, err := downstream.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := tb.b.store.RegisterTools(context.Background(), "o_test", file, d.Lister()); err != nil {
		t.Fatal(err)
	}
	r := tb.agent.callTool(c.Token, "crm/create_ticket", ticket)
	if r.Status != "awaiting_approval" || r.WorkItemID == nil || tb.crm.Effects("create_ticket") != 0 {
		t.Fatalf("the journaled call repeated after the tool needs approval: %+v, %d tickets", r, tb.crm.Effects("create_ticket"))
	}
	v = getRun(tb.agent, v.Run.ID)
	tb.finOnly.ok("decide", decideArgs(v, itemFor(v, "resolve"), "approved", nil), &v)
	c = claimStep(tb.agent, v.Run.ID, "resolve")
	if r := tb.agent.callTool(c.Token, "crm/create_ticket", ticket); r.Status != "completed" || tb.crm.Effects("create_ticket") != 1 {
		t.Fatalf("the approved call: %+v, %d tickets", r, tb.crm.Effects("create_ticket"))
	}
}
