package interpreter

import (
	"encoding/json"
	"testing"
)

// benchRun starts customer-offboarding, the largest fixture, and brings it to
// verify_settlement with the earlier steps' data in place.
func benchRun(b *testing.B) (*Process, *Machine) {
	p := loadFixture(b, "customer-offboarding")
	in := Samples(p.Inputs)
	in["effectiveAt"] = "2026-01-01T00:00:00Z"
	m, err := StartRun(Start{RunID: "r_1", Process: p, Version: 1, Inputs: in, Starter: starter}, t0)
	if err != nil {
		b.Fatal(err)
	}
	w := m.WorkItems(t0)[0]
	if _, err := m.Apply(Decide{WorkItemID: w.ID, Snapshot: w.Snapshot, Decision: DecisionApproved, Actor: member(w)}, t0); err != nil {
		b.Fatal(err)
	}
	for _, id := range []string{"cancel_services", "final_invoice"} {
		if _, err := m.Apply(Claim{StepID: id, Actor: agentA, LeaseID: "l" + id, Lease: lease}, t0); err != nil {
			b.Fatal(err)
		}
		sub := sampleSubmission(p.Step(id))
		if id == "final_invoice" {
			sub.Next = ptr("settlement_event")
		}
		if _, err := m.Apply(Submit{StepID: id, LeaseID: "l" + id, Actor: agentA, Submission: sub}, t0); err != nil {
			b.Fatal(err)
		}
	}
	if _, err := m.Apply(SendEvent{Name: "final-invoice-settled", Actor: agentB}, t0); err != nil {
		b.Fatal(err)
	}
	if _, err := m.Apply(Claim{StepID: "verify_settlement", Actor: agentA, LeaseID: "lv", Lease: lease}, t0); err != nil {
		b.Fatal(err)
	}
	return p, m
}

func BenchmarkSubmit(b *testing.B) {
	p, m := benchRun(b)
	state, _ := m.State()
	sub := Submit{StepID: "verify_settlement", LeaseID: "lv", Actor: agentA, Submission: sampleSubmission(p.Step("verify_settlement"))}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		m, _ = Restore(p, state)
		b.StartTimer()
		if _, err := m.Apply(sub, t0); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkView(b *testing.B) {
	_, m := benchRun(b)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := json.Marshal(m.View(t0)); err != nil {
			b.Fatal(err)
		}
	}
}
