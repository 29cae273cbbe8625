package interpreter

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand"
	"testing"
	"time"

	"github.com/baton-run/baton/internal/testing/spectest"
)

// TestRandomCommands applies long random command sequences to every fixture
// and checks the machine's invariants after each one.
func TestRandomCommands(t *testing.T) {
	seeds := 6
	steps := 300
	if testing.Short() {
		seeds, steps = 2, 100
	}
	for _, name := range spectest.Fixtures(t) {
		p := loadFixture(t, name)
		for seed := 1; seed <= seeds; seed++ {
			t.Run(fmt.Sprintf("%s/%d", name, seed), func(t *testing.T) {
				rng := rand.New(rand.NewSource(int64(seed)))
				m := start(t, p, Samples(p.Inputs), starter, ModeLive)
				now := t0
				var leases []leaseRef
				for i := 0; i < steps; i++ {
					now = now.Add(time.Duration(rng.Intn(90)) * time.Second)
					cmd, desc := randomCommand(rng, p, m, now, &leases, i)
					if cmd == nil {
						m.Tick(now)
						checkInvariants(t, m, now, "tick")
						continue
					}
					switch cmd.(type) {
					case Renew, SendEvent:
						// Let time act first, so what follows is the
						// command's doing alone.
						m.Tick(now)
					}
					before := state(t, m)
					beforeView := viewJSON(t, m, now)
					wasOver := m.Run().State.Over()
					res, err := m.Apply(cmd, now)
					if err != nil {
						var e *Error
						if !errors.As(err, &e) {
							t.Fatalf("%s: untyped error %v", desc, err)
						}
						if !bytes.Equal(before, state(t, m)) {
							t.Fatalf("%s: refused (%v) but the state changed", desc, err)
						}
						if !bytes.Equal(beforeView, viewJSON(t, m, now)) {
							t.Fatalf("%s: refused (%v) but the view changed", desc, err)
						}
						if sub, ok := cmd.(Submit); ok && e.Code == CodeNotAccepted {
							// The host keeps the issues for the next attempt;
							// that changes nothing get_run shows either.
							if _, err := m.Apply(NoteRefusal{StepID: sub.StepID, LeaseID: sub.LeaseID, Issues: e.Issues}, now); err != nil {
								t.Fatalf("%s: noting the refusal: %v", desc, err)
							}
							if !bytes.Equal(beforeView, viewJSON(t, m, now)) {
								t.Fatalf("%s: noting the refusal changed the view", desc)
							}
						}
						if wasOver && e.Code != CodeInvalid && !(e.Code == CodeConflict && len(e.Issues) == 1 && e.Issues[0] == IssueRunEnded) {
							t.Fatalf("%s on an ended run: %v, want run_ended", desc, err)
						}
					} else if wasOver {
						t.Fatalf("%s was accepted on an ended run", desc)
					} else {
						// A renew or a held event changes nothing get_run
						// shows, run.updatedAt included (SPEC-DECISIONS §30).
						quiet := false
						switch cmd.(type) {
						case Renew:
							quiet = true
						case SendEvent:
							quiet = res.(*EventResult).ConsumedBy == nil
						}
						if quiet && !bytes.Equal(beforeView, viewJSON(t, m, now)) {
							t.Fatalf("%s changed the view:\n%s\n%s", desc, beforeView, viewJSON(t, m, now))
						}
					}
					checkInvariants(t, m, now, desc)
					if i%25 == 0 {
						checkView(t, m.View(now))
					}
				}
			})
		}
	}
}

type leaseRef struct{ step, id string }

