package tests

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/baton-run/baton/interpreter"
)

// coreFixtures are the conformance fixtures this server runs: the ten core
// ones and major-incident (parallel-1). vendor-check needs check-1.
var coreFixtures = []string{
	"blog-publication", "contract-review", "customer-offboarding", "employee-onboarding",
	"expense-reimbursement", "incident-postmortem", "invoice-approval", "major-incident",
	"major-incident-response", "supplier-rfp", "support-escalation",
}

// Conformance fixtures: every fixture publishes and walks to a finish over
// MCP, with agents and people playing every step: straight through, with
// each approval that has on_reject rejected once (§3.1), and with each agent
// step escalated once and returned by an operator (§3.3–3.4).
func TestFixtures_WalkToFinish(t *testing.T) {
	b := start(t, options{})
	for _, name := range coreFixtures {
		b.publishFixture(name)
	}
	var procs struct {
		Items []struct {
			Name string `json:"name"`
		} `json:"items"`
	}
	b.connect(agentID).ok("list_processes", map[string]any{}, &procs)
	if len(procs.Items) != len(coreFixtures) {
		t.Fatalf("list_processes lists %d processes, want %d", len(procs.Items), len(coreFixtures))
	}
	variants := []struct {
		name                     string
		rejectOnce, escalateOnce bool
	}{{"happy", false, false}, {"rework", true, false}, {"escalation", false, true}}
	for _, name := range coreFixtures {
		for _, vr := range variants {
			t.Run(name+"/"+vr.name, func(t *testing.T) {
				t.Parallel()
				p := fixtureProcess(t, name)
				pl := newPlayer(t, b, p, "")
				pl.rejectOnce, pl.escalateOnce = vr.rejectOnce, vr.escalateOnce
				pl.start(nil)
				end := pl.play()
				wantEndedAtFinish(t, p, end)
				for id := range pl.rejected {
					d := end.Data.Steps[id]
					if d == nil || d.Record == nil || d.Decision != "approved" || len(d.History) == 0 || d.History[0].Decision != "rejected" {
						t.Fatalf("approval %s: want approved now and rejected in history, got %+v", id, d)
					}
				}
				if vr.rejectOnce && len(pl.rejected) == 0 && hasOnReject(p) {
					t.Fatal("no approval was rejected")
				}
				for id := range pl.escalated {
					if d := end.Data.Steps[id]; d == nil || d.Record == nil || d.By != agentID.ID {
						t.Fatalf("agent step %s after a return: %+v", id, d)
					}
				}
			})
		}
	}
}

func hasOnReject(p *interpreter.Process) bool {
	for _, s := range p.Steps {
		if s.OnReject != "" {
			return true
		}
	}
	return false
}

// Conformance fixtures: vendor-check uses the check profile, which this
// server does not offer; publication refuses it and names check-1.
func TestFixtures_VendorCheckRefusedWithoutCheck1(t *testing.T) {
	b := start(t, options{})
	var d struct {
		Profiles []string `json:"profiles"`
	}
	agent := b.connect(agentID)
	agent.ok("describe", nil, &d)
	for _, p := range d.Profiles {
		if p == interpreter.ProfileCheck {
			t.Skip("this server offers check-1")
		}
	}
	_, _, err := b.registry.ImportAndPublish(context.Background(), b.fixtureDir("vendor-check"), "u_admin", nil)
	var pe *interpreter.ProcessError
	if !errors.As(err, &pe) || !strings.Contains(err.Error(), "check-1") {
		t.Fatalf("vendor-check publication: %v, want a refusal naming check-1", err)
	}
	var procs struct{ Items []any }
	agent.ok("list_processes", map[string]any{}, &procs)
	if len(procs.Items) != 0 {
		t.Fatalf("vendor-check was listed: %+v", procs.Items)
	}
}

// §3.3 test mode: a fixture run started with mode test says so in every
// get_work item, claim and work item (the player asserts it at each call),
// including the parallel fork's several items at once.
func TestSection3_3_TestModeEverywhere(t *testing.T) {
	b := start(t, options{})
	for _, name := range []string{"major-incident", "expense-reimbursement"} {
		b.publishFixture(name)
	}
	for _, name := range []string{"major-incident", "expense-reimbursement"} {
		t.Run(name, func(t *testing.T) {
			p := fixtureProcess(t, name)
			pl := newPlayer(t, b, p, interpreter.ModeTest)
			v := pl.start(nil)
			if v.Run.Mode != interpreter.ModeTest {
				t.Fatalf("run mode %q", v.Run.Mode)
			}
			end := pl.play()
			wantEndedAtFinish(t, p, end)
			if end.Run.Mode != interpreter.ModeTest {
				t.Fatalf("ended run mode %q", end.Run.Mode)
			}
		})
	}
}
