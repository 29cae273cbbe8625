package interpreter

import (
	"strings"
	"time"
)

// This file keeps the record of step attempts that process insights are
// computed from (docs/insights.md). An attempt is one activation of a
// step: it begins when the step becomes ready (or waiting) and ends when
// the step is done, fails, is cancelled with its run, or is rewound by a
// rework. The machine notes what happens to each attempt as it happens —
// claims, lease expiries, refused submissions, escalations, returns, a due
// time passing, check verdicts and the decision on an unsure one — and the
// host writes the attempts that changed with the run's read model
// (Listing.Attempts), then tells the machine (AttemptsWritten), which then
// forgets the ended ones. So a run's state carries its open attempts only,
// at most one a step.

// AttemptOutcome says how an attempt ended.
type AttemptOutcome string

// The outcomes of an attempt.
const (
	// AttemptDone: the step completed (an approval approved it).
	AttemptDone AttemptOutcome = "done"
	// AttemptRework: an approval rejected it and the run went back to
	// its on_reject step.
	AttemptRework AttemptOutcome = "rework"
	// AttemptRejected: an approval rejected it and the run ended rejected.
	AttemptRejected AttemptOutcome = "rejected"
	// AttemptFailed: a person decided failed, or the server failed the
	// step (an assignee or a wait_until that resolves to nothing).
	AttemptFailed AttemptOutcome = "failed"
	// AttemptCancelled: the run ended or was cancelled while the step
	// was open, or a rework rewound it while it was open.
	AttemptCancelled AttemptOutcome = "cancelled"
)

// AttemptBy says who ended an attempt.
type AttemptBy string

// Who ends attempts.
const (
	ByAgent  AttemptBy = "agent"
	ByPerson AttemptBy = "person"
	ByServer AttemptBy = "server"
)

// Attempt is one attempt at a step, as insights record it.
type Attempt struct {
	StepID string `json:"stepId"`
	// Seq is the machine sequence number at which the attempt began
	// (StepRun.AttemptSeq): with the run and the step, its key.
	Seq  int64 `json:"seq"`
	Kind Kind  `json:"kind"`
	// State is the step's state while the attempt is open (ready,
	// claimed, waiting), and "" once it ended.
	State   StepState `json:"state,omitempty"`
	ReadyAt time.Time `json:"readyAt"`
	// ClaimedAt is the first claim; EscalatedAt the first escalation
	// (by the agent or by an unsure check).
	ClaimedAt   *time.Time     `json:"claimedAt,omitempty"`
	EscalatedAt *time.Time     `json:"escalatedAt,omitempty"`
	EndedAt     *time.Time     `json:"endedAt,omitempty"`
	Outcome     AttemptOutcome `json:"outcome,omitempty"`
	EndedBy     AttemptBy      `json:"endedBy,omitempty"`
	// Next is the step the run went on to when the attempt ended: a step
	// id, Join, or "" (the run ended, or the step failed).
	Next string `json:"next,omitempty"`
	// Due is the attempt's due time; OverdueAt is set once it passed.
	Due       *time.Time `json:"due,omitempty"`
	OverdueAt *time.Time `json:"overdueAt,omitempty"`
	// Claims counts claims; LeaseExpiries the leases that ran out;
	// NotAccepted the submissions refused by the rules of spec §6 or by a
	// failing check; Escalations and Returns the escalations and the
	// returns of escalated work.
	Claims        int `json:"claims,omitempty"`
	LeaseExpiries int `json:"leaseExpiries,omitempty"`
	NotAccepted   int `json:"notAccepted,omitempty"`
	Escalations   int `json:"escalations,omitempty"`
	Returns       int `json:"returns,omitempty"`
	// Checks are the check verdicts reached on the attempt's
	// submissions, oldest first.
	Checks []AttemptCheck `json:"checks,omitempty"`
	// Rev orders the writes of an attempt: it is the run's AttemptRev
	// when the attempt last changed.
	Rev int64 `json:"rev"`
}

