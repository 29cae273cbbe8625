package interpreter

import (
	"strings"
	"time"
)

// Escalate hands a claimed agent step to the operators with a note.
type Escalate struct {
	StepID  string
	LeaseID string
	Actor   Actor
	Note    string
}

func (c Escalate) apply(m *Machine, now time.Time) (any, error) {
	if strings.TrimSpace(c.Note) == "" {
		return nil, Refuse(CodeInvalid, "An escalation needs a note saying why the step cannot be finished.", "note: required")
	}
	if err := m.live(now); err != nil {
		return nil, err
	}
	s, sr, err := m.leased(c.StepID, c.LeaseID, c.Actor)
	if err != nil {
		return nil, err
	}
	sr.State = StepWaiting
	sr.Lease, sr.Progress = nil, ""
	m.escalatedAttempt(s.ID, now)
	m.openNewItem(s.ID, ItemEscalation, Assignee{Group: m.run.Operators}, &Escalation{Note: c.Note, By: c.Actor.ID, At: FormatTime(now)}, now)
	m.refreshState()
	m.touch(now)
	return m.View(now), nil
}
