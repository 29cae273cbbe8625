package tests

import (
	"sync"
	"testing"

	"github.com/baton-run/baton/internal/testing/drivetest"
	"github.com/baton-run/baton/interpreter"
)

const peopleSrc = `---
name: people-loop
description: A reviewer fills a task with a route choice, then an approver signs off.
inputs:
  ref: string
steps:
  - id: fill
    person: reviewers
    task: Fill in the figures and choose the route.
    output:
      total: number
    evidence: [link]
    next:
      - { to: sign, when: The figures are complete }
      - { to: give_up, when: They cannot be found }
  - id: sign
    person: approvers
    approve: Approve the figures.
    next: done
  - id: give_up
    finish: abandoned
  - id: done
    finish: signed
---
`

func fillArgs(v view, w *interpreter.WorkItem, extra map[string]any) map[string]any {
	args := map[string]any{
		"output":   map[string]any{"total": 12},
		"evidence": []any{map[string]any{"kind": "link", "ref": "https://example.com/sheet"}},
		"next":     "sign", "reason": "All there.",
	}
	for k, x := range extra {
		args[k] = x
	}
	return decideArgs(v, w, "completed", args)
}

// §3.4: a person's get_work lists the open items assigned to them, oldest
// first, each with the exact decide call and the decisions allowed.
func TestSection3_4_InboxOldestFirst(t *testing.T) {
	b := start(t, options{})
	b.publish(peopleSrc)
	starter := b.connect(personID("starter@example.com"))
	rita := b.connect(personID("rita@example.com", "reviewers"))
	var runs []string
	for _, ref := range []string{"first", "second", "third"} {
		var v view
		starter.ok("start_run", map[string]any{"process": "people-loop", "inputs": map[string]any{"ref": ref}, "requestId": rid()}, &v)
		runs = append(runs, v.Run.ID)
	}
	items := personWork(rita, "")
	if len(items) != 3 {
		t.Fatalf("inbox has %d items, want 3", len(items))
	}
	for i, it := range items {
		w := it.WorkItem
		if it.RunID != runs[i] || w.StepID != "fill" || w.Kind != "task" || it.Process != "people-loop" || it.Version != 1 || it.Mode != "live" {
			t.Fatalf("inbox item %d = %+v, want run %s", i, it, runs[i])
		}
		if w.Decide.Tool != "decide" || w.Decide.Arguments.RunID != runs[i] || w.Decide.Arguments.WorkItemID != w.ID ||
			w.Decide.Arguments.Snapshot != w.Snapshot || len(w.Decide.Decisions) != 2 || w.Decide.Decisions[0] != "completed" || w.Decide.Decisions[1] != "failed" {
			t.Fatalf("decide call = %+v", w.Decide)
		}
		if len(w.Next) != 2 || w.Output.Lookup("total") == nil || len(w.Evidence) != 1 || w.AssignedTo.Group != "reviewers" {
			t.Fatalf("item requirements = %+v", w)
		}
	}
	if got := personWork(b.connect(personID("olaf@example.com", "elsewhere")), ""); len(got) != 0 {
		t.Fatalf("a person outside the group sees %d items", len(got))
	}
	var page struct {
		Items      []personItem `json:"items"`
		NextCursor *string      `json:"nextCursor"`
	}
	rita.ok("get_work", map[string]any{"limit": 2}, &page)
	if len(page.Items) != 2 || page.NextCursor == nil || page.Items[0].RunID != runs[0] {
		t.Fatalf("first page = %d items, cursor %v", len(page.Items), page.NextCursor)
	}
	rita.refused("get_work", map[string]any{"limit": 0}, interpreter.CodeInvalid)
	rita.refused("get_work", map[string]any{"limit": 101}, interpreter.CodeInvalid)
	rita.refused("get_work", map[string]any{"cursor": "not-a-cursor"}, interpreter.CodeInvalid)
	if got := personWork(rita, ""); len(got) != 3 {
		t.Fatalf("get_work listed %d", len(got))
	}
	rita.ok("get_work", map[string]any{"limit": 2, "cursor": *page.NextCursor}, &page)
	if len(page.Items) != 1 || page.NextCursor != nil || page.Items[0].RunID != runs[2] {
		t.Fatalf("second page = %+v", page)
	}
	// Deciding the oldest leaves the other two in order.
	w := items[0].WorkItem
	var v view
	rita.ok("decide", fillArgs(view{Run: interpreter.RunInfo{ID: runs[0]}}, &w, nil), &v)
	if items = personWork(rita, ""); len(items) != 2 || items[0].RunID != runs[1] || items[1].RunID != runs[2] {
		t.Fatalf("inbox after one decision = %+v", items)
	}
}