// AttemptCheck is one check verdict on an attempt's submission: the
// verdict, each question's result in the check's order, and, for an
// unsure verdict that escalated, what the person decided (completed,
// returned or failed).
type AttemptCheck struct {
	Verdict  Verdict   `json:"verdict"`
	Advisory bool      `json:"advisory,omitempty"`
	Results  []Verdict `json:"results"`
	Decision string    `json:"decision,omitempty"`
}

// Open reports whether the attempt has not ended.
func (a *Attempt) Open() bool { return a.EndedAt == nil }

// AttemptsPending reports whether attempts changed since the host last
// wrote them.
func (m *Machine) AttemptsPending() bool {
	for _, a := range m.run.Attempts {
		if a.Rev > m.run.AttemptsWritten {
			return true
		}
	}
	return false
}

// pendingAttempts are copies of the attempts changed since the host last
// wrote them, in the order they began.
func (m *Machine) pendingAttempts() []Attempt {
	var out []Attempt
	for _, a := range m.run.Attempts {
		if a.Rev > m.run.AttemptsWritten {
			out = append(out, *a)
		}
	}
	return out
}

// AttemptsWritten tells the machine that the attempts of a listing whose
// AttemptRev was rev are stored: it forgets those that ended and will not
// list the others again until they change.
func (m *Machine) AttemptsWritten(rev int64) {
	if rev <= m.run.AttemptsWritten {
		return
	}
	m.run.AttemptsWritten = rev
	kept := m.run.Attempts[:0]
	for _, a := range m.run.Attempts {
		if a.Open() || a.Rev > rev {
			kept = append(kept, a)
		}
	}
	clear(m.run.Attempts[len(kept):])
	m.run.Attempts = kept
}

// recorded reports whether attempts at steps of kind k are recorded: a
// finish step is reached and done at once, and its route in is on the
// attempt before it.
func recorded(k Kind) bool { return k != KindFinish }

// changed marks an attempt changed.
func (m *Machine) changed(a *Attempt) {
	m.run.AttemptRev++
	a.Rev = m.run.AttemptRev
}

// openAttempt is the step's open attempt, or nil.
func (m *Machine) openAttempt(stepID string) *Attempt {
	for _, a := range m.run.Attempts {
		if a.StepID == stepID && a.Open() {
			return a
		}
	}
	return nil
}

// beginAttempt records a new attempt at s, which activate has just made
// ready (or waiting) as sr. An attempt still open there ends cancelled.
func (m *Machine) beginAttempt(s *Step, sr *StepRun, now time.Time) {
	if !recorded(s.Kind) {
		return
	}
	if a := m.openAttempt(s.ID); a != nil {
		m.closeAttempt(a, AttemptCancelled, ByServer, now)
	}
	a := &Attempt{StepID: s.ID, Seq: sr.AttemptSeq, Kind: s.Kind, ReadyAt: now, Due: sr.Due}
	m.run.Attempts = append(m.run.Attempts, a)
	m.changed(a)
}

// endAttempt ends the open attempt at s with an outcome, before complete
// or failStep clears the step's run state.
func (m *Machine) endAttempt(s *Step, outcome AttemptOutcome, by AttemptBy, now time.Time) {
	if a := m.attemptOf(s.ID); a != nil {
		m.closeAttempt(a, outcome, by, now)
	}
}

func (m *Machine) closeAttempt(a *Attempt, outcome AttemptOutcome, by AttemptBy, now time.Time) {
	t := now
	a.EndedAt, a.Outcome, a.EndedBy, a.State = &t, outcome, by, ""
	m.changed(a)
}

// completedBy says who completed step s: a person when it has an open work
// item (a task, an approval, an escalation taken over), the agent for an
// agent step without one, the server otherwise.
func (m *Machine) completedBy(s *Step) AttemptBy {
	switch {
	case m.openItem(s.ID) != nil:
		return ByPerson
	case s.Kind == KindAgent:
		return ByAgent
	}
	return ByServer
}

