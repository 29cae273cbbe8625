package runs

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func TestParseInput(t *testing.T) {
	tests := []struct {
		name, in string
		key      string
		want     any
		bad      bool
	}{
		{name: "text", in: "vendorName=Acme", key: "vendorName", want: "Acme"},
		{name: "text with spaces and =", in: "note=a = b", key: "note", want: "a = b"},
		{name: "number exact", in: "amount=48000.10", key: "amount", want: json.Number("48000.10")},
		{name: "boolean", in: "cleared=true", key: "cleared", want: true},
		{name: "quoted number is text", in: `id="007"`, key: "id", want: "007"},
		{name: "not JSON is text", in: "id=007", key: "id", want: "007"},
		{name: "JSON then more is text", in: "id=12 monkeys", key: "id", want: "12 monkeys"},
		{name: "object", in: `who={"a":1}`, key: "who", want: map[string]any{"a": json.Number("1")}},
		{name: "empty value", in: "x=", key: "x", want: ""},
		{name: "no =", in: "amount", bad: true},
		{name: "no key", in: "=1", bad: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k, v, err := ParseInput(tt.in)
			if tt.bad {
				if err == nil {
					t.Fatalf("ParseInput(%q) = %q, %#v; want an error", tt.in, k, v)
				}
				return
			}
			if err != nil || k != tt.key || !reflect.DeepEqual(v, tt.want) {
				t.Fatalf("ParseInput(%q) = %q, %#v, %v; want %q, %#v", tt.in, k, v, err, tt.key, tt.want)
			}
		})
	}
}

// A view with what the end-to-end test's runs do not reach: an ended run,
// an escalation, a rejection kept in history, a person path assignee.
const endedView = `{
  "run": {"id": "r_1", "process": "contract-review", "version": 2, "mode": "test", "state": "cancelled",
          "outcome": null, "ended": {"by": "u_ops", "at": "2026-10-07T10:00:00Z", "note": "Customer withdrew"},
          "startedBy": "u_mira", "startedAt": "2026-10-06T09:00:00Z", "updatedAt": "2026-10-07T10:00:00Z"},
  "data": {"inputs": {"contractId": "C-9", "amount": 1.50, "owner": "mira@example.com"},
    "steps": {
      "prepare": {"output": {"revision": "r2"}, "summary": "Second revision.", "by": "mira@example.com", "at": "2026-10-06T12:00:00Z",
        "history": [{"output": {"revision": "r1"}, "summary": "First", "by": "mira@example.com", "at": "2026-10-06T10:00:00Z"}]},
      "legal_review": {"decision": "approved", "note": null, "by": "lee@example.com", "at": "2026-10-06T13:00:00Z",
        "history": [{"decision": "rejected", "note": "Cap the\nliability.", "by": "lee@example.com", "at": "2026-10-06T11:00:00Z"}]}}},
  "steps": [
    {"id": "prepare", "kind": "task", "state": "done"},
    {"id": "legal_review", "kind": "approve", "state": "done"},
    {"id": "finance_review", "kind": "approve", "state": "cancelled", "due": "2026-10-08T13:00:00Z", "overdue": true},
    {"id": "done", "kind": "finish", "state": null}],
  "workItems": [
    {"id": "w_3", "stepId": "finance_review", "kind": "approve", "text": "Approve.", "output": null, "evidence": null, "next": null,
     "handoff": null, "assignedTo": {"group": "g_finance"}, "snapshot": "s", "due": "2026-10-08T13:00:00Z",
     "escalation": {"note": "Pricing unclear", "by": "a_x", "at": "2026-10-06T14:00:00Z"},
     "decide": {"tool": "decide", "arguments": {"runId": "r_1", "workItemId": "w_3", "snapshot": "s", "requestId": "<new UUID>"},
                "decisions": ["approved", "rejected", "failed"]}}],
  "body": "# Contract review"
}`

func TestWriteView(t *testing.T) {
	var b strings.Builder
	if err := WriteView(&b, json.RawMessage(endedView)); err != nil {
		t.Fatal(err)
	}
	want := `Run r_1: contract-review v2 (test)
State:    cancelled
Started:  2026-10-06T09:00:00Z by u_mira
Updated:  2026-10-07T10:00:00Z
Ended:    2026-10-07T10:00:00Z by u_ops: Customer withdrew
Inputs:   amount=1.50 contractId=C-9 owner=mira@example.com

Steps:
  STEP            KIND     STATE      DUE
  prepare         task     done
  legal_review    approve  done
  finance_review  approve  cancelled  2026-10-08T13:00:00Z (overdue)
  done            finish   -

Work items:
  w_3  finance_review  approve  for group g_finance  due 2026-10-08T13:00:00Z
      decisions: approved, rejected, failed
      escalated by a_x at 2026-10-06T14:00:00Z: Pricing unclear

History:
  2026-10-06T10:00:00Z  prepare       mira@example.com  completed
                                                          First
  2026-10-06T11:00:00Z  legal_review  lee@example.com   rejected: Cap the liability.
  2026-10-06T12:00:00Z  prepare       mira@example.com  completed
                                                          Second revision.
  2026-10-06T13:00:00Z  legal_review  lee@example.com   approved
`
	if got := b.String(); got != want {
		t.Fatalf("WriteView wrote:\n%s\nwant:\n%s", got, want)
	}
}

func TestWriteViewRefusesNonViews(t *testing.T) {
	var b strings.Builder
	if err := WriteView(&b, json.RawMessage(`{"run": 1}`)); err == nil {
		t.Fatal("WriteView accepted a run that is not an object")
	}
}