// §3.4, SPEC-DECISIONS §1–3: decide's errors in the order checked. Each
// call below breaks two rules; the one checked first is the answer.
func TestSection3_4_DecideErrorOrder(t *testing.T) {
	b := start(t, options{})
	b.publish(peopleSrc)
	starter := b.connect(personID("starter@example.com"))
	rita := b.connect(personID("rita@example.com", "reviewers"))
	olaf := b.connect(personID("olaf@example.com", "elsewhere"))
	var v view
	starter.ok("start_run", map[string]any{"process": "people-loop", "inputs": map[string]any{"ref": "x"}, "requestId": rid()}, &v)
	w := itemFor(v, "fill")
	bad := map[string]any{"output": map[string]any{"total": "twelve"}}

	// forbidden before not_accepted: an outsider with a bad output.
	olaf.refused("decide", fillArgs(v, w, bad), interpreter.CodeForbidden)
	// stale before forbidden: an outsider with an old snapshot.
	old := *w
	old.Snapshot = "0000000000000000000000000000000000000000000000000000000000000000"
	olaf.refused("decide", fillArgs(v, &old, bad), interpreter.CodeStale)
	// not_found before stale: no such item, old snapshot.
	gone := old
	gone.ID = "w_999"
	rita.refused("decide", fillArgs(v, &gone, nil), interpreter.CodeNotFound)
	// not_accepted last: the right person, the right snapshot.
	rita.refused("decide", fillArgs(v, w, bad), interpreter.CodeNotAccepted, "output.total: expected number")
	rita.refused("decide", fillArgs(v, w, map[string]any{"next": "elsewhere"}), interpreter.CodeNotAccepted, "next: not one of sign, give_up")
	rita.refused("decide", fillArgs(v, w, map[string]any{"reason": " "}), interpreter.CodeNotAccepted, "reason: required")
	rita.ok("decide", fillArgs(v, w, nil), &v)
	// already_decided before stale, forbidden and not_accepted.
	olaf.refused("decide", fillArgs(v, &old, bad), interpreter.CodeConflict, "already_decided")
	sign := itemFor(v, "sign")
	amy := b.connect(personID("amy@example.com", "approvers"))
	amy.ok("decide", decideArgs(v, sign, "approved", map[string]any{"note": "Fine."}), &v)
	if v.Run.State != "ended" || *v.Run.Outcome != "signed" || *v.Data.Steps["sign"].Note != "Fine." {
		t.Fatalf("after approval: %+v", v.Run)
	}
	// run_ended before already_decided and not_found.
	olaf.refused("decide", fillArgs(v, &old, bad), interpreter.CodeConflict, "run_ended")
	rita.refused("decide", fillArgs(v, &gone, nil), interpreter.CodeConflict, "run_ended")
	// invalid before run_ended.
	rita.refused("decide", decideArgs(v, w, "approved", map[string]any{"next": "sign"}), interpreter.CodeInvalid)
}

