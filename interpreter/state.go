package interpreter

import (
	"bytes"
	"encoding/json"
	"time"
)

// RunState is the state of a run (spec §3.5).
type RunState string

// The run states.
const (
	RunActive    RunState = "active"
	RunWaiting   RunState = "waiting"
	RunEnded     RunState = "ended"
	RunCancelled RunState = "cancelled"
)

// String returns the state's name.
func (s RunState) String() string { return string(s) }

// Over reports whether the run has ended or been cancelled.
func (s RunState) Over() bool { return s == RunEnded || s == RunCancelled }

// StepState is the state of a step (spec §3.5). The zero value is the spec's
// null: the step is not currently reached.
type StepState string

// The step states.
const (
	StepNull      StepState = ""
	StepReady     StepState = "ready"
	StepClaimed   StepState = "claimed"
	StepWaiting   StepState = "waiting"
	StepDone      StepState = "done"
	StepFailed    StepState = "failed"
	StepCancelled StepState = "cancelled"
)

// String returns the state's name, "null" for StepNull.
func (s StepState) String() string {
	if s == StepNull {
		return "null"
	}
	return string(s)
}

// Open reports whether a step in this state is unfinished work.
func (s StepState) Open() bool { return s == StepReady || s == StepClaimed || s == StepWaiting }

// Mode is a run's mode.
const (
	ModeLive = "live"
	ModeTest = "test"
)

// ActorKind is the kind of identity making a call.
type ActorKind string

// The identity kinds.
const (
	ActorAgent    ActorKind = "agent"
	ActorPerson   ActorKind = "person"
	ActorOperator ActorKind = "operator"
)

// Actor is the identity making a call, as the gateway authenticated it. For
// a person, ID is the email address.
type Actor struct {
	ID     string    `json:"id"`
	Kind   ActorKind `json:"kind"`
	Groups []string  `json:"groups,omitempty"`
}

// Human reports whether the identity is a person or an operator.
func (a Actor) Human() bool { return a.Kind == ActorPerson || a.Kind == ActorOperator }

func (a Actor) inGroup(g string) bool {
	for _, x := range a.Groups {
		if x == g {
			return true
		}
	}
	return false
}

// Limits are the server limits a run is held to, pinned at start.
type Limits struct {
	// RunDataBytes caps the compact JSON size of run data. Default 262144.
	RunDataBytes int `json:"runDataBytes"`
	// Check holds the check profile's thresholds and the evaluator's view
	// of run data. Zero fields take the profile's defaults.
	Check CheckLimits `json:"check,omitzero"`
	// Children caps how many children one process step may start
	// (baton-subprocess-1). Default DefaultMaxChildren.
	Children int `json:"children,omitempty"`
}

// DefaultRunDataBytes is the default run-data cap.
const DefaultRunDataBytes = 262144

// Evidence is an evidence item as recorded in run data. SHA256 is set on
// file items; the gateway adds a short-lived url when it returns run data.
type Evidence struct {
	Kind   string `json:"kind"`
	Ref    string `json:"ref"`
	SHA256 string `json:"sha256,omitempty"`
	URL    string `json:"url,omitempty"`
}

// Record is one completion of a step in run data (spec §3.1).
type Record struct {
	Output   map[string]any  `json:"output,omitzero"`
	Evidence []Evidence      `json:"evidence,omitempty"`
	Summary  string          `json:"summary,omitempty"`
	Next     string          `json:"next,omitempty"`
	Reason   string          `json:"reason,omitempty"`
	Decision string          `json:"decision,omitempty"`
	Note     *string         `json:"note,omitempty"`
	Check    json.RawMessage `json:"check,omitempty"`
	By       string          `json:"by,omitempty"`
	At       string          `json:"at,omitempty"`
}

// StepData is run data's entry for one step: its current completion and the
// earlier ones.
type StepData struct {
	*Record
	History []*Record `json:"history"`
}