// completeAttempt ends s's attempt as complete is about to complete it
// with rec: done, or rejected into rework or ending the run.
func (m *Machine) completeAttempt(s *Step, rec *Record, now time.Time) {
	a := m.attemptOf(s.ID)
	if a == nil {
		return
	}
	outcome := AttemptDone
	if rec != nil && rec.Decision == DecisionRejected {
		outcome = AttemptRejected
		if s.OnReject != "" {
			outcome, a.Next = AttemptRework, s.OnReject
		}
	}
	m.closeAttempt(a, outcome, m.completedBy(s), now)
}

// failAttempt ends s's attempt failed, by the server or a person.
func (m *Machine) failAttempt(s *Step, by string, now time.Time) {
	who := ByPerson
	if by == "server" {
		who = ByServer
	}
	m.endAttempt(s, AttemptFailed, who, now)
}

// endRunAttempts ends every open attempt cancelled as the run ends: by the
// server, or by the person who ended it.
func (m *Machine) endRunAttempts(ended *Ended) {
	by := ByPerson
	if ended == nil || ended.By == "server" {
		by = ByServer
	}
	var at time.Time
	if ended != nil {
		at, _ = time.Parse(TimeLayout, ended.At)
	}
	for _, a := range m.run.Attempts {
		if a.Open() {
			m.closeAttempt(a, AttemptCancelled, by, at)
		}
	}
}

// routeAttempt notes where the run went after s's attempt ended.
func (m *Machine) routeAttempt(s *Step, to string) {
	a := m.lastAttempt(s.ID)
	if a == nil || a.Open() || a.Next == to {
		return
	}
	a.Next = to
	m.changed(a)
}

// lastAttempt is the newest attempt at the step the machine still holds.
func (m *Machine) lastAttempt(stepID string) *Attempt {
	for i := len(m.run.Attempts) - 1; i >= 0; i-- {
		if a := m.run.Attempts[i]; a.StepID == stepID {
			return a
		}
	}
	return nil
}

// attemptOf is the step's open attempt. A run whose state was saved before
// attempts were recorded has none for a step that was open then: it is
// made from the step's run state.
func (m *Machine) attemptOf(stepID string) *Attempt {
	if a := m.openAttempt(stepID); a != nil {
		return a
	}
	s, sr := m.stepRun(stepID)
	if s == nil || !sr.State.Open() || !recorded(s.Kind) {
		return nil
	}
	a := &Attempt{StepID: s.ID, Seq: sr.AttemptSeq, Kind: s.Kind, State: sr.State, ReadyAt: sr.ReadySince, Due: sr.Due}
	if sr.Overdue && sr.Due != nil {
		a.OverdueAt = sr.Due
	}
	m.run.Attempts = append(m.run.Attempts, a)
	m.changed(a)
	return a
}

// claimedAttempt counts a claim.
func (m *Machine) claimedAttempt(stepID string, now time.Time) {
	if a := m.attemptOf(stepID); a != nil {
		if a.ClaimedAt == nil {
			t := now
			a.ClaimedAt = &t
		}
		a.Claims++
		m.changed(a)
	}
}

// expiredAttempt counts a lease that ran out.
func (m *Machine) expiredAttempt(stepID string) {
	if a := m.attemptOf(stepID); a != nil {
		a.LeaseExpiries++
		m.changed(a)
	}
}

// overdueAttempt notes that the attempt's due time passed.
func (m *Machine) overdueAttempt(stepID string, due time.Time) {
	if a := m.attemptOf(stepID); a != nil && a.OverdueAt == nil {
		a.OverdueAt = &due
		m.changed(a)
	}
}

// escalatedAttempt counts an escalation.
func (m *Machine) escalatedAttempt(stepID string, now time.Time) {
	if a := m.attemptOf(stepID); a != nil {
		if a.EscalatedAt == nil {
			t := now
			a.EscalatedAt = &t
		}
		a.Escalations++
		m.changed(a)
	}
}