// §3.4, tools.md decide: every invalid combination of arguments, refused
// before the item is looked at.
func TestSection3_4_DecideInvalidCombinations(t *testing.T) {
	b := start(t, options{})
	b.publish(peopleSrc)
	starter := b.connect(personID("starter@example.com"))
	rita := b.connect(personID("rita@example.com", "reviewers", "approvers"))
	var v view
	starter.ok("start_run", map[string]any{"process": "people-loop", "inputs": map[string]any{"ref": "x"}, "requestId": rid()}, &v)
	task := itemFor(v, "fill")
	link := []any{map[string]any{"kind": "link", "ref": "https://x"}}
	cases := []struct {
		name     string
		decision string
		extra    map[string]any
	}{
		{"next on approved", "approved", map[string]any{"next": "sign"}},
		{"reason on failed", "failed", map[string]any{"note": "n", "reason": "r"}},
		{"next on rejected", "rejected", map[string]any{"note": "n", "next": "sign"}},
		{"note with completed", "completed", map[string]any{"output": map[string]any{"total": 1}, "evidence": link, "next": "sign", "reason": "r", "note": "n"}},
		{"output with failed", "failed", map[string]any{"note": "n", "output": map[string]any{"total": 1}}},
		{"evidence with rejected", "rejected", map[string]any{"note": "n", "evidence": link}},
		{"summary with returned", "returned", map[string]any{"note": "n", "summary": "s"}},
		{"rejected without note", "rejected", nil},
		{"returned without note", "returned", nil},
		{"failed without note", "failed", nil},
		{"failed with a blank note", "failed", map[string]any{"note": "  "}},
		{"approved on a task", "approved", nil},
		{"returned on a task", "returned", map[string]any{"note": "n"}},
		{"an unknown decision", "maybe", nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rita.refused("decide", decideArgs(v, task, tc.decision, tc.extra), interpreter.CodeInvalid)
		})
	}
	args := decideArgs(v, task, "failed", map[string]any{"note": "n"})
	delete(args, "snapshot")
	rita.refused("decide", args, interpreter.CodeInvalid, "snapshot: required")
	args = decideArgs(v, task, "failed", map[string]any{"note": "n", "colour": "red"})
	rita.refused("decide", args, interpreter.CodeInvalid, "colour: not an argument of this tool")
	// completed is not a decision an approval accepts.
	rita.ok("decide", fillArgs(v, task, nil), &v)
	sign := itemFor(v, "sign")
	rita.refused("decide", decideArgs(v, sign, "completed", map[string]any{"output": map[string]any{}}), interpreter.CodeInvalid)
	if got := getRun(rita, v.Run.ID); got.StepState("sign") != "waiting" {
		t.Fatalf("refused decisions changed the run: %s", got.StepStates())
	}
}

// §3.4: a role's item is shared; the first decision wins and the other
// member learns already_decided, even racing.
func TestSection3_4_FirstDecisionWins(t *testing.T) {
	b := start(t, options{})
	b.publish(peopleSrc)
	starter := b.connect(personID("starter@example.com"))
	rita := b.connect(personID("rita@example.com", "reviewers"))
	rolf := b.connect(personID("rolf@example.com", "reviewers"))
	var v view
	starter.ok("start_run", map[string]any{"process": "people-loop", "inputs": map[string]any{"ref": "x"}, "requestId": rid()}, &v)
	mine, his := personWork(rita, v.Run.ID), personWork(rolf, v.Run.ID)
	if len(mine) != 1 || len(his) != 1 || mine[0].WorkItem.ID != his[0].WorkItem.ID {
		t.Fatalf("the shared item: %+v / %+v", mine, his)
	}
	w := mine[0].WorkItem
	results := make([]reply, 2)
	var wg sync.WaitGroup
	for i, u := range []*user{rita, rolf} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = u.call("decide", fillArgs(v, &w, map[string]any{"reason": u.id.ID}))
		}()
	}
	wg.Wait()
	won, lost := 0, 0
	for _, r := range results {
		switch {
		case r.OK:
			won++
		case r.Error.Code == interpreter.CodeConflict && len(r.Error.Issues) == 1 && r.Error.Issues[0] == "already_decided":
			lost++
		default:
			t.Fatalf("the losing decision got %+v, want conflict already_decided", r.Error)
		}
	}
	if won != 1 || lost != 1 {
		t.Fatalf("%d decisions won and %d lost, want 1 and 1", won, lost)
	}
	got := getRun(rita, v.Run.ID)
	if len(got.Data.Steps["fill"].History) != 0 || got.StepState("fill") != "done" {
		t.Fatalf("the step completed twice: %+v", got.Data.Steps["fill"])
	}
	if got := personWork(rolf, v.Run.ID); len(got) != 0 {
		t.Fatalf("the decided item is still in the other member's inbox")
	}
}

const siblingSrc = `---
name: sibling-change
description: An agent and a reviewer work at once; the agent's completion changes run data.
steps:
  - id: fork
    parallel: [gather, look]
    next: done
  - id: gather
    agent: Gather.
    output: { found: boolean }
    next: join
  - id: look
    person: reviewers
    approve: Look it over.
    next: join
  - id: done
    finish: ok
---
`

