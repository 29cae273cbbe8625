package interpreter

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"reflect"
	"strings"
	"testing"
	"time"
)

const attemptsProcess = `---
name: insight
description: An agent drafts under a check and a due time; a reviewer may send it back.
steps:
  - id: draft
    agent: Draft the letter.
    output: { text: string }
    due: 1h
    check:
      - ask: The letter answers the question.
        pass: 0.9
        fail: 0.5
  - id: review
    person: reviewers
    approve: Review the letter.
    on_reject: draft
    next: done
  - id: done
    finish: sent
---

Letters.
`

func at(min int) time.Time { return t0.Add(time.Duration(min) * time.Minute) }

func tp(min int) *time.Time { t := at(min); return &t }

// written takes the attempts a listing would carry and tells the machine
// they were stored, as the host does after each write.
func written(t *testing.T, m *Machine, now time.Time) []Attempt {
	t.Helper()
	l, err := m.Listing(now)
	if err != nil {
		t.Fatal(err)
	}
	m.AttemptsWritten(l.AttemptRev)
	for _, a := range m.Run().Attempts {
		if !a.Open() {
			t.Fatalf("ended attempt %s/%d still held after it was written", a.StepID, a.Seq)
		}
	}
	if m.AttemptsPending() {
		t.Fatal("attempts pending right after they were written")
	}
	return l.Attempts
}

// Every figure an attempt records, in one run: a lease running out, a
// refused submission, a failing and an unsure check, a return, an
// escalation, a due time passing, a person taking over, a rework and the
// attempts after it.
func TestAttemptsRecordWhatHappened(t *testing.T) {
	p := loadSource(t, attemptsProcess)
	m := start(t, p, nil, starter, ModeLive)
	first := written(t, m, t0)
	draftSeq := m.Run().Steps[0].AttemptSeq
	want := Attempt{StepID: "draft", Seq: draftSeq, Kind: KindAgent, State: StepReady, ReadyAt: t0, Due: tp(60)}
	if len(first) != 1 || !sameAttempt(first[0], want) {
		t.Fatalf("at start: %+v, want %+v", first, want)
	}

	claim(t, m, "draft", agentA, "l1", at(1))
	m.Tick(at(11)) // the lease runs out
	claim(t, m, "draft", agentB, "l2", at(12))
	bad := Submit{StepID: "draft", LeaseID: "l2", Actor: agentB, Submission: Submission{Output: Values{"text": 1}, Summary: ptr("done")}}
	e := refused(t, m, bad, at(13), CodeNotAccepted)
	must(t, m, NoteRefusal{StepID: "draft", LeaseID: "l2", Issues: e.Issues}, at(13))
	good := Submit{StepID: "draft", LeaseID: "l2", Actor: agentB, Submission: sampleSubmission(p.Step("draft"))}
	out := submitChecked(t, m, good, at(14), with(CheckAnswer{Probability: f64(0.1)}))
	if out.Refusal == nil || out.Refusal.Code != CodeNotAccepted {
		t.Fatalf("a failing check: %+v", out)
	}
	// The host notes a check's issues too; they are not counted twice.
	must(t, m, NoteRefusal{StepID: "draft", LeaseID: "l2", Issues: out.Refusal.Issues}, at(14))
	mid := written(t, m, at(14))
	want.State, want.ClaimedAt, want.Claims, want.LeaseExpiries, want.NotAccepted = StepClaimed, tp(1), 2, 1, 2
	want.Checks = []AttemptCheck{{Verdict: VerdictFail, Results: []Verdict{VerdictFail}}}
	if len(mid) != 1 || !sameAttempt(mid[0], want) {
		t.Fatalf("after a refusal and a failed check:\n got %+v\nwant %+v", mid, want)
	}

	if out := submitChecked(t, m, good, at(15), with(CheckAnswer{Probability: f64(0.7)})); out.View == nil {
		t.Fatalf("an unsure check: %+v", out.Refusal)
	}
	esc := openItemFor(t, m, at(16), "draft")
	must(t, m, Decide{WorkItemID: esc.ID, Snapshot: esc.Snapshot, Decision: DecisionReturned, Actor: operator, Note: ptr("Say which account.")}, at(16))
	claim(t, m, "draft", agentA, "l3", at(17))
	must(t, m, Escalate{StepID: "draft", LeaseID: "l3", Actor: agentA, Note: "I cannot tell which account."}, at(18))
	m.Tick(at(61)) // the due time passes
	esc = openItemFor(t, m, at(62), "draft")
	must(t, m, Decide{WorkItemID: esc.ID, Snapshot: esc.Snapshot, Decision: DecisionCompleted, Actor: operator,
		Submission: Submission{Output: Values{"text": "Dear customer"}}}, at(62))
	review := openItemFor(t, m, at(70), "review")
	must(t, m, Decide{WorkItemID: review.ID, Snapshot: review.Snapshot, Decision: DecisionRejected, Actor: member(review), Note: ptr("Too short.")}, at(70))
	got := written(t, m, at(70))

	want.State, want.Claims, want.Escalations, want.Returns, want.EscalatedAt, want.OverdueAt = "", 3, 2, 1, tp(15), tp(60)
	want.Checks = append(want.Checks, AttemptCheck{Verdict: VerdictUnsure, Results: []Verdict{VerdictUnsure}, Decision: DecisionReturned})
	want.EndedAt, want.Outcome, want.EndedBy, want.Next = tp(62), AttemptDone, ByPerson, "review"
	reviewSeq := got[1].Seq
	wantReview := Attempt{StepID: "review", Seq: reviewSeq, Kind: KindApprove, ReadyAt: at(62),
		EndedAt: tp(70), Outcome: AttemptRework, EndedBy: ByPerson, Next: "draft"}
	again := Attempt{StepID: "draft", Seq: m.Run().Steps[0].AttemptSeq, Kind: KindAgent, State: StepReady, ReadyAt: at(70), Due: tp(130)}
	if len(got) != 3 || !sameAttempt(got[0], want) || !sameAttempt(got[1], wantReview) || !sameAttempt(got[2], again) {
		t.Fatalf("after the rework:\n got %+v\nwant %+v\n     %+v\n     %+v", got, want, wantReview, again)
	}

	claim(t, m, "draft", agentA, "l4", at(71))
	if out := submitChecked(t, m, Submit{StepID: "draft", LeaseID: "l4", Actor: agentA, Submission: good.Submission}, at(75), passing); out.View == nil {
		t.Fatalf("a passing check: %+v", out.Refusal)
	}
	review = openItemFor(t, m, at(80), "review")
	must(t, m, Decide{WorkItemID: review.ID, Snapshot: review.Snapshot, Decision: DecisionApproved, Actor: member(review)}, at(80))
	last := written(t, m, at(80))
	again.State, again.ClaimedAt, again.Claims, again.EndedAt, again.Outcome, again.EndedBy, again.Next = "", tp(71), 1, tp(75), AttemptDone, ByAgent, "review"
	again.Checks = []AttemptCheck{{Verdict: VerdictPass, Results: []Verdict{VerdictPass}}}
	if len(last) != 2 || !sameAttempt(last[0], again) || last[1].Outcome != AttemptDone || last[1].Next != "done" || last[1].EndedBy != ByPerson {
		t.Fatalf("at the end:\n got %+v\nwant %+v", last, again)
	}
	if len(m.Run().Attempts) != 0 || !m.Run().State.Over() {
		t.Fatalf("an ended run holds attempts: %+v", m.Run().Attempts)
	}
	if m.attemptRepairs != 0 {
		t.Fatalf("%d attempts were repaired after commands", m.attemptRepairs)
	}
}

