package drivetest

import (
	"errors"
	"fmt"
	"testing"

	"github.com/baton-run/baton/internal/drive"
	"github.com/baton-run/baton/internal/testing/spectest"
	"github.com/baton-run/baton/interpreter"
)

// EveryProfile is an offer of every profile, under which every fixture
// parses.
func EveryProfile() *interpreter.Offer {
	o := interpreter.DefaultOffer()
	o.Profiles = []string{interpreter.ProfileParallel, interpreter.ProfileCheck}
	return &o
}

// Fixture parses the named conformance fixture with every profile offered.
func Fixture(t testing.TB, name string) *interpreter.Process {
	t.Helper()
	p, err := interpreter.Parse(spectest.Fixture(t, name), &interpreter.ParseOptions{Folder: name, Offer: EveryProfile()})
	if err != nil {
		t.Fatalf("parse fixture %s: %v", name, err)
	}
	return p
}

// Fixtures returns the conformance fixtures that parse under offer, sorted:
// the ones a server offering it runs. A nil offer offers every profile.
func Fixtures(t testing.TB, offer *interpreter.Offer) []string {
	t.Helper()
	if offer == nil {
		offer = EveryProfile()
	}
	var names []string
	for _, name := range spectest.Fixtures(t) {
		_, err := interpreter.Parse(spectest.Fixture(t, name), &interpreter.ParseOptions{Folder: name, Offer: offer})
		var pe *interpreter.ProcessError
		switch {
		case err == nil:
			names = append(names, name)
		case !errors.As(err, &pe):
			t.Fatalf("parse fixture %s: %v", name, err)
		}
	}
	return names
}

// Processes parses the named fixtures for drivers below the gateway.
func Processes(t testing.TB, names []string) drive.Processes {
	t.Helper()
	ps := drive.Processes{}
	for _, name := range names {
		p := Fixture(t, name)
		ps[p.Name] = p
	}
	return ps
}

// EndedAtFinish checks that a run ended at one of its finishes, by the
// server with no note, with every step settled and no work left.
func EndedAtFinish(p *interpreter.Process, v *interpreter.View) error {
	if v.Run.State != string(interpreter.RunEnded) || v.Run.Outcome == nil || !isFinish(p, *v.Run.Outcome) {
		return fmt.Errorf("%s ended %s with outcome %v, want a finish outcome; steps: %s", p.Name, v.Run.State, v.Run.Outcome, v.StepStates())
	}
	if v.Run.Ended == nil || v.Run.Ended.By != "server" || v.Run.Ended.Note != nil {
		return fmt.Errorf("ended = %+v, want by server with a null note", v.Run.Ended)
	}
	for _, s := range v.Steps {
		if s.State != nil && interpreter.StepState(*s.State).Open() {
			return fmt.Errorf("step %s still %s after the end", s.ID, *s.State)
		}
	}
	if len(v.WorkItems) != 0 {
		return fmt.Errorf("work items remain after the end: %+v", v.WorkItems)
	}
	return nil
}

// WantEndedAtFinish fails the test unless the run ended at a finish (see
// EndedAtFinish).
func WantEndedAtFinish(t testing.TB, p *interpreter.Process, v *interpreter.View) {
	t.Helper()
	if err := EndedAtFinish(p, v); err != nil {
		t.Fatal(err)
	}
}

func isFinish(p *interpreter.Process, outcome string) bool {
	for _, s := range p.Steps {
		if s.Kind == interpreter.KindFinish && s.Text == outcome {
			return true
		}
	}
	return false
}
