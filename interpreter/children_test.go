package interpreter

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"
)

// The children a parent's process steps run in these tests.
const (
	screeningSrc = `name: screening
description: Screen one supplier.
inputs:
  supplierName: string
  rfp: string
steps:
  - id: screen
    agent: Screen the supplier.
    output: { cleared: boolean }
    next:
      - ok
      - flagged
  - id: ok
    finish: cleared
  - id: flagged
    finish: flagged
`
	reviewSrc = `name: contract-review
description: Review a contract.
inputs:
  counterparty: string
steps:
  - id: review
    person: legal
    approve: Approve the contract.
  - id: signed
    finish: signed
`
	// rfpSrc fans out over the suppliers two at a time and runs one
	// contract review, whose rejection goes back to compare.
	rfpSrc = `name: rfp
description: Run an RFP.
inputs:
  rfpId: string
steps:
  - id: collect
    agent: List every supplier that answered.
    output: { suppliers: { type: list, items: object } }
  - id: screen_each
    process: screening
    for_each: steps.collect.output.suppliers
    inputs: { supplierName: item.name, rfp: inputs.rfpId }
    concurrency: 2
    on_outcome: { failed: review_failures }
    next: compare
  - id: compare
    agent: Compare the screened suppliers.
    output: { supplier: string }
  - id: legal
    process: contract-review
    inputs: { counterparty: steps.compare.output.supplier }
    on_outcome: { rejected: compare }
    next: awarded
  - id: awarded
    finish: awarded
  - id: review_failures
    person: buyers
    task: Look at the failed screenings.
    next: awarded
`
)

// childCatalog publishes the children as version 1 each.
func childCatalog(t testing.TB) *Catalog {
	t.Helper()
	cat := NewCatalog("published in this organization")
	for _, src := range []string{screeningSrc, reviewSrc} {
		p, err := Parse([]byte(processDoc(src)), &ParseOptions{Offer: childOffer(cat)})
		if err != nil {
			t.Fatal(err)
		}
		cat.Add(CatalogEntry{Process: p, Version: 1}, true)
	}
	return cat
}

func childOffer(cat *Catalog) *Offer {
	o := DefaultOffer()
	o.Profiles = append(o.Profiles, ProfileParallel, ProfileSubprocess)
	o.Processes = cat
	return &o
}

