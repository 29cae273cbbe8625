package drivetest

import (
	"fmt"

	"github.com/baton-run/baton/internal/drive"
	"github.com/baton-run/baton/internal/testing/spectest"
	"github.com/baton-run/baton/interpreter"
)

// Checker returns a drive.Walk Check for one walk of p: it validates every
// result the walk gets against the official schemas, and checks that each
// says the run's mode: views (and each of their work items), claims,
// renewals, event results and get_work lists. The walk's run is the one
// of the first view it sees.
func Checker(p *interpreter.Process, mode string) func(what string, v any) error {
	// A work item carries mode only in a test run.
	itemMode := ""
	if mode == interpreter.ModeTest {
		itemMode = interpreter.ModeTest
	}
	runID := ""
	return func(what string, v any) error {
		var err error
		switch r := v.(type) {
		case *interpreter.View:
			if runID == "" {
				runID = r.Run.ID
			}
			err = checkView(p, mode, itemMode, r)
		case *interpreter.ClaimWire:
			err = spectest.ValidateErr("tools/claim.result.json", r)
			if err == nil && r.Mode != mode {
				err = fmt.Errorf("the claim of %s says mode %q, want %q", r.Step.ID, r.Mode, mode)
			}
		case *interpreter.RenewWire:
			err = spectest.ValidateErr("tools/renew.result.json", r)
		case *interpreter.EventResult:
			err = spectest.ValidateErr("tools/send_event.result.json", r)
		case *drive.WorkList:
			err = checkWork(runID, mode, itemMode, r)
		default:
			err = fmt.Errorf("drivetest: no check for a %T", v)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		return nil
	}
}

func checkView(p *interpreter.Process, mode, itemMode string, v *interpreter.View) error {
	if err := spectest.ValidateErr("run-view.json", v); err != nil {
		return err
	}
	if v.Run.Process != p.Name || v.Run.Mode != mode {
		return fmt.Errorf("the view is of a %s run of %s, want a %s run of %s", v.Run.Mode, v.Run.Process, mode, p.Name)
	}
	for _, w := range v.WorkItems {
		if err := checkItem(itemMode, w); err != nil {
			return err
		}
	}
	return nil
}

func checkItem(itemMode string, w interpreter.WorkItem) error {
	if err := spectest.ValidateErr("work-item.json", w); err != nil {
		return err
	}
	if w.Mode != itemMode {
		return fmt.Errorf("work item %s (%s) says mode %q, want %q", w.ID, w.StepID, w.Mode, itemMode)
	}
	return nil
}

// checkWork checks a get_work list. Other walks may share the server, so
// only the items of this walk's run must say its mode; every item must say
// its own.
func checkWork(runID, mode, itemMode string, l *drive.WorkList) error {
	var items any = l.Agent
	if l.Agent == nil {
		items = l.Person
		if l.Person == nil {
			items = []any{}
		}
	}
	if err := spectest.ValidateErr("tools/get_work.result.json", map[string]any{"items": items, "nextCursor": nil}); err != nil {
		return err
	}
	for _, it := range l.Agent {
		if it.RunID == runID && it.Mode != mode {
			return fmt.Errorf("get_work lists step %s with mode %q, want %q", it.StepID, it.Mode, mode)
		}
	}
	for _, it := range l.Person {
		want := ""
		if it.Mode == interpreter.ModeTest {
			want = interpreter.ModeTest
		}
		if it.WorkItem.Mode != want || (it.RunID == runID && (it.Mode != mode || it.WorkItem.Mode != itemMode)) {
			return fmt.Errorf("get_work lists work item %s of a %s run with mode %q; this walk's run is %s", it.WorkItem.ID, it.Mode, it.WorkItem.Mode, mode)
		}
	}
	return nil
}
