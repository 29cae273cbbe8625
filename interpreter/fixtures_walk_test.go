package interpreter_test

import (
	"testing"
	"time"

	"github.com/baton-run/baton/internal/drive"
	"github.com/baton-run/baton/internal/testing/drivetest"
	"github.com/baton-run/baton/interpreter"
)

// machineVariants are the walks the machine takes: every variant, expiry
// included, since the machine's time is a parameter the walk moves.
var machineVariants = []drivetest.Variant{
	drivetest.Happy, drivetest.Rework, drivetest.Escalation,
	drivetest.Expiry, drivetest.EventsEarly, drivetest.TestMode,
}

// Every conformance fixture walks to a finish on the machine alone, in
// every variant. vendor-check is among them: its check step's submission
// asks for a check (CheckNeeded), the driver asks an evaluator that passes
// every question, as the workflow asks its activity, and applies the
// answers (Machine.Answer); the walk's end shows each verdict on the step.
func TestFixturesWalkOnTheMachine(t *testing.T) {
	names := drivetest.Fixtures(t, nil)
	procs := drivetest.Processes(t, names)
	drivetest.Run(t, drivetest.Layer{
		New: func(t *testing.T) drive.Driver {
			return drive.NewMachine(procs, &drive.MachineOptions{Evaluator: drivetest.Passing(procs)})
		},
		Fixtures:   names,
		Variants:   machineVariants,
		CheckModel: drivetest.PassingModel,
		After: func(t *testing.T, w drivetest.Walked) {
			if e := w.Driver.(*drive.Machine).Effects(); w.Variant == drivetest.TestMode && len(e) != 0 {
				t.Fatalf("a test-mode run asked for effects: %+v", e)
			}
		},
	})
}

// A run's due times pass while people have work: a live run asks for
// overdue notifications, a test-mode run for none.
func TestTestModeRunsNotifyNobody(t *testing.T) {
	p := drivetest.Fixture(t, "major-incident")
	for _, mode := range []string{interpreter.ModeLive, interpreter.ModeTest} {
		t.Run(mode, func(t *testing.T) {
			d := drive.NewMachine(drive.Processes{p.Name: p}, nil)
			check := drivetest.Checker(p, mode)
			w := drive.Walk{Process: p, Mode: mode, Check: func(what string, v any) error {
				if what == "submit" {
					// People take two hours over every work item.
					if err := d.Advance(t.Context(), d.Now().Add(2*time.Hour)); err != nil {
						return err
					}
				}
				return check(what, v)
			}}
			end, err := w.Run(t.Context(), d)
			if err != nil {
				t.Fatal(err)
			}
			drivetest.WantEndedAtFinish(t, p, end)
			effects := d.Effects()
			switch {
			case mode == interpreter.ModeTest && len(effects) != 0:
				t.Fatalf("a test-mode run asked for effects: %+v", effects)
			case mode == interpreter.ModeLive && len(effects) == 0:
				t.Fatal("a live run whose due times passed asked for no overdue notification")
			}
		})
	}
}
