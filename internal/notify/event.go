package notify

import (
	"time"

	"github.com/baton-run/baton/interpreter"
)

// Event is an event as a webhook channel posts it, the JSON body of
// docs/notifications.md:
//
//	{ id, type, org, at, run: { id, process, version, mode },
//	  workItem?: { id, stepId, kind, assignedTo, due }, link }
//
// with the keys some types add: run.outcome and run.startedBy on
// run.ended; workItem.title always; workItem.decision and
// workItem.decidedBy on work.decided and call.decided; workItem.tool on
// an item about a call; step on an overdue step that has no work item.
type Event struct {
	ID       string     `json:"id"`
	Type     string     `json:"type"`
	Org      string     `json:"org"`
	At       string     `json:"at"`
	Run      EventRun   `json:"run"`
	WorkItem *EventItem `json:"workItem,omitempty"`
	Step     *EventStep `json:"step,omitempty"`
	// Link is the item's page in the web inbox (the run's for run.ended
	// and an overdue step); null without an inbox.
	Link *string `json:"link"`
}

// EventRun is the run an event is about.
type EventRun struct {
	ID        string `json:"id"`
	Process   string `json:"process"`
	Version   int    `json:"version"`
	Mode      string `json:"mode"`
	Outcome   string `json:"outcome,omitempty"`
	StartedBy string `json:"startedBy,omitempty"`
}

// EventItem is the work item an event is about.
type EventItem struct {
	ID         string               `json:"id"`
	StepID     string               `json:"stepId"`
	Kind       string               `json:"kind"`
	AssignedTo interpreter.Assignee `json:"assignedTo"`
	Due        *string              `json:"due"`
	Title      string               `json:"title"`
	Tool       string               `json:"tool,omitempty"`
	Decision   string               `json:"decision,omitempty"`
	DecidedBy  string               `json:"decidedBy,omitempty"`
}

// EventStep is the step an overdue event is about when no work item is.
type EventStep struct {
	ID  string `json:"id"`
	Due string `json:"due"`
}

// LinkFunc is the inbox page of a run's work item, or of the run when
// itemID is ""; "" when there is no inbox.
type LinkFunc func(runID, itemID string) string

// NewEvent is the event of a run's notice in org, with its inbox link.
func NewEvent(org string, n *interpreter.Notice, link LinkFunc) Event {
	e := Event{
		ID: n.ID, Type: string(n.Type), Org: org, At: formatTime(n.At),
		Run: EventRun{ID: n.Run.ID, Process: n.Run.Process, Version: n.Run.Version, Mode: n.Run.Mode},
	}
	if n.Type == interpreter.NoticeRunEnded {
		e.Run.Outcome, e.Run.StartedBy = n.Run.Outcome, n.Run.StartedBy.ID
	}
	itemID := ""
	if w := n.WorkItem; w != nil {
		itemID = w.ID
		e.WorkItem = &EventItem{
			ID: w.ID, StepID: w.StepID, Kind: string(w.Kind), AssignedTo: w.AssignedTo, Title: w.Title,
			Tool: w.Tool, Decision: w.Decision, DecidedBy: w.DecidedBy,
		}
		if w.Due != nil {
			d := formatTime(*w.Due)
			e.WorkItem.Due = &d
		}
	}
	if s := n.Step; s != nil {
		e.Step = &EventStep{ID: s.ID, Due: formatTime(s.Due)}
	}
	if link != nil {
		if l := link(n.Run.ID, itemID); l != "" {
			e.Link = &l
		}
	}
	return e
}

func formatTime(t time.Time) string { return interpreter.FormatTime(t) }

// link is the event's inbox link, "" without one.
func (e *Event) link() string {
	if e.Link == nil {
		return ""
	}
	return *e.Link
}
