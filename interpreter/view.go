package interpreter

import (
	"strings"
	"time"
)

// View is the run view of tools.md: what start_run, get_run and every write
// but claim, renew and send_event return. It refers to the machine's state;
// serialize it before the next command.
type View struct {
	Run       RunInfo    `json:"run"`
	Data      *Data      `json:"data"`
	Steps     []StepView `json:"steps"`
	WorkItems []WorkItem `json:"workItems"`
	Body      string     `json:"body"`
}

// RunInfo is the view's run header.
type RunInfo struct {
	ID        string  `json:"id"`
	Process   string  `json:"process"`
	Version   int     `json:"version"`
	Mode      string  `json:"mode"`
	State     string  `json:"state"`
	Outcome   *string `json:"outcome"`
	Ended     *Ended  `json:"ended"`
	StartedBy string  `json:"startedBy"`
	StartedAt string  `json:"startedAt"`
	UpdatedAt string  `json:"updatedAt"`
}

// StepView is one entry of the view's steps table.
type StepView struct {
	ID      string  `json:"id"`
	Kind    Kind    `json:"kind"`
	State   *string `json:"state"`
	Due     string  `json:"due,omitempty"`
	Overdue *bool   `json:"overdue,omitempty"`
	// Children is a waiting process step's (baton-subprocess-1).
	Children *ChildCount `json:"children,omitempty"`
}

// WorkItem is an open work item as get_run and get_work show it.
type WorkItem struct {
	ID         string      `json:"id"`
	StepID     string      `json:"stepId"`
	Kind       string      `json:"kind"`
	Text       string      `json:"text"`
	Output     Fields      `json:"output"`
	Evidence   []string    `json:"evidence"`
	Next       []Route     `json:"next"`
	AssignedTo Assignee    `json:"assignedTo"`
	Snapshot   string      `json:"snapshot"`
	Due        *string     `json:"due"`
	Escalation *Escalation `json:"escalation"`
	Handoff    *Handoff    `json:"handoff"`
	Mode       string      `json:"mode,omitempty"`
	Decide     DecideCall  `json:"decide"`
	ReadySince time.Time   `json:"-"`
	RunID      string      `json:"-"`
	Overdue    bool        `json:"-"`
}

// DecideCall is the exact decide call a work item offers.
type DecideCall struct {
	Tool      string         `json:"tool"`
	Arguments DecideCallArgs `json:"arguments"`
	Decisions []string       `json:"decisions"`
}

// DecideCallArgs are the arguments of a DecideCall; the person fills in
// requestId and adds the decision.
type DecideCallArgs struct {
	RunID      string `json:"runId"`
	WorkItemID string `json:"workItemId"`
	Snapshot   string `json:"snapshot"`
	RequestID  string `json:"requestId"`
}

// RequestIDPlaceholder stands where the caller puts a fresh request id.
const RequestIDPlaceholder = "<new UUID>"

// AgentWork is one get_work item for an agent: a ready agent step.
type AgentWork struct {
	RunID      string    `json:"runId"`
	StepID     string    `json:"stepId"`
	Process    string    `json:"process"`
	Version    int       `json:"version"`
	Mode       string    `json:"mode"`
	ReadySince string    `json:"readySince"`
	Due        *string   `json:"due"`
	Overdue    bool      `json:"overdue"`
	Handoff    *Handoff  `json:"handoff"`
	Claim      ClaimCall `json:"claim"`
}

// ClaimCall is the exact claim call a get_work item offers.
type ClaimCall struct {
	Tool      string        `json:"tool"`
	Arguments ClaimCallArgs `json:"arguments"`
}

// ClaimCallArgs are the arguments of a ClaimCall.
type ClaimCallArgs struct {
	RunID     string `json:"runId"`
	StepID    string `json:"stepId"`
	RequestID string `json:"requestId"`
}

// PersonWork is one get_work item for a person.
type PersonWork struct {
	RunID    string   `json:"runId"`
	Process  string   `json:"process"`
	Version  int      `json:"version"`
	Mode     string   `json:"mode"`
	WorkItem WorkItem `json:"workItem"`
}

