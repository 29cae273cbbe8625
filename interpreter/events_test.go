package interpreter

import (
	"fmt"
	"strings"
	"testing"
)

// heldSrc waits for "paid" only after an agent step, so every "paid" sent
// before that is held.
const heldSrc = `---
name: held-caps
description: Holds events until its wait is ready.
inputs:
  note: string
steps:
  - id: work
    agent: Work.
  - id: wait_paid
    wait_for: paid
  - id: done
    finish: ok
---
`

// startCapped starts heldSrc with a run-data cap of limit bytes.
func startCapped(t *testing.T, limit int, note string) *Machine {
	t.Helper()
	m, err := StartRun(Start{RunID: "r_1", Process: loadSource(t, heldSrc), Version: 1, Inputs: Values{"note": note},
		Starter: starter, Limits: Limits{RunDataBytes: limit}}, t0)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// blob is event data whose RunDataSize is exactly n bytes (n ≥ 8).
func blob(t *testing.T, n int) Values {
	t.Helper()
	v := Values{"b": strings.Repeat("x", n-8)} // {"b":"…"} is 8 bytes around the text
	if got := RunDataSize(v); got != n {
		t.Fatalf("blob of %d measures %d", n, got)
	}
	return v
}

func TestHeldEventsAreCappedByCount(t *testing.T) {
	m := startCapped(t, DefaultRunDataBytes, "n")
	for i := range MaxHeldEvents {
		res := must(t, m, SendEvent{Name: fmt.Sprintf("e%d", i%3), Actor: agentA}, t0).(*EventResult)
		if res.ConsumedBy != nil {
			t.Fatalf("event %d consumed by %s", i, *res.ConsumedBy)
		}
	}
	e := refused(t, m, SendEvent{Name: "paid", Actor: agentA}, t0, CodeInvalid, fmt.Sprintf("held events: over %d", MaxHeldEvents))
	if !strings.Contains(e.Message, fmt.Sprint(MaxHeldEvents)) {
		t.Errorf("message %q does not name the limit", e.Message)
	}
	// An event its wait consumes at once is never held: the cap does not
	// stand in its way. Make wait_paid ready by finishing work.
	claim(t, m, "work", agentA, "l1", t0)
	must(t, m, Submit{StepID: "work", LeaseID: "l1", Actor: agentA, Submission: sampleSubmission(m.proc.Step("work"))}, t0)
	if stepState(m, "wait_paid") != StepWaiting {
		t.Fatalf("wait_paid is %s", stepState(m, "wait_paid"))
	}
	res := must(t, m, SendEvent{Name: "paid", Actor: agentB}, t0).(*EventResult)
	if res.ConsumedBy == nil || *res.ConsumedBy != "wait_paid" || m.Run().Outcome != "ok" {
		t.Fatalf("consumedBy %v, outcome %q", res.ConsumedBy, m.Run().Outcome)
	}
	if len(m.Run().Held) != 0 {
		t.Errorf("an ended run holds %d events", len(m.Run().Held))
	}
}

func TestHeldEventsCountTowardsRunDataCap(t *testing.T) {
	const limit = 4096
	m := startCapped(t, limit, "n")
	base := m.dataSize()
	// Two held events fill the cap to the byte; one byte more is refused,
	// whatever its name, and so is a third event with no data to spare.
	first := 2000
	must(t, m, SendEvent{Name: "paid", Data: blob(t, first), Actor: agentA}, t0)
	issue := fmt.Sprintf("data: over %d bytes with the run data and held events", limit)
	e := refused(t, m, SendEvent{Name: "other", Data: blob(t, limit-base-first+1), Actor: agentA}, t0, CodeInvalid, issue)
	if !strings.Contains(e.Message, "limits.runDataBytes") || !strings.Contains(e.Message, fmt.Sprint(limit)) {
		t.Errorf("message %q does not name the limit", e.Message)
	}
	must(t, m, SendEvent{Name: "other", Data: blob(t, limit-base-first), Actor: agentA}, t0)
	refused(t, m, SendEvent{Name: "paid", Data: Values{}, Actor: agentA}, t0, CodeInvalid, issue)
	// An event without data takes no room.
	must(t, m, SendEvent{Name: "paid", Actor: agentA}, t0)
	if got := m.dataSize() + m.heldSize(); got != limit {
		t.Fatalf("run data and held events measure %d, want %d", got, limit)
	}
}

func TestConsumedEventMustFitRunDataCap(t *testing.T) {
	const limit = 4096
	m := startCapped(t, limit, strings.Repeat("n", 3000))
	claim(t, m, "work", agentA, "l1", t0)
	must(t, m, Submit{StepID: "work", LeaseID: "l1", Actor: agentA, Submission: sampleSubmission(m.proc.Step("work"))}, t0)
	// wait_paid is waiting: an event that would take run data over the cap
	// when recorded is refused and the wait keeps waiting.
	room := limit - m.dataSize()
	issue := fmt.Sprintf("data: over %d bytes with the run data and held events", limit)
	refused(t, m, SendEvent{Name: "paid", Data: blob(t, room), Actor: agentA}, t0, CodeInvalid, issue)
	if stepState(m, "wait_paid") != StepWaiting {
		t.Fatalf("wait_paid is %s", stepState(m, "wait_paid"))
	}
	// The recorded completion is the data plus who and when.
	res := must(t, m, SendEvent{Name: "paid", Data: blob(t, room/2), Actor: agentA}, t0).(*EventResult)
	if res.ConsumedBy == nil || m.dataSize() > limit {
		t.Fatalf("consumedBy %v, run data %d bytes", res.ConsumedBy, m.dataSize())
	}
}

func TestHeldEventsStayBounded(t *testing.T) {
	// Whatever a caller sends, a run's held events take at most
	// MaxHeldEvents entries and the run data and held data at most the
	// cap: the state that travels through continue-as-new stays bounded.
	m := startCapped(t, DefaultRunDataBytes, "n")
	big := blob(t, 200<<10)
	accepted := 0
	for i := range 3 * MaxHeldEvents {
		data := big
		if i%2 == 1 {
			data = nil
		}
		if _, err := m.Apply(SendEvent{Name: "paid", Data: data, Actor: agentA}, t0); err == nil {
			accepted++
		}
	}
	if accepted != MaxHeldEvents || len(m.Run().Held) != MaxHeldEvents {
		t.Fatalf("accepted %d, held %d, want %d", accepted, len(m.Run().Held), MaxHeldEvents)
	}
	if got := m.dataSize() + m.heldSize(); got > DefaultRunDataBytes {
		t.Fatalf("run data and held events measure %d bytes", got)
	}
	if b := state(t, m); len(b) > 2*DefaultRunDataBytes {
		t.Fatalf("the run's state is %d bytes", len(b))
	}
}
