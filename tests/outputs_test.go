package tests

import (
	"encoding/json"
	"testing"

	"github.com/baton-run/baton/interpreter"
)

// Every tool's structured content, accepted and refused, validates against
// the output schema it declares in tools/list (the harness checks each
// call): a client that checks it, as the TypeScript SDK's does even on
// refusals, never turns a Baton answer into a protocol error.
func TestOutputSchemas_EveryToolBothWays(t *testing.T) {
	t.Parallel()
	tb := startTools(t)
	b, agent, mira, ops := tb.b, tb.agent, tb.mira, tb.ops
	b.publish(supplierSrc)
	approver := b.connect(personID("fin@example.com", "finance-approver"))

	agent.ok("describe", nil, nil)
	agent.refused("describe", map[string]any{"x": 1}, interpreter.CodeInvalid)
	agent.ok("list_processes", map[string]any{}, nil)
	agent.refused("list_processes", map[string]any{"cursor": 5}, interpreter.CodeInvalid)
	mira.refused("start_run", map[string]any{"process": "nope", "inputs": map[string]any{}, "requestId": rid()}, interpreter.CodeNotFound)
	v := startSupplier(t, b, mira)
	getRun(agent, v.Run.ID)
	agent.refused("get_run", map[string]any{"runId": "r_nope"}, interpreter.CodeNotFound)
	agent.ok("get_work", map[string]any{}, nil)
	agent.refused("get_work", map[string]any{"limit": 0}, interpreter.CodeInvalid)

	c := claimStep(agent, v.Run.ID, "check_vendor")
	tb.a2.refused("claim", map[string]any{"runId": v.Run.ID, "stepId": "check_vendor", "requestId": rid()}, interpreter.CodeConflict)
	var renewed struct {
		Token string `json:"token"`
	}
	agent.ok("renew", map[string]any{"token": c.Token, "progress": "Searching the lists.", "requestId": rid()}, &renewed)
	agent.refused("renew", map[string]any{"token": c.Token, "requestId": rid()}, interpreter.CodeStale)
	file := upload(t, agent, "No matches.")
	agent.refused("upload", map[string]any{"fileName": "a", "contentType": "text/plain", "contentBase64": "!!!", "requestId": rid()}, interpreter.CodeInvalid)
	agent.refused("submit", map[string]any{"token": renewed.Token, "output": map[string]any{"cleared": "yes"}, "summary": "s", "requestId": rid()}, interpreter.CodeNotAccepted)
	agent.ok("submit", map[string]any{"token": renewed.Token, "requestId": rid(),
		"output": map[string]any{"cleared": true, "summary": "No matches."}, "evidence": []any{map[string]any{"kind": "file", "ref": file}},
		"summary": "Searched both lists.", "next": "approve", "reason": "Cleared."}, &v)
	w := itemFor(v, "approve")
	agent.refused("decide", decideArgs(v, w, "approved", nil), interpreter.CodeForbidden)
	approver.ok("decide", decideArgs(v, w, "approved", nil), &v)
	agent.ok("list_runs", map[string]any{"process": "supplier-onboarding"}, nil)
	agent.refused("list_runs", map[string]any{"state": "bogus"}, interpreter.CodeInvalid)
	agent.refused("send_event", map[string]any{"runId": v.Run.ID, "name": "x", "requestId": rid()}, interpreter.CodeConflict, interpreter.IssueRunEnded)

	v2 := startSupplier(t, b, mira)
	c2 := claimStep(agent, v2.Run.ID, "check_vendor")
	agent.ok("escalate", map[string]any{"token": c2.Token, "note": "The EU list is down.", "requestId": rid()}, nil)
	agent.refused("escalate", map[string]any{"token": c2.Token, "note": "Again.", "requestId": rid()}, interpreter.CodeStale)
	agent.ok("send_event", map[string]any{"runId": v2.Run.ID, "name": "nudge", "data": map[string]any{"n": 1}, "requestId": rid()}, nil)
	ops.ok("cancel", map[string]any{"runId": v2.Run.ID, "reason": "Duplicate supplier.", "requestId": rid()}, nil)
	ops.refused("cancel", map[string]any{"runId": v2.Run.ID, "reason": "Again.", "requestId": rid()}, interpreter.CodeConflict, interpreter.IssueRunEnded)

	refund := tb.startRefund(t)
	c3 := claimStep(agent, refund.Run.ID, "resolve")
	agent.callTool(c3.Token, "crm/get_customer", map[string]any{"email": "alice@example.com"})
	agent.refused("call_tool", callArgs(c3.Token, "crm/delete_everything", map[string]any{}), interpreter.CodeForbidden)

	b.answered.mu.Lock()
	defer b.answered.mu.Unlock()
	for tool := range agent.outputs {
		if seen := b.answered.seen[tool]; !seen[true] || !seen[false] {
			got, _ := json.Marshal(seen)
			t.Errorf("%s answered %s; want an accepted and a refused call", tool, got)
		}
	}
	if len(agent.outputs) != 15 {
		t.Errorf("%d tools listed, want 15", len(agent.outputs))
	}
}