// parentRun starts src as run r_1, bound to the children, with limits.
func parentRun(t testing.TB, src string, limits Limits) *Machine {
	t.Helper()
	p, bound, err := ParseAndBind([]byte(processDoc(src)), &ParseOptions{Offer: childOffer(childCatalog(t))})
	if err != nil {
		t.Fatal(err)
	}
	m, err := StartRun(Start{RunID: "r_1", Process: p, Version: 3, Inputs: Values{"rfpId": "RFP-7"}, Starter: starter, Children: bound, Limits: limits}, t0)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// step applies a command to a parent run, which has to succeed. A parent's
// views are not core-2's (its process steps are the profile's), so they
// are not checked against core-2's schema here.
func step(t testing.TB, m *Machine, cmd Command, now time.Time) any {
	t.Helper()
	if err := m.Check(cmd, now); err != nil {
		t.Fatalf("check %T: %v", cmd, err)
	}
	res, err := m.Apply(cmd, now)
	if err != nil {
		t.Fatalf("apply %T: %v", cmd, err)
	}
	return res
}

// submitCollect submits the supplier list.
func submitCollect(t testing.TB, m *Machine, names ...string) {
	t.Helper()
	suppliers := []any{}
	for _, n := range names {
		suppliers = append(suppliers, map[string]any{"name": n})
	}
	step(t, m, Claim{StepID: "collect", Actor: agentA, LeaseID: "lc", Lease: lease}, t0)
	step(t, m, Submit{StepID: "collect", LeaseID: "lc", Actor: agentA, Submission: Submission{Output: Values{"suppliers": suppliers}, Summary: ptr("Listed.")}}, t0)
}

// started takes the needs and returns the children to start.
func started(t testing.TB, m *Machine) []*ChildNeeded {
	t.Helper()
	var out []*ChildNeeded
	for _, n := range m.TakeNeeds() {
		c, ok := n.(*ChildNeeded)
		if !ok {
			t.Fatalf("need %T, want children to start", n)
		}
		out = append(out, c)
	}
	return out
}

func ended(runID, outcome string, note *string) ChildEnded {
	return ChildEnded{RunID: runID, Outcome: outcome, Note: note}
}

func stepOutput(t testing.TB, m *Machine, id string) string {
	t.Helper()
	d := m.Run().Data.Steps[id]
	if d == nil || d.Record == nil {
		t.Fatalf("step %s has no record", id)
	}
	b, err := json.Marshal(d.Record.Output)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A for_each step starts as many children as its concurrency allows, in
// item order, each with its inputs, the run's starter and mode and a run
// id of its own; the next starts as one ends; the join records every
// outcome in item order and the run goes on in the same write.
func TestForEachStartsChildrenAndJoins(t *testing.T) {
	m := parentRun(t, rfpSrc, Limits{})
	submitCollect(t, m, "Acme", "Birch", "Cobalt", "Dune")
	if stepState(m, "screen_each") != StepWaiting {
		t.Fatalf("screen_each is %s", stepState(m, "screen_each"))
	}
	first := started(t, m)
	if len(first) != 2 {
		t.Fatalf("started %d children, want 2 (concurrency)", len(first))
	}
	_, sr := m.stepRun("screen_each")
	for i, c := range first {
		want := Start{RunID: ChildRunID("r_1", "screen_each", sr.AttemptSeq, i), Version: 1,
			Inputs: Values{"supplierName": []string{"Acme", "Birch"}[i], "rfp": "RFP-7"}, Mode: ModeLive,
			Starter: starter, Operators: DefaultOperators, Limits: m.Run().Limits, Parent: &ParentRef{RunID: "r_1", StepID: "screen_each"}}
		if c.Index != i || c.StepID != "screen_each" || c.Binding.Process != "screening" || c.Binding.Version != 1 || !reflect.DeepEqual(c.Start, want) {
			t.Fatalf("child %d: %+v\nwant start %+v", i, c, want)
		}
	}
	if first[0].Start.RunID == first[1].Start.RunID {
		t.Fatal("two children share a run id")
	}
	v := m.View(t0)
	if got := v.Steps[1].Children; got == nil || got.Total != 4 || got.Running != 2 || got.Ended != 0 || !reflect.DeepEqual(got.RunningIDs, []string{first[0].Start.RunID, first[1].Start.RunID}) {
		t.Fatalf("children shown: %+v", got)
	}
	// The second ends first: the third starts.
	step(t, m, ended(first[1].Start.RunID, "flagged", nil), t0)
	third := started(t, m)
	if len(third) != 1 || third[0].Index != 2 || third[0].Start.Inputs["supplierName"] != "Cobalt" {
		t.Fatalf("after one ended: %+v", third)
	}
	step(t, m, ended(first[0].Start.RunID, "cleared", nil), t0)
	fourth := started(t, m)
	step(t, m, ended(third[0].Start.RunID, "cleared", ptr("Fine.")), t0)
	if len(started(t, m)) != 0 || stepState(m, "screen_each") != StepWaiting {
		t.Fatal("a fifth child started, or the step ended before its last child")
	}
	step(t, m, ended(fourth[0].Start.RunID, "cleared", nil), t0)
	if stepState(m, "screen_each") != StepDone || stepState(m, "compare") != StepReady {
		t.Fatalf("after the last child: screen_each %s, compare %s", stepState(m, "screen_each"), stepState(m, "compare"))
	}
	want := `{"items":[` +
		`{"note":null,"outcome":"cleared","runId":"` + first[0].Start.RunID + `"},` +
		`{"note":null,"outcome":"flagged","runId":"` + first[1].Start.RunID + `"},` +
		`{"note":"Fine.","outcome":"cleared","runId":"` + third[0].Start.RunID + `"},` +
		`{"note":null,"outcome":"cleared","runId":"` + fourth[0].Start.RunID + `"}]}`
	if got := stepOutput(t, m, "screen_each"); got != want {
		t.Fatalf("output\n got %s\nwant %s", got, want)
	}
	if rec := m.Run().Data.Steps["screen_each"].Record; rec.By != "server" {
		t.Fatalf("recorded by %q", rec.By)
	}
	if m.View(t0).Steps[1].Children != nil {
		t.Fatal("a done step still shows its children")
	}
}

// An empty list completes the step at once; a list over the child limit,
// or no list at all, fails the run with a note.
func TestForEachEmptyOverLimitAndMissing(t *testing.T) {
	m := parentRun(t, rfpSrc, Limits{})
	submitCollect(t, m)
	if stepState(m, "screen_each") != StepDone || stepState(m, "compare") != StepReady || len(m.TakeNeeds()) != 0 {
		t.Fatalf("an empty list: screen_each %s, compare %s", stepState(m, "screen_each"), stepState(m, "compare"))
	}
	if got := stepOutput(t, m, "screen_each"); got != `{"items":[]}` {
		t.Fatalf("output %s", got)
	}

	m = parentRun(t, rfpSrc, Limits{Children: 3})
	submitCollect(t, m, "a", "b", "c", "d")
	if m.Run().Outcome != DecisionFailed || len(m.TakeNeeds()) != 0 {
		t.Fatalf("over the limit: outcome %q", m.Run().Outcome)
	}
	if note := *m.Run().Ended.Note; note != "for_each steps.collect.output.suppliers has 4 items, more than the 3 children a step may start" {
		t.Fatalf("note %q", note)
	}
}

// One child: its outcome routes through on_outcome, back to an earlier
// step as a rejection does; the next attempt starts a new child.
func TestOneChildRoutesOnItsOutcome(t *testing.T) {
	m := parentRun(t, rfpSrc, Limits{})
	submitCollect(t, m)
	step(t, m, Claim{StepID: "compare", Actor: agentA, LeaseID: "l1", Lease: lease}, t0)
	step(t, m, Submit{StepID: "compare", LeaseID: "l1", Actor: agentA, Submission: Submission{Output: Values{"supplier": "Acme"}, Summary: ptr("Acme.")}}, t0)
	legal := started(t, m)
	if len(legal) != 1 || legal[0].Start.Inputs["counterparty"] != "Acme" || legal[0].Binding.Process != "contract-review" {
		t.Fatalf("legal's child: %+v", legal)
	}
	note := "The liability cap is missing."
	step(t, m, ended(legal[0].Start.RunID, "rejected", &note), t0)
	if stepState(m, "compare") != StepReady || stepState(m, "legal") != StepNull {
		t.Fatalf("rejected: compare %s, legal %s", stepState(m, "compare"), stepState(m, "legal"))
	}
	if h := m.Run().Data.Steps["compare"].History; len(h) != 1 || h[0].Output["supplier"] != "Acme" {
		t.Fatalf("compare's earlier output is not in its history: %+v", m.Run().Data.Steps["compare"])
	}
	want := `{"note":"The liability cap is missing.","outcome":"rejected","runId":"` + legal[0].Start.RunID + `"}`
	if got := stepOutput(t, m, "legal"); got != want {
		t.Fatalf("legal's output %s", got)
	}
	step(t, m, Claim{StepID: "compare", Actor: agentA, LeaseID: "l2", Lease: lease}, t0)
	step(t, m, Submit{StepID: "compare", LeaseID: "l2", Actor: agentA, Submission: Submission{Output: Values{"supplier": "Birch"}, Summary: ptr("Birch.")}}, t0)
	again := started(t, m)
	if len(again) != 1 || again[0].Start.RunID == legal[0].Start.RunID || again[0].Start.Inputs["counterparty"] != "Birch" {
		t.Fatalf("the next attempt's child: %+v", again)
	}
	step(t, m, ended(again[0].Start.RunID, "signed", nil), t0)
	if m.Run().Outcome != "awarded" {
		t.Fatalf("outcome %q", m.Run().Outcome)
	}
	if h := m.Run().Data.Steps["legal"].History; len(h) != 1 || h[0].Output["outcome"] != "rejected" {
		t.Fatalf("legal's history: %+v", m.Run().Data.Steps["legal"])
	}
}

// A child that failed or was cancelled with no route fails the step and
// the run, naming the child and quoting its note; for_each goes to the
// route for failed before the one for cancelled.
func TestUnroutedFailureFailsTheParent(t *testing.T) {
	m := parentRun(t, rfpSrc, Limits{})
	submitCollect(t, m)
	step(t, m, Claim{StepID: "compare", Actor: agentA, LeaseID: "l1", Lease: lease}, t0)
	step(t, m, Submit{StepID: "compare", LeaseID: "l1", Actor: agentA, Submission: Submission{Output: Values{"supplier": "Acme"}, Summary: ptr("Acme.")}}, t0)
	c := started(t, m)[0]
	step(t, m, ended(c.Start.RunID, OutcomeCancelled, ptr("Withdrawn by the counterparty.")), t0)
	if stepState(m, "legal") != StepFailed || m.Run().Outcome != DecisionFailed {
		t.Fatalf("legal %s, outcome %q", stepState(m, "legal"), m.Run().Outcome)
	}
	want := "child run " + c.Start.RunID + ` ended cancelled: "Withdrawn by the counterparty."`
	if *m.Run().Ended.Note != want || *m.Run().Data.Steps["legal"].Note != want {
		t.Fatalf("note %q, want %q", *m.Run().Ended.Note, want)
	}

	for _, tc := range []struct {
		name     string
		outcomes []string
		want     string // the step routed to, or "" when the run fails
	}{
		{"all cleared", []string{"cleared", "flagged"}, "compare"},
		{"a failure is routed", []string{"cleared", DecisionFailed}, "review_failures"},
		{"failed before cancelled", []string{OutcomeCancelled, DecisionFailed}, "review_failures"},
		{"cancelled has no route", []string{"cleared", OutcomeCancelled}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := parentRun(t, rfpSrc, Limits{})
			submitCollect(t, m, "a", "b")
			for i, c := range started(t, m) {
				step(t, m, ended(c.Start.RunID, tc.outcomes[i], nil), t0)
			}
			switch {
			case tc.want == "" && (stepState(m, "screen_each") != StepFailed || m.Run().Outcome != DecisionFailed):
				t.Fatalf("screen_each %s, outcome %q", stepState(m, "screen_each"), m.Run().Outcome)
			case tc.want != "" && (stepState(m, "screen_each") != StepDone || !stepState(m, tc.want).Open()):
				t.Fatalf("screen_each %s, %s %s", stepState(m, "screen_each"), tc.want, stepState(m, tc.want))
			}
		})
	}
}

// Cancelling the parent cancels every running child, with the reason; a
// parent that ends otherwise cancels them too; a child not yet started is
// never started.
func TestEndingTheParentCancelsItsChildren(t *testing.T) {
	m := parentRun(t, rfpSrc, Limits{})
	submitCollect(t, m, "a", "b", "c")
	kids := started(t, m)
	step(t, m, Cancel{Actor: operator, Reason: "The RFP was withdrawn."}, t0)
	var got []ChildCancelNeeded
	for _, n := range m.TakeNeeds() {
		got = append(got, *n.(*ChildCancelNeeded))
	}
	want := []ChildCancelNeeded{
		{RunID: kids[0].Start.RunID, By: operator.ID, Note: "parent run r_1 cancelled: The RFP was withdrawn."},
		{RunID: kids[1].Start.RunID, By: operator.ID, Note: "parent run r_1 cancelled: The RFP was withdrawn."},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("cancelled %+v\nwant %+v", got, want)
	}
	// A child's end after its parent's is refused and changes nothing.
	if _, err := m.Apply(ended(kids[0].Start.RunID, OutcomeCancelled, nil), t0); err == nil {
		t.Fatal("a child's end was applied to an ended parent")
	}

	m = parentRun(t, raceSrc, Limits{})
	kid := started(t, m)[0]
	w := openItemFor(t, m, t0, "vet")
	step(t, m, Decide{WorkItemID: w.ID, Snapshot: w.Snapshot, Decision: DecisionFailed, Note: ptr("The RFP breaks policy."), Actor: member(w)}, t0)
	if m.Run().Outcome != DecisionFailed {
		t.Fatalf("outcome %q", m.Run().Outcome)
	}
	if n := m.TakeNeeds(); len(n) != 1 || *n[0].(*ChildCancelNeeded) != (ChildCancelNeeded{RunID: kid.Start.RunID, By: "server", Note: "parent run r_1 ended failed: The RFP breaks policy."}) {
		t.Fatalf("needs after the parent ended: %+v", n)
	}
}

// raceSrc runs a child in one branch while a person vets in the other.
const raceSrc = `name: race
description: One branch runs a child, the other is vetted.
inputs:
  rfpId: string
steps:
  - id: fork
    parallel: [screen, vet]
    next: awarded
  - id: screen
    process: screening
    inputs: { supplierName: inputs.rfpId, rfp: inputs.rfpId }
    next: join
  - id: vet
    person: buyers
    approve: Vet the RFP.
    next: join
  - id: awarded
    finish: awarded
`

// A child the host could not start fails the step and the run with a
// note; the other running children are cancelled.
func TestChildNotStartedFailsTheRun(t *testing.T) {
	m := parentRun(t, rfpSrc, Limits{})
	submitCollect(t, m, "a", "b")
	kids := started(t, m)
	step(t, m, kids[1].NotStarted("inputs.supplierName: required"), t0)
	if note := *m.Run().Ended.Note; m.Run().Outcome != DecisionFailed || note != "child 2 of screen_each cannot start: inputs.supplierName: required" {
		t.Fatalf("outcome %q, note %q", m.Run().Outcome, note)
	}
	if n := m.TakeNeeds(); len(n) != 1 || n[0].(*ChildCancelNeeded).RunID != kids[0].Start.RunID {
		t.Fatalf("needs: %+v", n)
	}
}

// A child's end that names no running child of this run, or comes twice,
// is refused and changes nothing; a validator's check of one makes no
// needs.
func TestChildEndedRefusals(t *testing.T) {
	m := parentRun(t, rfpSrc, Limits{})
	submitCollect(t, m, "a", "b", "c")
	kids := started(t, m)
	step(t, m, ended(kids[0].Start.RunID, "cleared", nil), t0)
	if len(m.TakeNeeds()) != 1 {
		t.Fatal("the third child did not start")
	}
	for _, c := range []Command{ended(kids[0].Start.RunID, "cleared", nil), ended("r_other", "cleared", nil), ChildNotStarted{RunID: kids[0].Start.RunID, Why: "x"}} {
		before := state(t, m)
		if _, err := m.Apply(c, t0); err == nil || err.(*Error).Code != CodeNotFound {
			t.Fatalf("%+v: %v", c, err)
		}
		if string(before) != string(state(t, m)) {
			t.Fatalf("%+v changed the run", c)
		}
	}
	if err := m.Check(ended(kids[1].Start.RunID, "cleared", nil), t0); err != nil || len(m.TakeNeeds()) != 0 {
		t.Fatalf("check: %v, or it made needs", err)
	}
}

// A run continued as new keeps its children: the state carries them, and
// an end that arrives afterwards joins as before.
func TestChildrenSurviveRestore(t *testing.T) {
	m := parentRun(t, rfpSrc, Limits{})
	submitCollect(t, m, "a", "b")
	kids := started(t, m)
	step(t, m, ended(kids[0].Start.RunID, "cleared", nil), t0)
	r, err := Restore(m.Process(), state(t, m))
	if err != nil {
		t.Fatal(err)
	}
	step(t, r, ended(kids[1].Start.RunID, "cleared", nil), t0)
	if stepState(r, "compare") != StepReady {
		t.Fatalf("after restore: compare %s", stepState(r, "compare"))
	}
}

// A parent whose child assigns steps to initiator needs one: an agent
// cannot start it.
func TestChildInitiatorNeedsAPersonStarter(t *testing.T) {
	p, bound, err := ParseAndBind([]byte(processDoc(rfpSrc)), &ParseOptions{Offer: childOffer(childCatalog(t))})
	if err != nil {
		t.Fatal(err)
	}
	bound[0].Initiator = true
	_, err = StartRun(Start{RunID: "r_1", Process: p, Version: 1, Inputs: Values{"rfpId": "x"}, Starter: agentA, Children: bound}, t0)
	if e, ok := err.(*Error); !ok || e.Code != CodeInvalid || !strings.Contains(e.Message, "initiator") {
		t.Fatalf("an agent started a parent whose child needs an initiator: %v", err)
	}
}