// §3.4: a decision carries the snapshot of the read it came from; when run
// data changed since, it is stale, and a fresh get_run makes it good.
func TestSection3_4_SnapshotStaleAfterRunDataChange(t *testing.T) {
	b := start(t, options{})
	agent := b.connect(agentID)
	rita := b.connect(personID("rita@example.com", "reviewers"))
	v := startSrc(t, b, rita, siblingSrc, nil)
	w := itemFor(v, "look")
	again := getRun(rita, v.Run.ID)
	if itemFor(again, "look").Snapshot != w.Snapshot {
		t.Fatal("the snapshot changed though run data did not")
	}
	c := claimStep(agent, v.Run.ID, "gather")
	if getRun(rita, v.Run.ID).WorkItems[0].Snapshot != w.Snapshot {
		t.Fatal("a claim changed the snapshot; claims do not change run data")
	}
	agent.ok("submit", map[string]any{"token": c.Token, "output": map[string]any{"found": true}, "summary": "Found it.", "requestId": rid()}, nil)
	rita.refused("decide", decideArgs(v, w, "approved", nil), interpreter.CodeStale)
	fresh := getRun(rita, v.Run.ID)
	fw := itemFor(fresh, "look")
	if fw.Snapshot == w.Snapshot || fw.Decide.Arguments.Snapshot != fw.Snapshot {
		t.Fatalf("get_run after the change: snapshot %s (was %s)", fw.Snapshot, w.Snapshot)
	}
	rita.ok("decide", decideArgs(fresh, fw, "approved", nil), &v)
	if v.Run.State != "ended" || *v.Run.Outcome != "ok" {
		t.Fatalf("after the decision: %+v", v.Run)
	}
}

const singleNextTaskSrc = `---
name: single-next-task
description: A task with one next.
steps:
  - id: note_it
    person: reviewers
    task: Note it down.
  - id: done
    finish: ok
---
`

// §3.2: next and reason on a completed decision for a step whose next is
// not a list are not_accepted; people's summary is optional.
func TestSection3_2_NextOnlyWhenAList(t *testing.T) {
	b := start(t, options{})
	rita := b.connect(personID("rita@example.com", "reviewers"))
	v := startSrc(t, b, rita, singleNextTaskSrc, nil)
	w := itemFor(v, "note_it")
	if w.Next != nil || w.Output != nil || w.Evidence != nil {
		t.Fatalf("a task without requirements shows %+v", w)
	}
	rita.refused("decide", decideArgs(v, w, "completed", map[string]any{"output": map[string]any{}, "next": "done", "reason": "r"}), interpreter.CodeNotAccepted,
		"next: not allowed, this step has one next", "reason: not allowed, this step has one next")
	rita.ok("decide", decideArgs(v, w, "completed", map[string]any{"output": map[string]any{}}), &v)
	drivetest.WantEndedAtFinish(t, parseFor(t, []byte(singleNextTaskSrc)), &v)
}

const personPathSrc = `---
name: person-path
description: The person named in the inputs approves.
inputs:
  boss: person
  deputy: { type: person, optional: true }
steps:
  - id: sign
    person: inputs.boss
    approve: Sign it.
  - id: countersign
    person: inputs.deputy
    approve: Countersign it.
  - id: done
    finish: ok
---
`

// §3.4: a person path assigns the item to the person in run data (email
// compared without case); a path that resolves to nothing fails the run.
func TestSection3_4_PersonPath(t *testing.T) {
	b := start(t, options{})
	starter := b.connect(personID("starter@example.com"))
	boss := b.connect(personID("boss@example.com"))
	v := startSrc(t, b, starter, personPathSrc, map[string]any{"boss": "Boss@Example.com"})
	items := personWork(boss, v.Run.ID)
	if len(items) != 1 || items[0].WorkItem.StepID != "sign" {
		t.Fatalf("the named person's get_work = %+v", items)
	}
	if got := personWork(starter, v.Run.ID); len(got) != 0 {
		t.Fatalf("someone else sees the item: %+v", got)
	}
	starter.refused("decide", decideArgs(v, &items[0].WorkItem, "approved", nil), interpreter.CodeForbidden)
	boss.ok("decide", decideArgs(v, &items[0].WorkItem, "approved", nil), &v)
	if v.Run.State != "ended" || *v.Run.Outcome != "failed" || v.StepState("countersign") != "failed" {
		t.Fatalf("a person path to nothing: %+v %s", v.Run, v.StepStates())
	}
	if d := v.Data.Steps["countersign"]; d.Decision != "failed" || d.By != "server" || v.Run.Ended.By != "server" {
		t.Fatalf("the failed step recorded %+v, ended %+v", d.Record, v.Run.Ended)
	}
}