// View returns the run view at now.
func (m *Machine) View(now time.Time) *View {
	if m.checking {
		// Check's result is dropped: no view, and no snapshot hashed.
		return &View{}
	}
	r := m.run
	v := &View{
		Run: RunInfo{
			ID: r.ID, Process: r.Process, Version: r.Version, Mode: r.Mode,
			State: string(r.State), Ended: r.Ended, StartedBy: r.StartedBy.ID,
			StartedAt: FormatTime(r.StartedAt), UpdatedAt: FormatTime(m.updatedAt(now)),
		},
		Data:      m.shownData(),
		Steps:     make([]StepView, len(r.Steps)),
		WorkItems: m.WorkItems(now),
		Body:      m.proc.Body,
	}
	if r.Outcome != "" {
		o := r.Outcome
		v.Run.Outcome = &o
	}
	for i, sr := range r.Steps {
		sv := StepView{ID: sr.ID, Kind: m.proc.Steps[i].Kind, Children: childCount(sr)}
		if st := m.effectiveState(sr, now); st != StepNull {
			s := string(st)
			sv.State = &s
		}
		if sr.State.Open() && sr.Due != nil {
			sv.Due = FormatTime(*sr.Due)
			od := sr.Overdue || !now.Before(*sr.Due)
			sv.Overdue = &od
		}
		v.Steps[i] = sv
	}
	return v
}

// shownData is run data as the tools show it: the run's own, with an
// unsure verdict waiting on a person shown as steps.<id>.check
// (profile-check §3). It shares what it does not change.
func (m *Machine) shownData() *Data {
	var d *Data
	for _, sr := range m.run.Steps {
		if len(sr.PendingCheck) == 0 {
			continue
		}
		if d == nil {
			d = &Data{Inputs: m.run.Data.Inputs, Steps: make(map[string]*StepData, len(m.run.Data.Steps)+1)}
			for id, sd := range m.run.Data.Steps {
				d.Steps[id] = sd
			}
		}
		sd := StepData{History: []*Record{}}
		rec := &Record{}
		if cur := m.run.Data.Steps[sr.ID]; cur != nil {
			sd.History = cur.History
			if cur.Record != nil {
				c := *cur.Record
				rec = &c
			}
		}
		rec.Check = sr.PendingCheck
		sd.Record = rec
		d.Steps[sr.ID] = &sd
	}
	if d == nil {
		return &m.run.Data
	}
	return d
}

// updatedAt is when what the view shows last changed, as of now: the
// run's own stamp, or a lease end or due time that has passed since and
// that the view already reflects before Tick records it.
func (m *Machine) updatedAt(now time.Time) time.Time {
	t := m.run.UpdatedAt
	later := func(at time.Time) {
		if !now.Before(at) && at.After(t) {
			t = at
		}
	}
	if m.run.State.Over() {
		return t
	}
	for _, sr := range m.run.Steps {
		if sr.State == StepClaimed && sr.Lease != nil && sr.Checking == "" {
			later(sr.Lease.ExpiresAt)
		}
		if sr.State.Open() && sr.Due != nil && !sr.Overdue {
			later(*sr.Due)
		}
	}
	return t
}

// effectiveState is a step's state at now: a claim whose lease has run out
// shows ready even before Tick has run.
func (m *Machine) effectiveState(sr *StepRun, now time.Time) StepState {
	if sr.State == StepClaimed && sr.Lease != nil && sr.Checking == "" && !now.Before(sr.Lease.ExpiresAt) {
		return StepReady
	}
	return sr.State
}

// WorkItems returns the open work items, oldest first.
func (m *Machine) WorkItems(now time.Time) []WorkItem {
	items := []WorkItem{}
	snap := ""
	for _, it := range m.run.Items {
		if !it.Open {
			continue
		}
		if snap == "" {
			snap = m.Snapshot()
		}
		items = append(items, m.workItem(it, snap, now))
	}
	return items
}

