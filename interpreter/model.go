// Package interpreter is the agentprocess specification as plain Go: it parses
// and validates PROCESS.md, computes its content hash, checks values against
// declared fields, and runs a process as a pure state machine.
//
// The package does no I/O and never reads the clock: time arrives as an
// argument. The Temporal workflow and the MCP gateway carry commands to it and
// its answers back; every rule of the specification lives here, once.
package interpreter

import (
	"encoding/json"
	"time"
)

// Profile names a specification profile a server can offer.
const (
	ProfileParallel = "parallel-1"
	ProfileCheck    = "check-1"
)

// Tool is the name of an MCP tool a server offers: the fourteen of spec §4,
// and call_tool of the baton-tools-1 profile. Every list of tools (the
// gateway's table, its argument and result schemas, its titles) is keyed by
// these constants.
type Tool string

// The tools of spec §4.1 and §4.2, and the profile's call_tool.
const (
	ToolDescribe      Tool = "describe"
	ToolListProcesses Tool = "list_processes"
	ToolStartRun      Tool = "start_run"
	ToolGetRun        Tool = "get_run"
	ToolGetWork       Tool = "get_work"
	ToolClaim         Tool = "claim"
	ToolSubmit        Tool = "submit"
	ToolEscalate      Tool = "escalate"
	ToolDecide        Tool = "decide"
	ToolCancel        Tool = "cancel"
	ToolRenew         Tool = "renew"
	// ToolUpload and ToolSendEvent are the tools publication depends on
	// (spec §4.2).
	ToolUpload    Tool = "upload"
	ToolSendEvent Tool = "send_event"
	ToolListRuns  Tool = "list_runs"
	// ToolCallTool is the MCP tool the baton-tools-1 profile adds.
	ToolCallTool Tool = "call_tool"
)

// Process is a parsed and validated PROCESS.md. It is immutable once parsed
// and serializes to JSON losslessly, so it can travel by value in a run's
// start input.
type Process struct {
	Name        string    `json:"name"`
	Description string    `json:"description"`
	Inputs      Fields    `json:"inputs,omitempty"`
	Requires    *Requires `json:"requires,omitempty"`
	Steps       []*Step   `json:"steps"`

	// Body is every byte after the newline that ends the closing "---" line,
	// exactly as written (SPEC-DECISIONS §22).
	Body string `json:"body"`
	// Frontmatter is the RFC 8785 canonical JSON of the parsed frontmatter.
	// encoding/json escapes <, > and & inside it when the Process is
	// marshalled; jcs.Transform of the decoded bytes restores them.
	Frontmatter json.RawMessage `json:"frontmatter"`
	// Hash is the lowercase hex SHA-256 content hash of spec §6 rule 5.
	Hash string `json:"hash"`
}

// Requires lists what the organization must have outside the server.
type Requires struct {
	Systems []string `json:"systems"`
}

// Type is one of the eight field types of spec §2.3.
type Type string

// The field types.
const (
	TypeString   Type = "string"
	TypeNumber   Type = "number"
	TypeBoolean  Type = "boolean"
	TypeDate     Type = "date"
	TypeDatetime Type = "datetime"
	TypeList     Type = "list"
	TypeObject   Type = "object"
	TypePerson   Type = "person"
)

// Valid reports whether t is one of the eight types.
func (t Type) Valid() bool {
	switch t {
	case TypeString, TypeNumber, TypeBoolean, TypeDate, TypeDatetime, TypeList, TypeObject, TypePerson:
		return true
	}
	return false
}

// Fields is an ordered set of declared fields, in the order written.
type Fields []*Field

// Lookup returns the field named name, or nil.
func (fs Fields) Lookup(name string) *Field {
	for _, f := range fs {
		if f.Name == name {
			return f
		}
	}
	return nil
}

// Field is one declared input or output field, or a list's item type (whose
// Name is empty).
type Field struct {
	Name        string `json:"name,omitempty"`
	Type        Type   `json:"type"`
	Description string `json:"description,omitempty"`
	Optional    bool   `json:"optional,omitempty"`
	// OneOf holds the allowed values: string, bool or json.Number.
	OneOf []any `json:"one_of,omitempty"`
	// Items is the item type of a list, nil when not declared.
	Items *Field `json:"items,omitempty"`
	// Short is true when the field was written as a bare type name.
	Short bool `json:"short,omitempty"`
}

// Kind is a step's kind key.
type Kind string

// The step kinds: the core's seven, the parallel profile's one and the
// baton-subprocess-1 profile's one.
const (
	KindAgent     Kind = "agent"
	KindTask      Kind = "task"
	KindApprove   Kind = "approve"
	KindWait      Kind = "wait"
	KindWaitUntil Kind = "wait_until"
	KindWaitFor   Kind = "wait_for"
	KindFinish    Kind = "finish"
	KindParallel  Kind = "parallel"
	KindProcess   Kind = "process"
)

// Kinds lists every kind key in the order the specification names them.
var Kinds = []Kind{KindAgent, KindTask, KindApprove, KindWait, KindWaitUntil, KindWaitFor, KindFinish, KindParallel, KindProcess}

// String returns the kind key.
func (k Kind) String() string { return string(k) }

// Person reports whether a person completes steps of this kind.
func (k Kind) Person() bool { return k == KindTask || k == KindApprove }

// Server reports whether the server itself completes steps of this kind.
func (k Kind) Server() bool {
	switch k {
	case KindWait, KindWaitUntil, KindWaitFor, KindFinish, KindParallel, KindProcess:
		return true
	}
	return false
}

// Join is the reserved next value that ends a parallel branch.
const Join = "join"