// MarshalJSON flattens the current record beside history.
func (d StepData) MarshalJSON() ([]byte, error) {
	type flat struct {
		Record
		History []*Record `json:"history"`
	}
	f := flat{History: d.History}
	if d.Record != nil {
		f.Record = *d.Record
	}
	if f.History == nil {
		f.History = []*Record{}
	}
	// Without HTML escapes, as RunDataSize counts: an escaped < is six
	// bytes, and outputs of HTML would reach the run-data cap early.
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(f); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// Data is a run's run data: inputs and, per reached step, its records.
type Data struct {
	Inputs map[string]any       `json:"inputs"`
	Steps  map[string]*StepData `json:"steps"`
}

// Returned is what a person left when returning an escalated step.
type Returned struct {
	Note string `json:"note"`
	By   string `json:"by"`
	At   string `json:"at"`
}

// Handoff is what earlier attempts at a step left for the next one.
type Handoff struct {
	Progress string          `json:"progress,omitempty"`
	Returned *Returned       `json:"returned,omitempty"`
	Issues   []string        `json:"issues,omitempty"`
	Check    json.RawMessage `json:"check,omitempty"`
}

func (h *Handoff) empty() bool {
	return h == nil || (h.Progress == "" && h.Returned == nil && len(h.Issues) == 0 && len(h.Check) == 0)
}

// Lease is a live claim on an agent step.
type Lease struct {
	ID        string    `json:"id"`
	Holder    string    `json:"holder"`
	ExpiresAt time.Time `json:"expiresAt"`
}

// Escalation is an agent's hand-over of its step to people, or a check's
// when it was unsure (profile-check §3): then Check holds the verdict and
// Candidate the submission it held.
type Escalation struct {
	Note      string          `json:"note"`
	By        string          `json:"by"`
	At        string          `json:"at"`
	Check     json.RawMessage `json:"check,omitempty"`
	Candidate *Record         `json:"candidate,omitempty"`
}

// Assignee is who may decide a work item: a group or one person.
type Assignee struct {
	Group  string `json:"group,omitempty"`
	Person string `json:"person,omitempty"`
}

// ItemKind distinguishes the three sorts of work item.
type ItemKind string

// The work item sorts.
const (
	ItemTask       ItemKind = "task"
	ItemApprove    ItemKind = "approve"
	ItemEscalation ItemKind = "escalation"
)

// The work items of the baton-tools-1 profile (docs/profile-tools.md): the
// approval of a call, and the question whether a call whose outcome is
// unknown happened. On the wire they are an approve and a task.
const (
	ItemCallApproval ItemKind = "call_approval"
	ItemCallOutcome  ItemKind = "call_outcome"
)

// Decisions a work item accepts (tools.md, SPEC-DECISIONS §24,
// profile-tools §4.2 and §6.4).
func (k ItemKind) Decisions() []string {
	switch k {
	case ItemTask, ItemCallOutcome:
		return []string{DecisionCompleted, DecisionFailed}
	case ItemApprove:
		return []string{DecisionApproved, DecisionRejected, DecisionFailed}
	case ItemCallApproval:
		return []string{DecisionApproved, DecisionRejected}
	default:
		return []string{DecisionReturned, DecisionCompleted, DecisionFailed}
	}
}

// The decisions of spec §3.4.
const (
	DecisionCompleted = "completed"
	DecisionApproved  = "approved"
	DecisionRejected  = "rejected"
	DecisionReturned  = "returned"
	DecisionFailed    = "failed"
)

// Item is a work item, open or closed. Closed items are kept so that a late
// decision learns `already_decided` rather than `not_found`.
type Item struct {
	ID         string      `json:"id"`
	StepID     string      `json:"stepId"`
	Kind       ItemKind    `json:"kind"`
	AssignedTo Assignee    `json:"assignedTo"`
	Escalation *Escalation `json:"escalation,omitempty"`
	Since      time.Time   `json:"since"`
	Open       bool        `json:"open"`
	// Checking names the check in flight on a decision of this item.
	Checking string `json:"checking,omitempty"`
	// Call is the digest of the call an item of the tools profile is
	// about; Approvers and Floor who may approve it (ResolvedTool); Due
	// its approval SLA; Why and SentAt what an unknown outcome's item
	// says.
	Call      string     `json:"call,omitempty"`
	Approvers []string   `json:"approvers,omitempty"`
	Floor     []string   `json:"floor,omitempty"`
	Due       *time.Time `json:"due,omitempty"`
	Overdue   bool       `json:"overdue,omitempty"`
	Why       string     `json:"why,omitempty"`
	SentAt    string     `json:"sentAt,omitempty"`
}

// Step is the run-time state of one step of the process.
type StepRun struct {
	ID    string    `json:"id"`
	State StepState `json:"state,omitempty"`
	// AttemptSeq is the machine sequence number at which the current attempt
	// began (the step was made ready by order, rework or fork).
	AttemptSeq int64 `json:"attemptSeq,omitempty"`
	// DoneSeq is the sequence number of the step's latest completion, kept
	// when rework moves that completion into history: rework rewinds the
	// steps completed after the returned-to step's latest completion.
	DoneSeq    int64      `json:"doneSeq,omitempty"`
	ReadySince time.Time  `json:"readySince,omitzero"`
	Due        *time.Time `json:"due,omitempty"`
	Overdue    bool       `json:"overdue,omitempty"`
	// Timer is when a wait, wait_until or wait_for timeout fires.
	Timer    *time.Time `json:"timer,omitempty"`
	Lease    *Lease     `json:"lease,omitempty"`
	Progress string     `json:"progress,omitempty"`
	Handoff  *Handoff   `json:"handoff,omitempty"`
	// Joined lists the branch entries of a parallel step whose branch has
	// reached join.
	Joined []string `json:"joined,omitempty"`
	// Checking names the check in flight on a submission of this step:
	// while it is, the lease does not run out and other submissions wait.
	Checking string `json:"checking,omitempty"`
	// PendingCheck is an unsure verdict waiting on a person; run data
	// shows it as steps.<id>.check meanwhile (profile-check §3).
	PendingCheck json.RawMessage `json:"pendingCheck,omitempty"`
	// Fanout is a process step's children (baton-subprocess-1).
	Fanout *Fanout `json:"fanout,omitempty"`
}

// HeldEvent is an event delivered before (or without) its wait.
type HeldEvent struct {
	Name   string         `json:"name"`
	Data   map[string]any `json:"data,omitempty"`
	Sender string         `json:"sender"`
	At     time.Time      `json:"at"`
}

// Ended records who ended a run, when and why.
type Ended struct {
	By   string  `json:"by"`
	At   string  `json:"at"`
	Note *string `json:"note"`
}

// Run is the whole serializable state of one run. It travels through
// continue-as-new as JSON; Machine wraps it with the pinned process.
type Run struct {
	ID        string            `json:"id"`
	Process   string            `json:"process"`
	Version   int               `json:"version"`
	Hash      string            `json:"hash"`
	Roles     map[string]string `json:"roles,omitempty"`
	Operators string            `json:"operators"`
	Mode      string            `json:"mode"`
	Limits    Limits            `json:"limits"`
	StartedBy Actor             `json:"startedBy"`
	StartedAt time.Time         `json:"startedAt"`
	UpdatedAt time.Time         `json:"updatedAt"`
	State     RunState          `json:"state"`
	Outcome   string            `json:"outcome,omitempty"`
	Ended     *Ended            `json:"ended,omitempty"`
	// Seq counts state changes; the read model keeps the newest.
	Seq      int64        `json:"seq"`
	Data     Data         `json:"data"`
	Steps    []*StepRun   `json:"steps"`
	Items    []*Item      `json:"items,omitempty"`
	Held     []*HeldEvent `json:"held,omitempty"`
	NextItem int          `json:"nextItem"`
	// NextCheck numbers checks in flight.
	NextCheck int `json:"nextCheck,omitempty"`
	// Tools holds, by step id, the baton-tools-1 profile's journal.
	Tools map[string]*StepTools `json:"tools,omitempty"`
	// Attempts are the open step attempts and those ended but not yet
	// written (attempts.go); AttemptRev counts their changes, and
	// AttemptsWritten is the AttemptRev the host last wrote.
	Attempts        []*Attempt `json:"attempts,omitempty"`
	AttemptRev      int64      `json:"attemptRev,omitempty"`
	AttemptsWritten int64      `json:"attemptsWritten,omitempty"`
	// Children are the versions the run's process steps run, pinned at
	// start (baton-subprocess-1); Parent is the run and step that started
	// this run, when a process step did.
	Children Bindings   `json:"children,omitempty"`
	Parent   *ParentRef `json:"parent,omitempty"`
}