func randomCommand(rng *rand.Rand, p *Process, m *Machine, now time.Time, leases *[]leaseRef, i int) (Command, string) {
	agents := []Actor{agentA, agentB}
	pick := func(n int) int { return rng.Intn(n) }
	switch pick(10) {
	case 0, 1:
		s := p.Steps[pick(len(p.Steps))]
		if w := m.AgentWork(now); len(w) > 0 && pick(3) > 0 {
			s = p.Step(w[pick(len(w))].StepID)
		}
		id := fmt.Sprintf("l%d", i)
		*leases = append(*leases, leaseRef{s.ID, id})
		return Claim{StepID: s.ID, Actor: agents[pick(2)], LeaseID: id, Lease: time.Duration(1+pick(20)) * time.Minute}, "claim " + s.ID
	case 2, 3:
		if len(*leases) == 0 {
			return nil, ""
		}
		l := (*leases)[pick(len(*leases))]
		sub := sampleSubmission(p.Step(l.step))
		if pick(4) == 0 {
			sub.Output = map[string]any{"bogus": 1}
		}
		return Submit{StepID: l.step, LeaseID: l.id, Actor: agentA, Submission: sub}, "submit " + l.step
	case 4:
		if len(*leases) == 0 {
			return nil, ""
		}
		l := (*leases)[pick(len(*leases))]
		if pick(2) == 0 {
			return Escalate{StepID: l.step, LeaseID: l.id, Actor: agentA, Note: "stuck"}, "escalate " + l.step
		}
		id := fmt.Sprintf("r%d", i)
		*leases = append(*leases, leaseRef{l.step, id})
		return Renew{StepID: l.step, LeaseID: l.id, NewLeaseID: id, Lease: 5 * time.Minute, Progress: "p"}, "renew " + l.step
	case 5, 6, 7:
		items := m.WorkItems(now)
		if len(items) == 0 {
			return nil, ""
		}
		w := items[pick(len(items))]
		s := p.Step(w.StepID)
		decisions := append(w.Decide.Decisions, DecisionApproved)
		d := Decide{WorkItemID: w.ID, Snapshot: w.Snapshot, Decision: decisions[pick(len(decisions))], Actor: member(w)}
		switch pick(8) {
		case 0:
			d.Actor = agentA
		case 1:
			d.Snapshot = "old"
		case 2:
			d.Actor = outsider
		}
		switch d.Decision {
		case DecisionCompleted:
			d.Submission = sampleSubmission(s)
		case DecisionRejected, DecisionReturned:
			d.Note = ptr("again")
		case DecisionFailed:
			if pick(4) > 0 {
				return nil, ""
			}
			d.Note = ptr("give up")
		}
		return d, "decide " + d.Decision + " " + w.StepID
	case 8:
		names := []string{"final-invoice-settled", "other"}
		return SendEvent{Name: names[pick(2)], Actor: agentB}, "send_event"
	default:
		if pick(30) == 0 {
			return Cancel{Actor: operator, Reason: "enough"}, "cancel"
		}
		return nil, ""
	}
}

func checkInvariants(t *testing.T, m *Machine, now time.Time, after string) {
	t.Helper()
	r := m.Run()
	fail := func(format string, args ...any) {
		t.Helper()
		t.Fatalf("after %s: "+format, append([]any{after}, args...)...)
	}
	checkAttempts(t, m, after)
	if got, want := m.dataSize(), RunDataSize(&m.run.Data); got != want {
		fail("run data measures %d bytes put together, %d encoded whole", got, want)
	}
	if got, want := m.Snapshot(), snapshotOf(m.shownData()); got != want {
		fail("snapshot %s remembered, %s hashed now", got, want)
	}
	open := map[string]int{}
	for _, it := range r.Items {
		if it.Open {
			open[it.StepID]++
		}
	}
	active := false
	for i, sr := range r.Steps {
		s := m.proc.Steps[i]
		if (sr.State == StepClaimed) != (sr.Lease != nil) {
			fail("step %s is %s with lease %+v", s.ID, sr.State, sr.Lease)
		}
		if open[s.ID] > 1 {
			fail("step %s has %d open work items", s.ID, open[s.ID])
		}
		if open[s.ID] == 1 && sr.State != StepWaiting {
			fail("step %s has an open work item but is %s", s.ID, sr.State)
		}
		if s.Kind.Person() && sr.State == StepWaiting && open[s.ID] != 1 {
			fail("person step %s waits without a work item", s.ID)
		}
		if (sr.State == StepReady || sr.State == StepClaimed) && s.Kind != KindAgent {
			fail("%s step %s is %s", s.Kind, s.ID, sr.State)
		}
		if sr.State == StepReady || sr.State == StepClaimed {
			active = true
		}
		if sr.State == StepDone && (s.Kind == KindAgent || s.Kind.Person()) {
			if d := r.Data.Steps[s.ID]; d == nil || d.Record == nil {
				fail("done step %s has no current record", s.ID)
			}
		}
		if r.State.Over() && sr.State.Open() {
			fail("step %s is %s in an ended run", s.ID, sr.State)
		}
	}
	switch {
	case r.State.Over():
		if len(open) != 0 || len(r.Held) != 0 || r.Ended == nil {
			fail("ended run keeps items %v, held %d, ended %+v", open, len(r.Held), r.Ended)
		}
	case active && r.State != RunActive, !active && r.State != RunWaiting:
		fail("run is %s with active=%v", r.State, active)
	}
}
