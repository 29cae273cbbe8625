package interpreter

import (
	"fmt"
	"regexp"
	"strings"
	"time"
)

// ActorSystem is the kind of identity that delivers events from outside
// the gateway, such as a Temporal signal sent from the CLI or the Web UI.
const ActorSystem ActorKind = "system"

// Cancel ends an active or waiting run on an operator's word (spec §3.5).
type Cancel struct {
	Actor  Actor
	Reason string
}

func (c Cancel) apply(m *Machine, now time.Time) (any, error) {
	if strings.TrimSpace(c.Reason) == "" {
		return nil, refuse(CodeInvalid, "A cancellation needs a reason.", "reason: required")
	}
	if err := m.live(now); err != nil {
		return nil, err
	}
	if c.Actor.Kind != ActorOperator && c.Actor.Kind != ActorSystem {
		return nil, refuse(CodeForbidden, "Only an operator can cancel a run.")
	}
	reason := c.Reason
	m.end(RunCancelled, "", &Ended{By: c.Actor.ID, At: stamp(now), Note: &reason})
	m.touch(now)
	return m.View(now), nil
}

var eventName = regexp.MustCompile(`^[a-z][a-z0-9_-]{0,63}$`)

// SendEvent delivers an event to the run (spec §3.6): it satisfies the
// waiting wait_for step with that name, or is held until one is ready.
type SendEvent struct {
	Name  string
	Data  Values
	Actor Actor
}

// EventResult is send_event's result.
type EventResult struct {
	ConsumedBy *string `json:"consumedBy"`
}

func (c SendEvent) apply(m *Machine, now time.Time) (any, error) {
	if !eventName.MatchString(c.Name) {
		return nil, refuse(CodeInvalid, "Event names match ^[a-z][a-z0-9_-]{0,63}$.", "name: must match ^[a-z][a-z0-9_-]{0,63}$")
	}
	if c.Data != nil && RunDataSize(c.Data) > m.run.Limits.RunDataBytes {
		issue := fmt.Sprintf("data: over %d bytes", m.run.Limits.RunDataBytes)
		return nil, refuse(CodeInvalid, "The event data is over the run-data limit.", issue)
	}
	if err := m.live(now); err != nil {
		return nil, err
	}
	if c.Actor.Kind != ActorAgent && c.Actor.Kind != ActorOperator && c.Actor.Kind != ActorSystem {
		return nil, refuse(CodeForbidden, "Events are sent by agents, systems and operators.")
	}
	res := &EventResult{}
	for i, sr := range m.run.Steps {
		s := m.proc.Steps[i]
		if s.Kind == KindWaitFor && sr.State == StepWaiting && s.Text == c.Name {
			id := s.ID
			res.ConsumedBy = &id
			m.consume(s, c.Data, c.Actor.ID, now)
			break
		}
	}
	if res.ConsumedBy == nil {
		// A held event shows nowhere until a wait consumes it: the view,
		// run.updatedAt included, stays as it was.
		m.run.Held = append(m.run.Held, &HeldEvent{Name: c.Name, Data: c.Data, Sender: c.Actor.ID, At: now})
		return res, nil
	}
	m.refreshState()
	m.touch(now)
	return res, nil
}