// sameAttempt compares attempts but for Rev, which counts changes.
func sameAttempt(a, b Attempt) bool {
	a.Rev, b.Rev = 0, 0
	return reflect.DeepEqual(a, b)
}

// A write carries only the attempts that changed since the last one.
func TestAttemptsWrittenOnlyWhenChanged(t *testing.T) {
	p := loadSource(t, attemptsProcess)
	m := start(t, p, nil, starter, ModeLive)
	written(t, m, t0)
	l, _ := m.Listing(t0)
	if len(l.Attempts) != 0 {
		t.Fatalf("nothing changed, yet the listing carries %+v", l.Attempts)
	}
	claim(t, m, "draft", agentA, "l1", at(1))
	if got := written(t, m, at(1)); len(got) != 1 || got[0].Claims != 1 {
		t.Fatalf("a claim: %+v", got)
	}
	// A renew changes nothing an attempt records.
	must(t, m, Renew{StepID: "draft", LeaseID: "l1", NewLeaseID: "l1b", Lease: lease}, at(2))
	if m.AttemptsPending() {
		t.Fatal("a renew made attempts pending")
	}
	// A write the host lost is sent again with the next.
	claimed := m.Run().AttemptRev
	must(t, m, Escalate{StepID: "draft", LeaseID: "l1b", Actor: agentA, Note: "stuck"}, at(3))
	l, _ = m.Listing(at(3))
	if len(l.Attempts) != 1 || l.AttemptRev <= claimed {
		t.Fatalf("an escalation: %+v", l)
	}
	m.AttemptsWritten(claimed) // an older write's answer changes nothing
	if !m.AttemptsPending() {
		t.Fatal("an older write's answer cleared newer changes")
	}
}