func (m *Machine) workItem(it *Item, snap string, now time.Time) WorkItem {
	s, sr := m.stepRun(it.StepID)
	w := WorkItem{
		ID: it.ID, StepID: it.StepID, Kind: string(s.Kind), Text: s.Text,
		AssignedTo: it.AssignedTo, Snapshot: snap, Escalation: it.Escalation,
		Handoff: handoffView(sr.Handoff), ReadySince: it.Since, RunID: m.run.ID,
		Decide: DecideCall{
			Tool:      "decide",
			Arguments: DecideCallArgs{RunID: m.run.ID, WorkItemID: it.ID, Snapshot: snap, RequestID: RequestIDPlaceholder},
			Decisions: it.Kind.Decisions(),
		},
	}
	if s.Kind != KindApprove {
		cs := claimStep(s, m.proc)
		w.Output, w.Evidence, w.Next = cs.Output, cs.Evidence, cs.Next
	}
	if sr.Due != nil {
		d := FormatTime(*sr.Due)
		w.Due = &d
		w.Overdue = sr.Overdue || !now.Before(*sr.Due)
	}
	if it.Call != "" {
		m.callItemView(&w, it)
		if it.Due != nil && !now.Before(*it.Due) {
			w.Overdue = true
		}
	}
	if m.run.Mode == ModeTest {
		w.Mode = ModeTest
	}
	return w
}

// AgentWork lists the ready agent steps an agent may claim, in step order.
func (m *Machine) AgentWork(now time.Time) []AgentWork {
	items := []AgentWork{}
	if m.run.State.Over() {
		return items
	}
	for i, sr := range m.run.Steps {
		s := m.proc.Steps[i]
		if s.Kind != KindAgent || m.effectiveState(sr, now) != StepReady {
			continue
		}
		h := sr.Handoff
		if sr.State == StepClaimed && sr.Progress != "" {
			// The lease ran out before Tick: the progress is handed over.
			h = &Handoff{Progress: sr.Progress}
			if sr.Handoff != nil {
				c := *sr.Handoff
				c.Progress = sr.Progress
				h = &c
			}
		}
		w := AgentWork{
			RunID: m.run.ID, StepID: s.ID, Process: m.run.Process, Version: m.run.Version,
			Mode: m.run.Mode, ReadySince: FormatTime(sr.ReadySince), Handoff: handoffView(h),
			Claim: ClaimCall{Tool: "claim", Arguments: ClaimCallArgs{RunID: m.run.ID, StepID: s.ID, RequestID: RequestIDPlaceholder}},
		}
		if sr.Due != nil {
			d := FormatTime(*sr.Due)
			w.Due = &d
			w.Overdue = sr.Overdue || !now.Before(*sr.Due)
		}
		items = append(items, w)
	}
	return items
}

// PersonWork lists the open work items assigned to the actor, oldest first.
func (m *Machine) PersonWork(now time.Time, a Actor) []PersonWork {
	items := []PersonWork{}
	for _, w := range m.WorkItems(now) {
		it := m.item(w.ID)
		if !m.assigned(it, a) {
			continue
		}
		items = append(items, PersonWork{RunID: m.run.ID, Process: m.run.Process, Version: m.run.Version, Mode: m.run.Mode, WorkItem: w})
	}
	return items
}

// StepState names step id's state in v as messages and test expectations
// write it: the state, "null" for a step not reached or rewound, "absent"
// for a step the view does not list, and "unknown" without a view.
func (v *View) StepState(id string) string {
	if v == nil {
		return "unknown"
	}
	for _, s := range v.Steps {
		if s.ID == id {
			if s.State == nil {
				return "null"
			}
			return *s.State
		}
	}
	return "absent"
}

// StepStates describes every step's state in v for messages, as
// "gather=claimed, review=null" (the states as StepState names them), or
// "(no view)" without one.
func (v *View) StepStates() string {
	if v == nil {
		return "(no view)"
	}
	var b strings.Builder
	for i, s := range v.Steps {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(s.ID)
		b.WriteByte('=')
		b.WriteString(v.StepState(s.ID))
	}
	return b.String()
}
