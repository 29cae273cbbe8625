package gateway

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/baton-run/baton/gateway/auth"
	"github.com/baton-run/baton/internal/store"
	"github.com/baton-run/baton/interpreter"
)

const itemShapesSrc = `---
name: item-shapes
description: Work items of every kind, with text a JSON encoder may spell its own way.
inputs:
  ref: string
steps:
  - id: draft
    agent: Draft the <figures> & totals.
    output:
      amount: number
    next: fill
  - id: fill
    person: reviewers
    task: Fill in the <net> figures & choose.
    output:
      total: { type: number, description: "Net & gross, <b>in EUR</b>" }
      tier: { type: string, one_of: [gold, silver] }
      lines: { type: list, items: number, optional: true }
      grade: { type: number, one_of: [1.50, 2e3, 12345678901234567890] }
    evidence: [link]
    next:
      - { to: sign, when: "Figures > 0 & complete" }
      - { to: done, when: None }
  - id: sign
    person: approvers
    approve: Approve <it> & sign.
    next: done
  - id: done
    finish: signed
---
Body.
`

// A person's get_work item carries the work item as the read model keeps
// it: the same JSON value, every field and every number as kept (the item
// is decoded into interpreter.PersonWork and encoded again, its keys in
// the order get_run shows them).
func TestPersonWorkItemIsTheRunsOwn(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	p, err := interpreter.Parse([]byte(itemShapesSrc), nil)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC().Truncate(time.Second)
	bot := interpreter.Actor{ID: "bot", Kind: interpreter.ActorAgent}
	rita := interpreter.Actor{ID: "rita@example.com", Kind: interpreter.ActorPerson, Groups: []string{"reviewers"}}
	summary, next, reason := "Drafted.", "sign", "All there & <checked>."
	apply := func(m *interpreter.Machine, cmd interpreter.Command) {
		t.Helper()
		if _, err := m.Apply(cmd, now); err != nil {
			t.Fatal(err)
		}
	}
	start := func(runID string) *interpreter.Machine {
		t.Helper()
		m, err := interpreter.StartRun(interpreter.Start{RunID: runID, Process: p, Version: 1, Inputs: interpreter.Values{"ref": "a&b"},
			Starter: interpreter.Actor{ID: "mira@example.com", Kind: interpreter.ActorPerson}}, now)
		if err != nil {
			t.Fatal(err)
		}
		apply(m, interpreter.Claim{StepID: "draft", Actor: bot, LeaseID: "l1", Lease: time.Hour})
		return m
	}
	drafted := func(m *interpreter.Machine) *interpreter.Machine {
		apply(m, interpreter.Submit{StepID: "draft", LeaseID: "l1", Actor: bot,
			Submission: interpreter.Submission{Output: interpreter.Values{"amount": json.Number("1e2")}, Summary: &summary}})
		return m
	}
	escalated := start("r_escalated")
	apply(escalated, interpreter.Escalate{StepID: "draft", LeaseID: "l1", Actor: bot, Note: "Totals <don't> add up & 1e2 looks odd."})
	filling := drafted(start("r_filling"))
	signing := drafted(start("r_signing"))
	fill := signing.WorkItems(now)[0]
	apply(signing, interpreter.Decide{WorkItemID: fill.ID, Snapshot: fill.Snapshot, Decision: "completed", Actor: rita,
		Submission: interpreter.Submission{Output: interpreter.Values{"total": json.Number("12.50"), "tier": "gold", "lines": []any{json.Number("1.0"), json.Number("2e3")}, "grade": json.Number("2e3")},
			Evidence: []interpreter.Evidence{{Kind: "link", Ref: "https://example.com/sheet?a=1&b=<2>"}}, Next: &next, Reason: &reason}})

	kept := map[string]json.RawMessage{} // run → its item in the read model
	for _, m := range []*interpreter.Machine{escalated, filling, signing} {
		l, err := m.Listing(now)
		if err != nil {
			t.Fatal(err)
		}
		row := store.RunRow{Org: "o_test", RunID: l.RunID, Process: l.Process, Version: l.Version, State: l.State, Mode: l.Mode,
			Inputs: json.RawMessage(`{}`), StartedBy: l.StartedBy, StartedAt: l.StartedAt, UpdatedAt: l.UpdatedAt, Seq: l.Seq}
		var work []store.WorkRow
		for _, w := range l.Work {
			work = append(work, store.WorkRow{StepID: w.StepID, WorkItemID: w.WorkItemID, Kind: store.WorkKind(w.Kind), ReadySince: w.ReadySince,
				Due: w.Due, AssignedGroup: w.Group, AssignedPerson: w.Person, AlsoGroups: w.AlsoGroups, Handoff: w.Handoff, Item: w.Item})
		}
		if _, err := b.store.UpsertRun(b.ctx, nil, row, work); err != nil {
			t.Fatal(err)
		}
		rows, err := b.store.RunWork(b.ctx, "o_test", l.RunID)
		if err != nil || len(rows) != 1 || rows[0].Item == nil {
			t.Fatalf("run %s keeps %+v (%v), want one work item", l.RunID, rows, err)
		}
		kept[l.RunID] = rows[0].Item
	}

	seen := map[string]bool{}
	for _, who := range []auth.Identity{
		{ID: "ops@example.com", Kind: auth.KindOperator},
		{ID: "rita@example.com", Kind: auth.KindPerson, Groups: []string{"reviewers"}},
		{ID: "sam@example.com", Kind: auth.KindPerson, Groups: []string{"approvers"}},
	} {
		raw, err := b.g.Call(b.ctx, who, "get_work", json.RawMessage(`{}`))
		if err != nil {
			t.Fatalf("%s: %v", who.ID, err)
		}
		var page struct {
			Items []struct {
				RunID    string          `json:"runId"`
				WorkItem json.RawMessage `json:"workItem"`
			} `json:"items"`
		}
		if err := json.Unmarshal(raw, &page); err != nil {
			t.Fatal(err)
		}
		if len(page.Items) != 1 {
			t.Fatalf("%s: %d items, want 1: %s", who.ID, len(page.Items), raw)
		}
		it := page.Items[0]
		if got, want := exactValue(t, it.WorkItem), exactValue(t, kept[it.RunID]); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: get_work's item of %s\n  %s\nwant the read model's\n  %s", who.ID, it.RunID, it.WorkItem, kept[it.RunID])
		}
		seen[it.RunID] = true
	}
	if len(seen) != 3 {
		t.Fatalf("items of %v compared, want all three runs'", seen)
	}
	if !strings.Contains(string(kept["r_filling"]), "1.50") {
		t.Fatalf("the task's item keeps no number as written: %s", kept["r_filling"])
	}
}

