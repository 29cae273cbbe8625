package interpreter

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/baton-run/baton/internal/testing/spectest"
)

var t0 = time.Date(2026, 10, 6, 9, 0, 0, 0, time.UTC)

const lease = 10 * time.Minute

var (
	agentA   = Actor{ID: "a_screener", Kind: ActorAgent}
	agentB   = Actor{ID: "a_other", Kind: ActorAgent}
	operator = Actor{ID: "u_ops", Kind: ActorOperator}
	outsider = Actor{ID: "nobody@example.com", Kind: ActorPerson, Groups: []string{"g_elsewhere"}}
	starter  = Actor{ID: "mira@example.com", Kind: ActorPerson}
)

// offerAll offers every profile, so every fixture parses.
func offerAll() *Offer {
	o := DefaultOffer()
	o.Profiles = []string{ProfileParallel, ProfileCheck}
	return &o
}

func loadFixture(t testing.TB, name string) *Process {
	t.Helper()
	p, err := Parse(spectest.Fixture(t, name), &ParseOptions{Folder: name, Offer: offerAll()})
	if err != nil {
		t.Fatalf("parse %s: %v", name, err)
	}
	return p
}

func loadSource(t testing.TB, src string) *Process {
	t.Helper()
	p, err := Parse([]byte(src), &ParseOptions{Offer: offerAll()})
	if err != nil {
		t.Fatalf("parse: %v\n%s", err, src)
	}
	return p
}

// sampleSubmission satisfies every rule of step s.
func sampleSubmission(s *Step) Submission {
	summary := "Did the work and checked it."
	sub := Submission{Output: Samples(s.Output), Summary: &summary, Files: map[string]FileCheck{}}
	for i, k := range s.Evidence {
		ref := fmt.Sprintf("f_%d", i)
		if k == "link" {
			ref = "https://example.com/doc"
		} else {
			sub.Files[ref] = FileCheck{Found: true, Matches: true, SHA256: "4f1c00"}
		}
		sub.Evidence = append(sub.Evidence, Evidence{Kind: k, Ref: ref})
	}
	if s.NextList {
		next, reason := s.Next[0].To, "It fits."
		sub.Next, sub.Reason = &next, &reason
	}
	return sub
}

func start(t testing.TB, p *Process, inputs map[string]any, by Actor, mode string) *Machine {
	t.Helper()
	m, err := StartRun(Start{RunID: "r_1", Process: p, Version: 1, Inputs: inputs, Mode: mode, Starter: by}, t0)
	if err != nil {
		t.Fatalf("start %s: %v", p.Name, err)
	}
	checkView(t, m.View(t0))
	return m
}

func state(t testing.TB, m *Machine) []byte {
	t.Helper()
	b, err := m.State()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// must applies a command that has to succeed and checks its result's shape.
func must(t testing.TB, m *Machine, cmd Command, now time.Time) any {
	t.Helper()
	if err := m.Check(cmd, now); err != nil {
		t.Fatalf("check %T: %v", cmd, err)
	}
	res, err := m.Apply(cmd, now)
	if err != nil {
		t.Fatalf("apply %T: %v", cmd, err)
	}
	switch r := res.(type) {
	case *View:
		checkView(t, r)
	case *ClaimResult:
		spectest.Validate(t, "tools/claim.result.json", r.Wire("tok"))
	case *RenewResult:
		spectest.Validate(t, "tools/renew.result.json", r.Wire("tok"))
	case *EventResult:
		spectest.Validate(t, "tools/send_event.result.json", r)
	}
	return res
}

// refused applies a command that has to be refused with code and exactly
// the given issues, and checks that it changed nothing.
func refused(t testing.TB, m *Machine, cmd Command, now time.Time, code Code, issues ...string) *Error {
	t.Helper()
	before := state(t, m)
	beforeView := viewJSON(t, m, now)
	checkErr := m.Check(cmd, now)
	_, err := m.Apply(cmd, now)
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("%T: want %s refusal, got %v", cmd, code, err)
	}
	if checkErr == nil || checkErr.Error() != err.Error() {
		t.Errorf("%T: Check said %v, Apply said %v", cmd, checkErr, err)
	}
	if e.Code != code {
		t.Errorf("%T: code %s, want %s (%v)", cmd, e.Code, code, e)
	}
	if issues != nil && !reflect.DeepEqual(e.Issues, issues) {
		t.Errorf("%T: issues\n got %q\nwant %q", cmd, e.Issues, issues)
	}
	if !bytes.Equal(before, state(t, m)) {
		t.Errorf("%T: refused command changed the state", cmd)
	}
	if after := viewJSON(t, m, now); !bytes.Equal(beforeView, after) {
		t.Errorf("%T: refused command changed the view:\n%s\n%s", cmd, beforeView, after)
	}
	spectest.Validate(t, "tool-error.json", e)
	return e
}

// viewJSON is the run view at now as get_run would print it.
func viewJSON(t testing.TB, m *Machine, now time.Time) []byte {
	t.Helper()
	b, err := json.Marshal(m.View(now))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func checkView(t testing.TB, v *View) {
	t.Helper()
	spectest.Validate(t, "run-view.json", v)
}

func view(m *Machine, now time.Time) *View { return m.View(now) }

func stepState(m *Machine, id string) StepState {
	_, sr := m.stepRun(id)
	return sr.State
}

func openItemFor(t testing.TB, m *Machine, now time.Time, stepID string) WorkItem {
	t.Helper()
	for _, w := range m.WorkItems(now) {
		if w.StepID == stepID {
			return w
		}
	}
	t.Fatalf("no open work item for %s; steps: %+v", stepID, m.View(now).Steps)
	return WorkItem{}
}

// member returns a person in the item's assignment.
func member(w WorkItem) Actor {
	if w.AssignedTo.Person != "" {
		return Actor{ID: w.AssignedTo.Person, Kind: ActorPerson}
	}
	if w.Kind == "agent" {
		return operator
	}
	return Actor{ID: "member@example.com", Kind: ActorPerson, Groups: []string{w.AssignedTo.Group}}
}

func ptr(s string) *string { return &s }

func claim(t testing.TB, m *Machine, stepID string, who Actor, leaseID string, now time.Time) *ClaimResult {
	t.Helper()
	return must(t, m, Claim{StepID: stepID, Actor: who, LeaseID: leaseID, Lease: lease}, now).(*ClaimResult)
}
