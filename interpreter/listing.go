package interpreter

import (
	"encoding/json"
	"time"
)

// Listing is what the read model keeps of a run: its row for list_runs and
// its open work for get_work. The host writes it after every change; Seq
// orders the writes.
type Listing struct {
	RunID     string        `json:"runId"`
	Process   string        `json:"process"`
	Version   int           `json:"version"`
	State     string        `json:"state"`
	Outcome   string        `json:"outcome,omitempty"`
	Mode      string        `json:"mode"`
	Inputs    Values        `json:"inputs"`
	StartedBy string        `json:"startedBy"`
	StartedAt time.Time     `json:"startedAt"`
	UpdatedAt time.Time     `json:"updatedAt"`
	Seq       int64         `json:"seq"`
	Work      []ListingWork `json:"work"`
	// Final is the run view once the run has ended or been cancelled; it
	// never changes after that. Nil while the run goes on.
	Final json.RawMessage `json:"final,omitempty"`
	// Attempts are the step attempts that changed since the host last
	// wrote them (attempts.go); once these are stored, the host passes
	// AttemptRev to AttemptsWritten.
	Attempts   []Attempt `json:"attempts,omitempty"`
	AttemptRev int64     `json:"attemptRev,omitempty"`
	// Parent is the run and process step that started a child run
	// (baton-subprocess-1); nil for a run start_run started.
	Parent *ParentRef `json:"parent,omitempty"`
}

// ListingWork is one piece of open work: a ready agent step or an open
// work item.
type ListingWork struct {
	StepID     string `json:"stepId"`
	WorkItemID string `json:"workItemId,omitempty"`
	// Kind is agent, task, approve or escalation.
	Kind       string     `json:"kind"`
	ReadySince time.Time  `json:"readySince"`
	Due        *time.Time `json:"due,omitempty"`
	Overdue    bool       `json:"overdue,omitempty"`
	Group      string     `json:"group,omitempty"`
	Person     string     `json:"person,omitempty"`
	// AlsoGroups are the other groups that may decide the item: a
	// tool-call approval names its approver groups, and its assignedTo
	// shows only the first.
	AlsoGroups []string        `json:"alsoGroups,omitempty"`
	Handoff    json.RawMessage `json:"handoff,omitempty"`
	// Item is the work item exactly as get_run shows it (nil for an agent
	// step); its snapshot is current as long as Seq is.
	Item json.RawMessage `json:"item,omitempty"`
}

// Listing returns the run's read-model entry at now.
func (m *Machine) Listing(now time.Time) (*Listing, error) {
	r := m.run
	l := &Listing{
		RunID: r.ID, Process: r.Process, Version: r.Version, State: string(r.State), Outcome: r.Outcome,
		Mode: r.Mode, Inputs: r.Data.Inputs, StartedBy: r.StartedBy.ID, StartedAt: r.StartedAt,
		UpdatedAt: m.updatedAt(now), Seq: r.Seq, Work: []ListingWork{},
		Attempts: m.pendingAttempts(), AttemptRev: r.AttemptRev, Parent: r.Parent,
	}
	for _, w := range m.AgentWork(now) {
		_, sr := m.stepRun(w.StepID)
		lw := ListingWork{StepID: w.StepID, Kind: string(KindAgent), ReadySince: sr.ReadySince, Due: sr.Due, Overdue: w.Overdue}
		if w.Handoff != nil {
			b, err := json.Marshal(w.Handoff)
			if err != nil {
				return nil, err
			}
			lw.Handoff = b
		}
		l.Work = append(l.Work, lw)
	}
	for _, w := range m.WorkItems(now) {
		it := m.item(w.ID)
		b, err := json.Marshal(w)
		if err != nil {
			return nil, err
		}
		_, sr := m.stepRun(w.StepID)
		due, kind := sr.Due, string(it.Kind)
		if it.Call != "" {
			due, kind = it.Due, w.Kind
		}
		lw := ListingWork{
			StepID: w.StepID, WorkItemID: w.ID, Kind: kind, ReadySince: it.Since, Due: due,
			Overdue: w.Overdue, Group: it.AssignedTo.Group, Person: it.AssignedTo.Person, Item: b,
		}
		for _, g := range it.Approvers {
			if g != it.AssignedTo.Group {
				lw.AlsoGroups = append(lw.AlsoGroups, g)
			}
		}
		if w.Handoff != nil {
			lw.Handoff, _ = json.Marshal(w.Handoff)
		}
		l.Work = append(l.Work, lw)
	}
	if r.State.Over() {
		b, err := json.Marshal(m.View(now))
		if err != nil {
			return nil, err
		}
		l.Final = b
	}
	return l, nil
}