// exactValue decodes JSON with its numbers as written.
func exactValue(t *testing.T, b []byte) any {
	t.Helper()
	var v any
	if err := interpreter.DecodeExact(b, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// BenchmarkPersonWorkItem is what a person's get_work item costs the
// gateway beyond the read: the item decoded into interpreter.PersonWork
// and encoded again, for a task with four declared output fields.
func BenchmarkPersonWorkItem(b *testing.B) {
	row := store.WorkRow{RunID: "r_1", Process: "item-shapes", Version: 1, Mode: "live", WorkItemID: "w_1", Item: json.RawMessage(`{"id":"w_1","due":null,"kind":"task",` +
		`"next":[{"to":"sign","when":"Figures > 0 & complete"},{"to":"done","when":"None"}],"text":"Fill in the <net> figures & choose.",` +
		`"decide":{"tool":"decide","arguments":{"runId":"r_1","snapshot":"008263e49a4cc12614a71f0a767137e8","requestId":"<new UUID>","workItemId":"w_1"},"decisions":["completed","failed"]},` +
		`"output":{"tier":{"type":"string","one_of":["gold","silver"]},"grade":{"type":"number","one_of":[1.50,2000]},"lines":{"type":"list","items":"number","optional":true},` +
		`"total":{"type":"number","description":"Net & gross, in EUR"}},"stepId":"fill","handoff":null,"evidence":["link"],"snapshot":"008263e49a4cc12614a71f0a767137e8",` +
		`"assignedTo":{"group":"reviewers"},"escalation":null}`)}
	b.ReportAllocs()
	for b.Loop() {
		w, err := personWork(row)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := marshal(w); err != nil {
			b.Fatal(err)
		}
	}
}
