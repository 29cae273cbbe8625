package interpreter

import (
	"fmt"
	"testing"
	"time"

	"github.com/baton-run/baton/internal/spectest"
)

// variant chooses which detours the player takes on the way to a finish.
type variant struct {
	rejectOnce   bool // reject each approval with on_reject once
	escalateOnce bool // escalate each agent step once, then have it returned
	expireOnce   bool // let each agent step's first lease run out
	eventsEarly  bool // send wait_for events before their step is ready
}

// play drives a run of p to its end as agents, people and systems would,
// validating every result against the official schemas. It returns the
// machine and the final time.
func play(t *testing.T, p *Process, mode string, v variant) (*Machine, time.Time) {
	t.Helper()
	inputs := sampleValues(p.Inputs)
	m := start(t, p, inputs, starter, mode)
	now := t0
	rejected := map[string]bool{}
	escalated := map[string]bool{}
	expired := map[string]bool{}
	if v.eventsEarly {
		for _, s := range p.Steps {
			if s.Kind == KindWaitFor {
				res := must(t, m, SendEvent{Name: s.Text, Data: map[string]any{"early": true}, Actor: agentB}, now).(*EventResult)
				if res.ConsumedBy != nil && stepState(m, s.ID) != StepDone {
					t.Fatalf("event consumed by %s but step is %s", *res.ConsumedBy, stepState(m, s.ID))
				}
			}
		}
	}
	for round := 0; round < 400 && !m.Run().State.Over(); round++ {
		now = now.Add(time.Second)
		acted := false
		work := m.AgentWork(now)
		spectest.Validate(t, "tools/get_work.result.json", map[string]any{"items": work, "nextCursor": nil})
		for _, w := range work {
			s := p.Step(w.StepID)
			leaseID := fmt.Sprintf("l_%d_%s", round, s.ID)
			holder := agentA
			c := claim(t, m, s.ID, holder, leaseID, now)
			if c.Mode != mode {
				t.Fatalf("claim mode %s, want %s", c.Mode, mode)
			}
			if escalated[s.ID] && (c.Handoff == nil || c.Handoff.Returned == nil) {
				t.Fatalf("%s: claim after a return has handoff %+v, want returned", s.ID, c.Handoff)
			}
			if v.expireOnce && !expired[s.ID] {
				expired[s.ID] = true
				must(t, m, Renew{StepID: s.ID, LeaseID: leaseID, NewLeaseID: leaseID + "r", Lease: lease, Progress: "half done"}, now)
				now = now.Add(lease + time.Second)
				m.Tick(now)
				c2 := claim(t, m, s.ID, agentB, leaseID+"b", now)
				if c2.Handoff == nil || c2.Handoff.Progress != "half done" {
					t.Fatalf("%s: handoff after expiry = %+v, want progress", s.ID, c2.Handoff)
				}
				leaseID += "b"
				holder = agentB
			}
			if v.escalateOnce && !escalated[s.ID] {
				escalated[s.ID] = true
				must(t, m, Escalate{StepID: s.ID, LeaseID: leaseID, Actor: holder, Note: "Cannot reach the system."}, now)
				acted = true
				continue
			}
			submitChecked(t, m, Submit{StepID: s.ID, LeaseID: leaseID, Actor: holder, Submission: sampleSubmission(s)}, now, passing)
			acted = true
		}
		for _, w := range m.WorkItems(now) {
			spectest.Validate(t, "work-item.json", w)
			if mode == ModeTest && w.Mode != ModeTest {
				t.Fatalf("work item %s in a test run lacks mode test", w.ID)
			}
			s := p.Step(w.StepID)
			who := member(w)
			spectest.Validate(t, "tools/get_work.result.json", map[string]any{"items": m.PersonWork(now, who), "nextCursor": nil})
			d := Decide{WorkItemID: w.ID, Snapshot: w.Snapshot, Actor: who}
			switch {
			case w.Escalation != nil && v.escalateOnce && s.Kind == KindAgent && stepHandoffReturned(m, s.ID) == nil:
				d.Decision, d.Note = DecisionReturned, ptr("Try the other endpoint.")
			case w.Escalation != nil || s.Kind == KindTask:
				d.Decision, d.Submission = DecisionCompleted, sampleSubmission(s)
			case v.rejectOnce && s.OnReject != "" && !rejected[s.ID]:
				rejected[s.ID] = true
				d.Decision, d.Note = DecisionRejected, ptr("Needs another pass.")
			default:
				d.Decision = DecisionApproved
			}
			must(t, m, d, now)
			acted = true
			break // snapshots change with every decision; read again
		}
		for i, sr := range m.Run().Steps {
			s := p.Steps[i]
			if s.Kind == KindWaitFor && sr.State == StepWaiting {
				res := must(t, m, SendEvent{Name: s.Text, Data: map[string]any{"paid": true}, Actor: agentB}, now).(*EventResult)
				if res.ConsumedBy == nil || *res.ConsumedBy != s.ID {
					t.Fatalf("event %s not consumed by %s", s.Text, s.ID)
				}
				acted = true
			}
		}
		if acted || m.Run().State.Over() {
			continue
		}
		d, ok := m.NextDeadline()
		if !ok {
			t.Fatalf("%s: stuck with nothing to do; view: %+v", p.Name, m.View(now).Steps)
		}
		if d.After(now) {
			now = d
		}
		m.Tick(now)
	}
	if !m.Run().State.Over() {
		t.Fatalf("%s: run did not end", p.Name)
	}
	checkView(t, m.View(now))
	return m, now
}