// A run cancelled, and a step failed, end their open attempts.
func TestAttemptsEndWithTheRun(t *testing.T) {
	p := loadSource(t, attemptsProcess)
	m := start(t, p, nil, starter, ModeLive)
	written(t, m, t0)
	must(t, m, Cancel{Actor: operator, Reason: "No longer needed."}, at(5))
	got := written(t, m, at(5))
	if len(got) != 1 || got[0].Outcome != AttemptCancelled || got[0].EndedBy != ByPerson || !got[0].EndedAt.Equal(at(5)) {
		t.Fatalf("cancelled: %+v", got)
	}

	m = start(t, p, nil, starter, ModeLive)
	claim(t, m, "draft", agentA, "l1", at(1))
	must(t, m, Escalate{StepID: "draft", LeaseID: "l1", Actor: agentA, Note: "stuck"}, at(2))
	esc := openItemFor(t, m, at(3), "draft")
	must(t, m, Decide{WorkItemID: esc.ID, Snapshot: esc.Snapshot, Decision: DecisionFailed, Actor: operator, Note: ptr("Cannot be done.")}, at(3))
	got = written(t, m, at(3))
	if len(got) != 1 || got[0].Outcome != AttemptFailed || got[0].EndedBy != ByPerson || got[0].Escalations != 1 {
		t.Fatalf("failed: %+v", got)
	}
}

// A run whose state was saved before attempts were recorded gets its open
// attempts from the steps when it is restored, and ends them as usual.
func TestAttemptsOfAStateSavedBefore(t *testing.T) {
	p := loadSource(t, attemptsProcess)
	m := start(t, p, nil, starter, ModeLive)
	claim(t, m, "draft", agentA, "l1", at(1))
	var old map[string]any
	if err := json.Unmarshal(state(t, m), &old); err != nil {
		t.Fatal(err)
	}
	delete(old, "attempts")
	delete(old, "attemptRev")
	delete(old, "attemptsWritten")
	b, _ := json.Marshal(old)
	r, err := Restore(p, b)
	if err != nil {
		t.Fatal(err)
	}
	got := written(t, r, at(1))
	if len(got) != 1 || got[0].State != StepClaimed || !got[0].ReadyAt.Equal(t0) || got[0].StepID != "draft" {
		t.Fatalf("restored: %+v", got)
	}
	must(t, r, Escalate{StepID: "draft", LeaseID: "l1", Actor: agentA, Note: "stuck"}, at(2))
	if got := written(t, r, at(2)); len(got) != 1 || got[0].Escalations != 1 || got[0].State != StepWaiting {
		t.Fatalf("escalated after the restore: %+v", got)
	}
}

// checkAttempts holds, after any command, that each open step has exactly
// one open attempt at its current activation and in its state, and that
// no command needed settleAttempts to repair what its hooks recorded.
func checkAttempts(t *testing.T, m *Machine, after string) {
	t.Helper()
	open := map[string]int{}
	for _, a := range m.run.Attempts {
		if !a.Open() {
			continue
		}
		open[a.StepID]++
		_, sr := m.stepRun(a.StepID)
		if a.Seq != sr.AttemptSeq || a.State != sr.State {
			t.Fatalf("after %s: attempt %s/%d is %s, its step %d and %s", after, a.StepID, a.Seq, a.State, sr.AttemptSeq, sr.State)
		}
	}
	for i, sr := range m.run.Steps {
		want := 0
		if sr.State.Open() && recorded(m.proc.Steps[i].Kind) {
			want = 1
		}
		if open[sr.ID] != want {
			t.Fatalf("after %s: step %s is %s with %d open attempts", after, sr.ID, sr.State, open[sr.ID])
		}
	}
	if m.attemptRepairs != 0 {
		t.Fatalf("after %s: %d attempts repaired; a change went past its hook: %s", after, m.attemptRepairs, attemptList(m))
	}
}

func attemptList(m *Machine) string {
	var b strings.Builder
	for _, a := range m.run.Attempts {
		b.WriteString(a.StepID + ":" + string(a.State) + ":" + string(a.Outcome) + " ")
	}
	return b.String()
}

// Written at random moments, a run holds only its open attempts and the
// ended ones not yet written, and every attempt that ended is written
// once with its end.
func TestAttemptsWrittenAtRandom(t *testing.T) {
	for _, name := range []string{"invoice-approval", "vendor-check", "contract-review"} {
		p := loadFixture(t, name)
		rng := rand.New(rand.NewSource(7))
		m := start(t, p, Samples(p.Inputs), starter, ModeLive)
		now := t0
		var leases []leaseRef
		ended := map[string]int{}
		for i := 0; i < 400 && !m.Run().State.Over(); i++ {
			now = now.Add(time.Duration(rng.Intn(90)) * time.Second)
			cmd, desc := randomCommand(rng, p, m, now, &leases, i)
			if cmd == nil {
				m.Tick(now)
			} else if _, err := m.Apply(cmd, now); err == nil {
				checkAttempts(t, m, desc)
			}
			if rng.Intn(3) == 0 {
				for _, a := range written(t, m, now) {
					if !a.Open() {
						ended[fmt.Sprintf("%s/%d", a.StepID, a.Seq)]++
					}
				}
			}
		}
		for k, n := range ended {
			if n != 1 {
				t.Fatalf("%s: attempt %q written ended %d times", name, k, n)
			}
		}
	}
}
