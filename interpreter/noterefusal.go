package interpreter

import "time"

// NoteRefusal records the issues of a refused submission into the step's
// handoff, so whoever attempts the step next sees them (spec §3.3). Refused
// submissions themselves change nothing; the host sends this afterwards. It
// does not change run data, so snapshots stay current. A lease that is no
// longer current makes it a no-op.
type NoteRefusal struct {
	StepID  string
	LeaseID string
	Issues  []string
}

func (c NoteRefusal) apply(m *Machine, now time.Time) (any, error) {
	if err := m.live(now); err != nil {
		return nil, err
	}
	_, sr, err := m.leased(c.StepID, c.LeaseID, Actor{})
	if err != nil {
		return nil, err
	}
	if sr.Handoff == nil {
		sr.Handoff = &Handoff{}
	}
	sr.Handoff.Issues = append([]string(nil), c.Issues...)
	m.refusedAttempt(c.StepID, c.Issues)
	// The handoff of a claimed step shows in no view: keeping the issues
	// changes nothing get_run answers (SPEC-DECISIONS §30).
	return nil, nil
}