// returnedAttempt counts escalated work a person returned.
func (m *Machine) returnedAttempt(stepID string) {
	if a := m.attemptOf(stepID); a != nil {
		a.Returns++
		m.changed(a)
	}
}

// refusedAttempt counts a submission the rules of spec §6 refused, as the
// host notes it (NoteRefusal). A check's failure is counted when it is
// reached (checkedAttempt), and the host notes its issues too: those are
// all check lines (profile-check §3), and are not counted again.
func (m *Machine) refusedAttempt(stepID string, issues []string) {
	checkOnly := len(issues) > 0
	for _, is := range issues {
		if !strings.HasPrefix(is, "check: ") {
			checkOnly = false
		}
	}
	if checkOnly {
		return
	}
	if a := m.attemptOf(stepID); a != nil {
		a.NotAccepted++
		m.changed(a)
	}
}

// checkedAttempt records a check's verdict on a submission of the step: a
// blocking fail refuses it, a blocking unsure escalates it.
func (m *Machine) checkedAttempt(stepID string, v *CheckVerdict, now time.Time) {
	a := m.attemptOf(stepID)
	if a == nil {
		return
	}
	c := AttemptCheck{Verdict: v.Verdict, Advisory: v.Advisory, Results: make([]Verdict, len(v.Questions))}
	for i, q := range v.Questions {
		c.Results[i] = q.Result
	}
	a.Checks = append(a.Checks, c)
	if !v.Advisory {
		switch v.Verdict {
		case VerdictFail:
			a.NotAccepted++
		case VerdictUnsure:
			if a.EscalatedAt == nil {
				t := now
				a.EscalatedAt = &t
			}
			a.Escalations++
		}
	}
	m.changed(a)
}

// decidedAttempt records a person's decision on escalated work whose
// escalation carries a check (the unsure verdict it answers), and counts
// a return.
func (m *Machine) decidedAttempt(stepID string, esc *Escalation, decision string) {
	a := m.attemptOf(stepID)
	if a == nil {
		return
	}
	if decision == DecisionReturned {
		a.Returns++
	}
	if esc != nil && len(esc.Check) > 0 {
		for i := len(a.Checks) - 1; i >= 0; i-- {
			if c := &a.Checks[i]; c.Verdict == VerdictUnsure && !c.Advisory && c.Decision == "" {
				c.Decision = decision
				break
			}
		}
	}
	m.changed(a)
}

// settleAttempts brings the open attempts in line with the steps after a
// command: each takes its step's state, an attempt whose step is no
// longer open (or began again) ends cancelled, and an open step without
// an attempt gets one. It reports how many attempts it had to end or make:
// none, when every change went through the hooks above.
func (m *Machine) settleAttempts(now time.Time) int {
	repaired := 0
	for _, a := range m.run.Attempts {
		if !a.Open() {
			continue
		}
		_, sr := m.stepRun(a.StepID)
		if sr == nil || !sr.State.Open() || sr.AttemptSeq != a.Seq {
			m.closeAttempt(a, AttemptCancelled, ByServer, now)
			repaired++
			continue
		}
		if a.State != sr.State {
			a.State = sr.State
			m.changed(a)
		}
	}
	for i, sr := range m.run.Steps {
		if sr.State.Open() && recorded(m.proc.Steps[i].Kind) && m.openAttempt(sr.ID) == nil {
			m.attemptOf(sr.ID)
			repaired++
		}
	}
	return repaired
}

// cloneAttempts copies attempts deeply enough for a clone of the run.
func cloneAttempts(as []*Attempt) []*Attempt {
	if as == nil {
		return nil
	}
	out := make([]*Attempt, len(as))
	for i, a := range as {
		c := *a
		if a.Checks != nil {
			c.Checks = make([]AttemptCheck, len(a.Checks))
			copy(c.Checks, a.Checks)
		}
		out[i] = &c
	}
	return out
}
