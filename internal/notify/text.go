package notify

import (
	"strconv"

	"github.com/baton-run/baton/interpreter"
)

// headline says in a few words what an event tells, for a person: a
// mail's subject, a Slack message's first line.
func headline(ev Event) string {
	w := ev.WorkItem
	t := interpreter.NoticeType(ev.Type)
	if w == nil && t != interpreter.NoticeRunEnded && t != interpreter.NoticeWorkOverdue {
		return ev.Type
	}
	switch t {
	case interpreter.NoticeWorkOpened:
		switch {
		case w.Kind == string(interpreter.ItemApprove):
			return "Approval for " + assigneeText(w.AssignedTo)
		case w.Kind == string(interpreter.ItemEscalation):
			return "Escalation for " + assigneeText(w.AssignedTo)
		case w.Kind == string(interpreter.ItemCallApproval):
			return "Call approval for " + assigneeText(w.AssignedTo)
		}
		return "Task for " + assigneeText(w.AssignedTo)
	case interpreter.NoticeWorkOverdue:
		if ev.Step != nil {
			return "Step " + ev.Step.ID + " of " + ev.Run.Process + " is overdue"
		}
		return "Overdue"
	case interpreter.NoticeWorkDecided:
		return "Decided: " + w.Decision + " by " + w.DecidedBy
	case interpreter.NoticeRunEnded:
		return "Run of " + ev.Run.Process + " ended: " + ev.Run.Outcome
	case interpreter.NoticeCallAwaitingApproval:
		return "Call of " + w.Tool + " awaits approval"
	case interpreter.NoticeCallDecided:
		return "Call of " + w.Tool + " " + w.Decision + " by " + w.DecidedBy
	}
	return ev.Type
}

// assigneeText names who an item is for.
func assigneeText(a interpreter.Assignee) string {
	if a.Person != "" {
		return a.Person
	}
	if a.Group != "" {
		return "group " + a.Group
	}
	return "nobody"
}

func itoa(n int) string { return strconv.Itoa(n) }
