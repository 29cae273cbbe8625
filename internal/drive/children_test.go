package drive_test

import (
	"testing"

	"github.com/baton-run/baton/internal/drive"
	"github.com/baton-run/baton/interpreter"
)

const screeningSrc = `---
name: screening
description: Screen one supplier.
inputs:
  supplierName: string
steps:
  - id: screen
    agent: Screen the supplier.
    output: { cleared: boolean }
  - id: ok
    finish: cleared
---
`

const rfpSrc = `---
name: rfp
description: Run an RFP.
steps:
  - id: collect
    agent: List the suppliers.
    output: { suppliers: { type: list, items: object } }
  - id: screen_each
    process: screening
    for_each: steps.collect.output.suppliers
    inputs: { supplierName: item.name }
    next: compare
  - id: compare
    agent: Compare them.
  - id: done
    finish: awarded
---
`

func family(t *testing.T) drive.Processes {
	t.Helper()
	o := interpreter.DefaultOffer()
	o.Profiles = append(o.Profiles, interpreter.ProfileSubprocess)
	procs := drive.Processes{}
	for _, src := range []string{screeningSrc, rfpSrc} {
		p, err := interpreter.Parse([]byte(src), &interpreter.ParseOptions{Offer: &o})
		if err != nil {
			t.Fatal(err)
		}
		procs[p.Name] = p
	}
	return procs
}

// The driver runs a process step's children as runs of its own: their
// agent steps are work like any other, and the parent joins when the last
// ends; cancelling a parent cancels the children it waits for.
func TestMachineRunsChildren(t *testing.T) {
	ctx := t.Context()
	agent := interpreter.Actor{ID: "a_1", Kind: interpreter.ActorAgent}
	starter := interpreter.Actor{ID: "mira@example.com", Kind: interpreter.ActorPerson}
	d := drive.NewMachine(family(t), nil)
	work := func(runID, step string, out map[string]any) *interpreter.View {
		t.Helper()
		c, err := d.Claim(ctx, agent, runID, step)
		if err != nil {
			t.Fatal(err)
		}
		sum := "Done."
		v, err := d.Submit(ctx, agent, c.Token, drive.Work{Output: out, Summary: &sum})
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	v, err := d.Start(ctx, starter, "rfp", nil, interpreter.ModeLive)
	if err != nil {
		t.Fatal(err)
	}
	parent := v.Run.ID
	suppliers := map[string]any{"suppliers": []any{map[string]any{"name": "Acme"}, map[string]any{"name": "Birch"}}}
	v = work(parent, "collect", suppliers)
	kids := v.Steps[1].Children
	if kids == nil || kids.Running != 2 {
		t.Fatalf("children %+v", kids)
	}
	list, err := d.GetWork(ctx, agent, "screening")
	if err != nil || len(list.Agent) != 2 {
		t.Fatalf("the children's work: %+v, %v", list, err)
	}
	for _, id := range kids.RunningIDs {
		cv, err := d.GetRun(ctx, agent, id)
		if err != nil || cv.Run.StartedBy != starter.ID {
			t.Fatalf("child %s: %+v, %v", id, cv, err)
		}
		work(id, "screen", map[string]any{"cleared": true})
	}
	v, err = d.GetRun(ctx, agent, parent)
	if err != nil {
		t.Fatal(err)
	}
	if *v.Steps[1].State != "done" || *v.Steps[2].State != "ready" {
		t.Fatalf("after the children: %s", v.StepStates())
	}

	v, _ = d.Start(ctx, starter, "rfp", nil, interpreter.ModeLive)
	v = work(v.Run.ID, "collect", suppliers)
	kids = v.Steps[1].Children
	operator := interpreter.Actor{ID: "u_ops", Kind: interpreter.ActorOperator}
	if _, err := d.Cancel(ctx, operator, v.Run.ID, "Withdrawn."); err != nil {
		t.Fatal(err)
	}
	for _, id := range kids.RunningIDs {
		cv, _ := d.GetRun(ctx, agent, id)
		if cv.Run.State != "cancelled" || *cv.Run.Ended.Note != "parent run "+v.Run.ID+" cancelled: Withdrawn." {
			t.Fatalf("child %s: %+v", id, cv.Run)
		}
	}
}
