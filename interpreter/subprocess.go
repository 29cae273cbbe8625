package interpreter

import (
	"encoding/json"
	"strings"
)

// This file holds the types of the baton-subprocess-1 profile
// (docs/profile-subprocess.md): a process step that runs another published
// process once, or once per item of a list, and the pinned binding of each
// such step to a version. Parsing is parse_subprocess.go's, the checks
// against the published children subprocess_bind.go's.

// ProfileSubprocess is Baton's sub-process profile.
const ProfileSubprocess = "baton-subprocess-1"

// The limits of the profile, each a server flag (docs/profile-subprocess.md
// §7).
const (
	// DefaultMaxDepth is how many levels of processes may nest below a
	// process by default.
	DefaultMaxDepth = 4
	// DefaultMaxChildren is how many children one process step may start
	// by default.
	DefaultMaxChildren = 1000
)

// ProcessCall is what a process step runs: a published process, once or
// once per item of a list, with inputs taken from run data or written
// literally.
type ProcessCall struct {
	// Process is the child's name (the step's Text).
	Process string `json:"process"`
	// Version is version: N as written; 0 binds the latest published
	// version at publication.
	Version int `json:"version,omitempty"`
	// ForEach is the path of a list: one child per item. "" runs one child.
	ForEach string `json:"for_each,omitempty"`
	// Inputs are the child's start inputs, in the order written.
	Inputs []CallInput `json:"inputs"`
	// Concurrency is how many children run at once; 0 sets no bound of
	// the step's own.
	Concurrency int `json:"concurrency,omitempty"`
	// OnOutcome routes a child's outcome to a step, in the order written.
	OnOutcome []OutcomeRoute `json:"on_outcome,omitempty"`
}

// CallInput is one input a process step gives its child: a path into run
// data (or into the item), or a literal value.
type CallInput struct {
	Name string `json:"name"`
	// Path is inputs.<field>, steps.<id>.output.<field>, item or
	// item.<field>; "" for a literal.
	Path string `json:"path,omitempty"`
	// Value is the literal as exact JSON, when Path is "".
	Value json.RawMessage `json:"value,omitempty"`
}

// OutcomeRoute sends the parent to a step when a child ends with an
// outcome.
type OutcomeRoute struct {
	Outcome string `json:"outcome"`
	To      string `json:"to"`
}

// IsCallPath reports whether a string in a process step's inputs is a path
// rather than literal text: item, or text starting with item., inputs. or
// steps. (docs/profile-subprocess.md §1.3).
func IsCallPath(s string) bool {
	return s == "item" || strings.HasPrefix(s, "item.") || strings.HasPrefix(s, "inputs.") || strings.HasPrefix(s, "steps.")
}

// Route returns the step on_outcome names for outcome, if any.
func (c *ProcessCall) Route(outcome string) (string, bool) {
	for _, r := range c.OnOutcome {
		if r.Outcome == outcome {
			return r.To, true
		}
	}
	return "", false
}

// ChildInputs builds one child's start inputs. read looks up a path
// inputs.<field> or steps.<id>.output.<field> in the parent's run data;
// item is the list element this child runs for (nil without for_each). A
// path that resolves to nothing leaves its input out, so the child's own
// start check names what is missing.
func (c *ProcessCall) ChildInputs(read func(path string) (any, bool), item any) Values {
	out := Values{}
	for _, in := range c.Inputs {
		if in.Path == "" {
			v, err := DecodeJSON(in.Value)
			if err == nil {
				out[in.Name] = v
			}
			continue
		}
		var v any
		var ok bool
		switch {
		case in.Path == "item":
			v, ok = item, item != nil
		case strings.HasPrefix(in.Path, "item."):
			if obj, isObj := item.(map[string]any); isObj {
				v, ok = obj[in.Path[len("item."):]]
			}
		default:
			v, ok = read(in.Path)
		}
		if ok && v != nil {
			out[in.Name] = v
		}
	}
	return out
}

// ChildBinding pins the published version a process step runs. A
// published parent version holds one per process step, in step order; a
// run carries them in its start input and keeps them for life.
type ChildBinding struct {
	Step    string `json:"step"`
	Process string `json:"process"`
	// Version is the bound version; 0 only when a folder beside stood in
	// for the child (baton validate).
	Version int    `json:"version"`
	Hash    string `json:"hash"`
	// Initiator is true when the child, or a process below it, assigns
	// steps to initiator: a run of the parent then needs one (core §3.4).
	Initiator bool `json:"initiator,omitempty"`
}

// Bindings are a published version's child bindings, in step order.
type Bindings []ChildBinding

// For returns the binding of a process step.
func (b Bindings) For(step string) (ChildBinding, bool) {
	for _, c := range b {
		if c.Step == step {
			return c, true
		}
	}
	return ChildBinding{}, false
}

// NeedsInitiator reports whether a child bound here needs the run's
// initiator.
func (b Bindings) NeedsInitiator() bool {
	for _, c := range b {
		if c.Initiator {
			return true
		}
	}
	return false
}

// UsesProcesses reports whether any step is a process step, so running it
// needs the baton-subprocess-1 profile.
func (p *Process) UsesProcesses() bool {
	for _, s := range p.Steps {
		if s.Kind == KindProcess {
			return true
		}
	}
	return false
}

// Outcomes returns every outcome a run of p can end with, as a parent's
// on_outcome may name them: its finish outcomes in step order, rejected
// when an approval has no on_reject, then failed and cancelled, each once.
func (p *Process) Outcomes() []string {
	var out []string
	add := func(o string) {
		if !contains(out, o) {
			out = append(out, o)
		}
	}
	for _, s := range p.Steps {
		if s.Kind == KindFinish {
			add(s.Text)
		}
	}
	for _, s := range p.Steps {
		if s.Kind == KindApprove && s.OnReject == "" {
			add("rejected")
		}
	}
	add("failed")
	add("cancelled")
	return out
}

// Profiles returns the profiles running p needs, by its own keys (not its
// children's): parallel-1, check-1, baton-tools-1, baton-subprocess-1.
func (p *Process) Profiles() []string {
	var out []string
	add := func(used bool, profile string) {
		if used && !contains(out, profile) {
			out = append(out, profile)
		}
	}
	for _, s := range p.Steps {
		add(s.Kind == KindParallel, ProfileParallel)
		add(s.Check != nil, ProfileCheck)
		add(len(s.Tools) > 0, ProfileTools)
		add(s.Kind == KindProcess, ProfileSubprocess)
	}
	return out
}

// NeedsTools returns the optional tools of spec §4.2 that running p needs:
// upload for file evidence, send_event for wait_for.
func (p *Process) NeedsTools() []Tool {
	var out []Tool
	add := func(used bool, t Tool) {
		if used && !contains(ToolNames(out), string(t)) {
			out = append(out, t)
		}
	}
	for _, s := range p.Steps {
		add(contains(s.Evidence, "file"), ToolUpload)
		add(s.Kind == KindWaitFor, ToolSendEvent)
	}
	return out
}
