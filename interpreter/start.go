package interpreter

import (
	"fmt"
	"strings"
	"time"
)

// DefaultOperators is the group that receives escalations unless a
// deployment names another.
const DefaultOperators = "operators"

// Start begins a run of a pinned process version.
type Start struct {
	RunID   string   `json:"runId"`
	Process *Process `json:"process"`
	Version int      `json:"version"`
	// Roles binds each role name of the process to a group. A role without
	// a binding is assigned to the group of the same name.
	Roles map[string]string `json:"roles,omitempty"`
	// Children binds each process step to the child version it runs
	// (baton-subprocess-1), as the version was published.
	Children Bindings `json:"children,omitempty"`
	// Operators is the group that receives escalations. Default
	// DefaultOperators.
	Operators string `json:"operators,omitempty"`
	Inputs    Values `json:"inputs"`
	// Mode is "live" (default) or "test".
	Mode    string `json:"mode"`
	Starter Actor  `json:"starter"`
	Limits  Limits `json:"limits"`
	// Parent is the run and process step that start a child run; nil for
	// a run started by start_run.
	Parent *ParentRef `json:"parent,omitempty"`
}

// StartRun checks a start and returns the run's machine with every
// automatic transition of the first step already applied. Inputs that break
// the process's declarations are refused as invalid with every issue.
func StartRun(c Start, now time.Time) (*Machine, error) {
	if c.Process == nil || c.RunID == "" {
		return nil, fmt.Errorf("start run: process and run id are required")
	}
	mode := c.Mode
	if mode == "" {
		mode = ModeLive
	}
	if mode != ModeLive && mode != ModeTest {
		return nil, Refuse(CodeInvalid, "mode must be live or test.", "mode: not one of live, test")
	}
	if c.Starter.Kind != ActorAgent && c.Starter.Kind != ActorPerson {
		return nil, Refuse(CodeForbidden, "Only an agent or a person can start a run.")
	}
	inputs := c.Inputs
	if inputs == nil {
		inputs = map[string]any{}
	}
	issues := CheckValues("inputs", c.Process.Inputs, inputs)
	if c.Starter.Kind == ActorAgent && (c.Process.UsesInitiator() || c.Children.NeedsInitiator()) {
		issues = append(issues, "initiator: a run started by an agent has no initiator, and this process assigns steps to initiator")
	}
	limits := c.Limits
	if limits.RunDataBytes <= 0 {
		limits.RunDataBytes = DefaultRunDataBytes
	}
	r := &Run{
		ID:        c.RunID,
		Process:   c.Process.Name,
		Version:   c.Version,
		Hash:      c.Process.Hash,
		Roles:     c.Roles,
		Operators: c.Operators,
		Mode:      mode,
		Limits:    limits,
		StartedBy: c.Starter,
		StartedAt: now,
		UpdatedAt: now,
		State:     RunActive,
		Data:      Data{Inputs: inputs, Steps: map[string]*StepData{}},
		Children:  c.Children,
		Parent:    c.Parent,
	}
	if r.Operators == "" {
		r.Operators = DefaultOperators
	}
	for _, s := range c.Process.Steps {
		r.Steps = append(r.Steps, &StepRun{ID: s.ID})
	}
	m := newMachine(c.Process, r)
	if size := m.dataSize(); size > limits.RunDataBytes {
		issues = append(issues, fmt.Sprintf("run data: over %d bytes", limits.RunDataBytes))
	}
	if len(issues) > 0 {
		return nil, Refuse(CodeInvalid, "The inputs do not match the process: "+strings.Join(issues, "; ")+".", issues...)
	}
	m.activate(c.Process.Steps[0].ID, now)
	m.tick(now)
	m.refreshState()
	m.settleAttempts(now)
	return m, nil
}