// Step is one entry of the frontmatter's steps list.
type Step struct {
	ID   string `json:"id"`
	Kind Kind   `json:"kind"`
	// Text is the kind key's value: instructions for agent and task, what is
	// approved for approve, the duration text for wait, the path for
	// wait_until, the event name for wait_for, the outcome for finish, the
	// child's name for process. Empty for parallel.
	Text string `json:"text,omitempty"`
	// Branches are the branch entry step ids of a parallel step.
	Branches []string `json:"branches,omitempty"`

	Output   Fields   `json:"output,omitempty"`
	Evidence []string `json:"evidence,omitempty"`
	// Next is the declared next: one route for a plain step id, two or more
	// for a list (NextList true). Nil when the step names no next; then the
	// following step in the list applies (see Process.NextOf).
	Next     []Route `json:"next,omitempty"`
	NextList bool    `json:"nextList,omitempty"`

	Person    string    `json:"person,omitempty"`
	OnReject  string    `json:"on_reject,omitempty"`
	Due       *Duration `json:"due,omitempty"`
	Timeout   *Duration `json:"timeout,omitempty"`
	OnTimeout string    `json:"on_timeout,omitempty"`
	// Wait is the parsed duration of a wait step.
	Wait *Duration `json:"wait,omitempty"`

	Check    *Check `json:"check,omitempty"`
	Advisory bool   `json:"advisory,omitempty"`

	// Tools are the downstream tools an agent step may call through Baton
	// (profile baton-tools-1), in the order written.
	Tools []ToolUse `json:"tools,omitempty"`

	// Call is what a process step runs (profile baton-subprocess-1).
	Call *ProcessCall `json:"call,omitempty"`
}

// Route is one way out of a step.
type Route struct {
	To   string `json:"to"`
	When string `json:"when,omitempty"`
}

// Duration is a spec §2.4 duration: an integer and m, h or d.
type Duration struct {
	Text string        `json:"text"`
	D    time.Duration `json:"d"`
}

// Check is a check-1 profile check: one or more questions.
type Check struct {
	// Short is true for the one-question string form.
	Short     bool        `json:"short,omitempty"`
	Questions []*Question `json:"questions"`
}

// QuestionKind is the kind of a check question.
type QuestionKind string

// The question kinds of the check profile.
const (
	QuestionYesNo  QuestionKind = "yes_no"
	QuestionChoice QuestionKind = "choice"
	QuestionRubric QuestionKind = "rubric"
)

// Question is one check question. Thresholds that were not written are nil
// and take the server's defaults.
type Question struct {
	Ask  string       `json:"ask"`
	Kind QuestionKind `json:"kind"`
	// Pass is the yes-probability threshold (yes/no) or the 0-based level
	// (rubric); nil when not written.
	Pass *float64 `json:"pass,omitempty"`
	// PassNames are the passing answer names of a choice question.
	PassNames []string `json:"passNames,omitempty"`
	Fail      *float64 `json:"fail,omitempty"`
	// OneOf holds a choice question's answers in the order written.
	OneOf      []Choice `json:"one_of,omitempty"`
	Unsure     []string `json:"unsure,omitempty"`
	Levels     []string `json:"levels,omitempty"`
	Confidence *float64 `json:"confidence,omitempty"`
}

// Choice is one answer of a choice question.
type Choice struct {
	Name        string `json:"name"`
	Description string `json:"description"`
}

// Step returns the step with the given id, or nil.
func (p *Process) Step(id string) *Step {
	for _, s := range p.Steps {
		if s.ID == id {
			return s
		}
	}
	return nil
}

// Index returns the position of the step with the given id, or -1.
func (p *Process) Index(id string) int {
	for i, s := range p.Steps {
		if s.ID == id {
			return i
		}
	}
	return -1
}

// NextOf returns the routes out of step s: its declared next, or else the
// following step in the list. It returns nil for a finish and for a last step
// without next (which validation refuses).
func (p *Process) NextOf(s *Step) []Route {
	if s.Kind == KindFinish {
		return nil
	}
	if s.Next != nil {
		return s.Next
	}
	i := p.Index(s.ID)
	if i < 0 || i+1 >= len(p.Steps) {
		return nil
	}
	return []Route{{To: p.Steps[i+1].ID}}
}

// Roles returns the role names used in person keys and as tool approvers
// (profile baton-tools-1), once each, in the order they first appear. An
// importer binds each to a group (spec §7).
func (p *Process) Roles() []string {
	var roles []string
	seen := map[string]bool{}
	add := func(role string) {
		if role == "" || role == "initiator" || IsPath(role) || seen[role] {
			return
		}
		seen[role] = true
		roles = append(roles, role)
	}
	for _, s := range p.Steps {
		add(s.Person)
		for _, role := range s.toolRoles() {
			add(role)
		}
	}
	return roles
}

// UsesTools reports whether any step has a tools: key, so running it needs
// the baton-tools-1 profile.
func (p *Process) UsesTools() bool {
	for _, s := range p.Steps {
		if len(s.Tools) > 0 {
			return true
		}
	}
	return false
}

// UsesInitiator reports whether any step is assigned to the run's initiator.
func (p *Process) UsesInitiator() bool {
	for _, s := range p.Steps {
		if s.Person == "initiator" {
			return true
		}
	}
	return false
}

// IsPath reports whether a person or wait_until value is a run-data path: a
// value containing a dot (role names cannot contain dots).
func IsPath(v string) bool {
	for i := 0; i < len(v); i++ {
		if v[i] == '.' {
			return true
		}
	}
	return false
}