func stepHandoffReturned(m *Machine, id string) *Returned {
	_, sr := m.stepRun(id)
	if sr.Handoff == nil {
		return nil
	}
	return sr.Handoff.Returned
}

func finishOutcomes(p *Process) map[string]bool {
	out := map[string]bool{}
	for _, s := range p.Steps {
		if s.Kind == KindFinish {
			out[s.Text] = true
		}
	}
	return out
}

func TestFixturesRunToFinish(t *testing.T) {
	variants := []struct {
		name string
		v    variant
	}{
		{"happy", variant{}},
		{"rework", variant{rejectOnce: true}},
		{"escalation", variant{escalateOnce: true}},
		{"expiry", variant{expireOnce: true}},
		{"events-early", variant{eventsEarly: true}},
	}
	for _, name := range spectest.Fixtures(t) {
		p := loadFixture(t, name)
		for _, tc := range variants {
			t.Run(name+"/"+tc.name, func(t *testing.T) {
				m, now := play(t, p, ModeLive, tc.v)
				r := m.Run()
				if r.State != RunEnded || !finishOutcomes(p)[r.Outcome] {
					t.Fatalf("run ended %s with outcome %q, want a finish outcome", r.State, r.Outcome)
				}
				if r.Ended == nil || r.Ended.By != "server" || r.Ended.Note != nil {
					t.Fatalf("ended = %+v, want by server with null note", r.Ended)
				}
				for _, sv := range m.View(now).Steps {
					if sv.State != nil && (*sv.State == "ready" || *sv.State == "claimed" || *sv.State == "waiting") {
						t.Fatalf("step %s still %s after the run ended", sv.ID, *sv.State)
					}
				}
				if len(m.WorkItems(now)) != 0 {
					t.Fatalf("work items remain after the end")
				}
				if tc.v.rejectOnce {
					for _, s := range p.Steps {
						if s.Kind == KindApprove && s.OnReject != "" {
							d := r.Data.Steps[s.ID]
							if d == nil || d.Record == nil || d.Decision != DecisionApproved || len(d.History) == 0 || d.History[0].Decision != DecisionRejected {
								t.Fatalf("approval %s: want approved now and rejected in history, got %+v", s.ID, d)
							}
						}
					}
				}
			})
		}
	}
}

func TestTestModeRunsNotifyNobody(t *testing.T) {
	p := loadFixture(t, "major-incident")
	m, _ := play(t, p, ModeTest, variant{})
	if e := m.TakeEffects(); len(e) != 0 {
		t.Fatalf("test-mode run asked for effects: %+v", e)
	}
}
