package tests

import (
	"encoding/json"
	"testing"

	"github.com/baton-run/baton/internal/testing/drivetest"
	"github.com/baton-run/baton/interpreter"
)

const everyTypeSrc = `---
name: every-type
description: Takes one input of every type, for the input checks.
inputs:
  title: string
  amount: number
  urgent: boolean
  startDate: date
  startAt: datetime
  tags: { type: list, items: string }
  lines: { type: list, items: { type: object } }
  meta: object
  owner: person
  tier: { type: string, one_of: [gold, silver] }
  level: { type: number, one_of: [1, 2] }
  note: { type: string, optional: true }
steps:
  - id: work
    agent: Do it.
  - id: done
    finish: ok
---
`

// §2.3: every type, one_of, optional, null and undeclared fields at
// start_run; a refusal is invalid and lists every issue at once, exactly.
func TestSection2_3_Inputs(t *testing.T) {
	b := start(t, options{})
	b.publish(everyTypeSrc)
	mira := b.connect(personID("mira@example.com"))
	good := func() map[string]any {
		return map[string]any{
			"title": "T", "amount": json.Number("12345678901234567890.123456789"), "urgent": false,
			"startDate": "2028-02-29", "startAt": "2026-10-06T09:00:00+02:00",
			"tags": []any{"a", "b"}, "lines": []any{map[string]any{"x": 1}}, "meta": map[string]any{},
			"owner": "olaf@example.com", "tier": "gold", "level": json.Number("2"),
		}
	}
	var v view
	mira.ok("start_run", map[string]any{"process": "every-type", "inputs": good(), "requestId": rid()}, &v)
	if v.Data.Inputs["amount"] != json.Number("12345678901234567890.123456789") {
		t.Fatalf("the number was not kept exactly: %v", v.Data.Inputs["amount"])
	}
	if _, ok := v.Data.Inputs["note"]; ok {
		t.Fatal("an omitted optional field appeared in inputs")
	}
	with := func(changes map[string]any, drop ...string) map[string]any {
		in := good()
		for k, x := range changes {
			in[k] = x
		}
		for _, k := range drop {
			delete(in, k)
		}
		return in
	}
	cases := []struct {
		name   string
		inputs map[string]any
		issues []string
	}{
		{"string", with(map[string]any{"title": 5}), []string{"inputs.title: expected string"}},
		{"number", with(map[string]any{"amount": "12"}), []string{"inputs.amount: expected number"}},
		{"boolean", with(map[string]any{"urgent": "yes"}), []string{"inputs.urgent: expected boolean"}},
		{"date not a calendar day", with(map[string]any{"startDate": "2027-02-29"}), []string{"inputs.startDate: expected date"}},
		{"date with time", with(map[string]any{"startDate": "2026-10-06T09:00:00Z"}), []string{"inputs.startDate: expected date"}},
		{"datetime without offset", with(map[string]any{"startAt": "2026-10-06T09:00:00"}), []string{"inputs.startAt: expected datetime"}},
		{"list", with(map[string]any{"tags": "a"}), []string{"inputs.tags: expected list"}},
		{"list items", with(map[string]any{"tags": []any{"a", 2, true}}), []string{"inputs.tags[1]: expected string", "inputs.tags[2]: expected string"}},
		{"list of objects", with(map[string]any{"lines": []any{map[string]any{}, "x"}}), []string{"inputs.lines[1]: expected object"}},
		{"object", with(map[string]any{"meta": []any{}}), []string{"inputs.meta: expected object"}},
		{"person", with(map[string]any{"owner": "not an email"}), []string{"inputs.owner: expected person"}},
		{"one_of string", with(map[string]any{"tier": "bronze"}), []string{"inputs.tier: not one of gold, silver"}},
		{"one_of number", with(map[string]any{"level": json.Number("3")}), []string{"inputs.level: not one of 1, 2"}},
		{"required missing", with(nil, "title", "owner"), []string{"inputs.title: missing", "inputs.owner: missing"}},
		{"null is not a value", with(map[string]any{"title": nil}), []string{"inputs.title: expected string"}},
		{"null on an optional field", with(map[string]any{"note": nil}), []string{"inputs.note: expected string"}},
		{"undeclared", with(map[string]any{"zeta": 1, "alpha": "x"}), []string{"inputs.alpha: not declared", "inputs.zeta: not declared"}},
		{"every issue at once", map[string]any{"title": 1, "extra": true}, []string{
			"inputs.title: expected string", "inputs.amount: missing", "inputs.urgent: missing", "inputs.startDate: missing",
			"inputs.startAt: missing", "inputs.tags: missing", "inputs.lines: missing", "inputs.meta: missing",
			"inputs.owner: missing", "inputs.tier: missing", "inputs.level: missing", "inputs.extra: not declared",
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			u := b.in(t).connect(personID("mira@example.com"))
			u.refused("start_run", map[string]any{"process": "every-type", "inputs": tc.inputs, "requestId": rid()}, interpreter.CodeInvalid, tc.issues...)
		})
	}
	var runs struct{ Items []any }
	mira.ok("list_runs", map[string]any{}, &runs)
	if len(runs.Items) != 1 {
		t.Fatalf("refused starts made runs: %d runs", len(runs.Items))
	}
}

// §3.4: a process with an initiator step cannot be started by an agent.
func TestSection3_4_InitiatorNeedsAPersonStarter(t *testing.T) {
	b := start(t, options{})
	b.publishFixture("expense-reimbursement")
	in := interpreter.Samples(drivetest.Fixture(t, "expense-reimbursement").Inputs)
	b.connect(agentID).refused("start_run", map[string]any{"process": "expense-reimbursement", "inputs": in, "requestId": rid()}, interpreter.CodeInvalid,
		"initiator: a run started by an agent has no initiator, and this process assigns steps to initiator")
	var v view
	b.connect(personID("mira@example.com")).ok("start_run", map[string]any{"process": "expense-reimbursement", "inputs": in, "requestId": rid()}, &v)
	w := itemFor(v, "receipts")
	if w == nil || w.AssignedTo.Person != "mira@example.com" {
		t.Fatalf("receipts item = %+v, want assigned to the initiator", w)
	}
}
