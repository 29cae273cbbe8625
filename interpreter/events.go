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
		return nil, Refuse(CodeInvalid, "A cancellation needs a reason.", "reason: required")
	}
	if err := m.live(now); err != nil {
		return nil, err
	}
	if c.Actor.Kind != ActorOperator && c.Actor.Kind != ActorSystem {
		return nil, Refuse(CodeForbidden, "Only an operator can cancel a run.")
	}
	reason := c.Reason
	m.end(RunCancelled, "", &Ended{By: c.Actor.ID, At: FormatTime(now), Note: &reason})
	m.touch(now)
	return m.View(now), nil
}

var eventName = regexp.MustCompile(`^[a-z][a-z0-9_-]{0,63}$`)

// MaxHeldEvents is how many events a run holds at once, waiting for their
// wait_for steps; one more is invalid until a wait consumes one. Held
// events also count towards limits.runDataBytes (see SendEvent), so a run's
// state stays far below what Temporal carries in one payload.
const MaxHeldEvents = 100

// SendEvent delivers an event to the run (spec §3.6): it satisfies the
// waiting wait_for step with that name, or is held until one is ready.
//
// The run-data cap bounds event data when held (spec §6 rule 3): the run
// data and the data of every held event together stay within
// limits.runDataBytes, since each held event becomes run data when its
// wait consumes it. An event that would pass that, or a run's
// MaxHeldEvents-th-plus-one held event, is invalid and changes nothing.
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
		return nil, Refuse(CodeInvalid, "Event names match ^[a-z][a-z0-9_-]{0,63}$.", "name: must match ^[a-z][a-z0-9_-]{0,63}$")
	}
	if c.Data != nil && RunDataSize(c.Data) > m.run.Limits.RunDataBytes {
		issue := fmt.Sprintf("data: over %d bytes", m.run.Limits.RunDataBytes)
		return nil, Refuse(CodeInvalid, "The event data is over the run-data limit.", issue)
	}
	if err := m.live(now); err != nil {
		return nil, err
	}
	if c.Actor.Kind != ActorAgent && c.Actor.Kind != ActorOperator && c.Actor.Kind != ActorSystem {
		return nil, Refuse(CodeForbidden, "Events are sent by agents, systems and operators.")
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
		if len(m.run.Held) >= MaxHeldEvents {
			return nil, Refuse(CodeInvalid,
				fmt.Sprintf("The run already holds %d events that no wait_for step has consumed, the most it keeps; send this one when its wait is waiting.", MaxHeldEvents),
				fmt.Sprintf("held events: over %d", MaxHeldEvents))
		}
		m.run.Held = append(m.run.Held, &HeldEvent{Name: c.Name, Data: c.Data, Sender: c.Actor.ID, At: now})
	}
	if err := m.withinDataCap(); err != nil {
		return nil, err
	}
	if res.ConsumedBy == nil {
		// A held event shows nowhere until a wait consumes it: the view,
		// run.updatedAt included, stays as it was.
		return res, nil
	}
	m.refreshState()
	m.touch(now)
	return res, nil
}

// withinDataCap refuses, as invalid, an event after which the run data and
// the held events' data together are over limits.runDataBytes.
func (m *Machine) withinDataCap() error {
	limit := m.run.Limits.RunDataBytes
	if m.dataSize()+m.heldSize() <= limit {
		return nil
	}
	return Refuse(CodeInvalid,
		fmt.Sprintf("With this event's data, the run data and the events the run holds would be over limits.runDataBytes (%d bytes).", limit),
		fmt.Sprintf("data: over %d bytes with the run data and held events", limit))
}

// heldSize is the size of the held events' data as the run-data cap
// counts it (RunDataSize).
func (m *Machine) heldSize() int {
	n := 0
	for _, ev := range m.run.Held {
		if ev.Data != nil {
			n += RunDataSize(ev.Data)
		}
	}
	return n
}
