package proctest

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/baton-run/baton/interpreter"
)

// Expect is what must hold after an action, or at a point of the script.
type Expect struct {
	Pos Pos
	// Outcome is the finish the run ended at.
	Outcome *string
	// State is the run's state: active, waiting, ended, cancelled.
	State string
	// Steps maps step ids to states (null for unreached).
	Steps []KeyValue
	// Data maps run-data paths (inputs.amount, steps.review.output.x) to
	// values.
	Data []KeyValue
	// Work lists the open work items: step and assignee (group or person).
	Work    []WorkExpect
	HasWork bool
	// Ready lists the agent steps ready to claim.
	Ready    []string
	HasReady bool
	// Overdue lists the steps past their due time.
	Overdue    []string
	HasOverdue bool
	// Refused expects the action refused, with this code and these issues.
	Refused *Refusal
	// Handoff is what the claim (or the step's work item) hands over.
	Handoff *HandoffExpect
	// Status is a call's status.
	Status string
}

// KeyValue is one entry of a mapping expectation, with its place.
type KeyValue struct {
	Pos   Pos
	Key   string
	Value any
}

// WorkExpect is one open work item.
type WorkExpect struct {
	Step string `json:"step"`
	To   string `json:"to"`
	Kind string `json:"kind,omitempty"`
}

// Refusal is an expected refusal.
type Refusal struct {
	Code   string
	Issues []string
}

// HandoffExpect is what a handoff must carry; empty fields are not checked.
type HandoffExpect struct {
	Progress string
	Returned string
	Issues   []string
	Check    bool
}

// expect reads an expect: entry.
func (p *parser) expect(n *yaml.Node) (*Expect, error) {
	kv, err := p.fields(n, "expect", "outcome", "state", "steps", "data", "work", "ready", "overdue", "refused", "handoff", "status")
	if err != nil {
		return nil, err
	}
	e := &Expect{Pos: at(n)}
	for i := 0; i < len(kv); i += 2 {
		k, v := kv[i], kv[i+1]
		switch k.Value {
		case "outcome":
			s, err := p.str(v, "outcome")
			if err != nil {
				return nil, err
			}
			e.Outcome = &s
		case "state":
			if e.State, err = p.str(v, "state"); err != nil {
				return nil, err
			}
		case "status":
			if e.Status, err = p.str(v, "status"); err != nil {
				return nil, err
			}
		case "steps", "data":
			if v.Kind != yaml.MappingNode {
				return nil, p.fail(v, "%s must be a mapping", k.Value)
			}
			for j := 0; j < len(v.Content); j += 2 {
				kk, vv := v.Content[j], v.Content[j+1]
				val, err := p.value(vv, k.Value+" "+kk.Value)
				if err != nil {
					return nil, err
				}
				entry := KeyValue{Pos: at(kk), Key: kk.Value, Value: val}
				if k.Value == "steps" {
					if val != nil {
						if _, ok := val.(string); !ok {
							return nil, p.fail(vv, "steps: the state of %s is a word such as ready or done, or null", kk.Value)
						}
					}
					e.Steps = append(e.Steps, entry)
				} else {
					e.Data = append(e.Data, entry)
				}
			}
		case "ready", "overdue":
			var l []string
			if v.Tag == "!!null" {
				l = []string{}
			} else if l, err = p.strs(v, k.Value); err != nil {
				return nil, err
			}
			if k.Value == "ready" {
				e.Ready, e.HasReady = l, true
			} else {
				e.Overdue, e.HasOverdue = l, true
			}
		case "work":
			e.HasWork = true
			e.Work = []WorkExpect{}
			if v.Tag == "!!null" {
				continue
			}
			if v.Kind != yaml.SequenceNode {
				return nil, p.fail(v, "work must be a list of {step, to}")
			}
			for _, wn := range v.Content {
				var w WorkExpect
				if _, err := p.fields(wn, "a work item", "step", "to", "kind"); err != nil {
					return nil, err
				}
				if err := wn.Decode(&w); err != nil || w.Step == "" {
					return nil, p.fail(wn, "a work item is {step, to[, kind]}")
				}
				e.Work = append(e.Work, w)
			}
		case "refused":
			e.Refused = &Refusal{}
			if v.Kind == yaml.ScalarNode {
				e.Refused.Code = v.Value
				continue
			}
			rk, err := p.fields(v, "refused", "code", "issues")
			if err != nil {
				return nil, err
			}
			for j := 0; j < len(rk); j += 2 {
				if rk[j].Value == "code" {
					if e.Refused.Code, err = p.str(rk[j+1], "code"); err != nil {
						return nil, err
					}
				} else if e.Refused.Issues, err = p.strs(rk[j+1], "issues"); err != nil {
					return nil, err
				}
			}
		case "handoff":
			hk, err := p.fields(v, "handoff", "progress", "returned", "issues", "check")
			if err != nil {
				return nil, err
			}
			e.Handoff = &HandoffExpect{}
			for j := 0; j < len(hk); j += 2 {
				hv := hk[j+1]
				switch hk[j].Value {
				case "progress":
					e.Handoff.Progress, err = p.str(hv, "progress")
				case "returned":
					e.Handoff.Returned, err = p.str(hv, "returned")
				case "issues":
					e.Handoff.Issues, err = p.strs(hv, "issues")
				case "check":
					e.Handoff.Check = hv.Value == "true"
				}
				if err != nil {
					return nil, err
				}
			}
		}
	}
	return e, nil
}

// expect checks an action's expectations against the view after it and
// what it returned.
func (r *caseRun) expect(a *Action, v *interpreter.View, out result) *Failure {
	e := a.Expect
	failAt := func(pos Pos, expected, got string) *Failure {
		f := r.fail(a, expected, got)
		f.Pos = pos
		return f
	}
	if e.State != "" && v.Run.State != e.State {
		return failAt(e.Pos, "run state "+e.State, "run state "+v.Run.State+" (steps: "+v.StepStates()+")")
	}
	if e.Outcome != nil {
		got := "no outcome"
		if v.Run.Outcome != nil {
			got = "outcome " + *v.Run.Outcome
		}
		if v.Run.Outcome == nil || *v.Run.Outcome != *e.Outcome {
			return failAt(e.Pos, "outcome "+*e.Outcome, got+", run "+v.Run.State+" (steps: "+v.StepStates()+")")
		}
	}
	for _, kv := range e.Steps {
		want := "null"
		if s, ok := kv.Value.(string); ok {
			want = s
		}
		if got := v.StepState(kv.Key); got != want {
			return failAt(kv.Pos, "step "+kv.Key+" "+want, "step "+kv.Key+" "+got)
		}
	}
	if len(e.Data) > 0 {
		var data any
		b, _ := json.Marshal(v.Data)
		_ = json.Unmarshal(b, &data)
		for _, kv := range e.Data {
			got, ok := lookup(data, kv.Key)
			want := normal(kv.Value)
			if !ok {
				return failAt(kv.Pos, kv.Key+" = "+show(want), kv.Key+" is not in run data")
			}
			if !reflect.DeepEqual(got, want) {
				return failAt(kv.Pos, kv.Key+" = "+show(want), kv.Key+" = "+show(got))
			}
		}
	}
	if e.HasWork {
		got := openWork(v)
		if !workEqual(e.Work, got) {
			return failAt(e.Pos, "open work "+describeExpectedWork(e.Work), "open work "+describeWork(v))
		}
	}
	if e.HasReady {
		got := readySteps(v)
		want := slices.Clone(e.Ready)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			return failAt(e.Pos, "ready "+list(want), "ready "+list(got))
		}
	}
	if e.HasOverdue {
		got := []string{}
		for _, s := range v.Steps {
			if s.Overdue != nil && *s.Overdue {
				got = append(got, s.ID)
			}
		}
		slices.Sort(got)
		want := slices.Clone(e.Overdue)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			return failAt(e.Pos, "overdue "+list(want), "overdue "+list(got))
		}
	}
	if e.Handoff != nil {
		var h *interpreter.Handoff
		switch {
		case out.claim != nil:
			h = out.claim.Handoff
		default:
			for _, it := range v.WorkItems {
				if it.StepID == a.Step {
					h = it.Handoff
				}
			}
		}
		if f := checkHandoff(e.Handoff, h); f != "" {
			return failAt(e.Pos, "handoff with "+describeHandoffWant(e.Handoff), f)
		}
	}
	if e.Status != "" {
		got := "no call result"
		if out.call != nil {
			got = "status " + string(out.call.Status)
		}
		if out.call == nil || string(out.call.Status) != e.Status {
			if out.call != nil && out.call.Message != "" {
				got += " (" + out.call.Message + ")"
			}
			return failAt(e.Pos, "status "+e.Status, got)
		}
	}
	return nil
}

func checkHandoff(want *HandoffExpect, h *interpreter.Handoff) string {
	if h == nil {
		return "no handoff"
	}
	b, _ := json.Marshal(h)
	got := "handoff " + string(b)
	if want.Progress != "" && h.Progress != want.Progress {
		return got
	}
	if want.Returned != "" && (h.Returned == nil || h.Returned.Note != want.Returned) {
		return got
	}
	for _, is := range want.Issues {
		if !slices.Contains(h.Issues, is) {
			return got
		}
	}
	if want.Check && len(h.Check) == 0 {
		return got
	}
	return ""
}

func describeHandoffWant(h *HandoffExpect) string {
	var parts []string
	if h.Progress != "" {
		parts = append(parts, fmt.Sprintf("progress %q", h.Progress))
	}
	if h.Returned != "" {
		parts = append(parts, fmt.Sprintf("returned %q", h.Returned))
	}
	if len(h.Issues) > 0 {
		parts = append(parts, "issues "+list(h.Issues))
	}
	if h.Check {
		parts = append(parts, "a check")
	}
	if len(parts) == 0 {
		return "anything"
	}
	return strings.Join(parts, ", ")
}

// lookup follows a dotted path into run data.
func lookup(data any, path string) (any, bool) {
	cur := data
	for _, part := range strings.Split(path, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			if l, ok := cur.([]any); ok {
				var i int
				if _, err := fmt.Sscanf(part, "%d", &i); err == nil && i >= 0 && i < len(l) {
					cur = l[i]
					continue
				}
			}
			return nil, false
		}
		if cur, ok = m[part]; !ok {
			return nil, false
		}
	}
	return cur, true
}

// normal passes a value through JSON, as run data reads.
func normal(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		return v
	}
	var out any
	_ = json.Unmarshal(b, &out)
	return out
}

func show(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

func readySteps(v *interpreter.View) []string {
	out := []string{}
	for _, s := range v.Steps {
		if s.Kind == interpreter.KindAgent && s.State != nil && *s.State == string(interpreter.StepReady) {
			out = append(out, s.ID)
		}
	}
	slices.Sort(out)
	return out
}

func assignee(w interpreter.WorkItem) string {
	if w.AssignedTo.Person != "" {
		return w.AssignedTo.Person
	}
	return w.AssignedTo.Group
}

func openWork(v *interpreter.View) []WorkExpect {
	out := []WorkExpect{}
	for _, w := range v.WorkItems {
		kind := w.Kind
		if w.Escalation != nil {
			kind = string(interpreter.ItemEscalation)
		}
		out = append(out, WorkExpect{Step: w.StepID, To: assignee(w), Kind: kind})
	}
	return out
}

// workEqual compares open work as multisets; an expectation without a
// kind (or without to) matches any.
func workEqual(want, got []WorkExpect) bool {
	if len(want) != len(got) {
		return false
	}
	used := make([]bool, len(got))
	for _, w := range want {
		found := false
		for i, g := range got {
			if used[i] || g.Step != w.Step || (w.To != "" && !strings.EqualFold(w.To, g.To)) || (w.Kind != "" && w.Kind != g.Kind) {
				continue
			}
			used[i], found = true, true
			break
		}
		if !found {
			return false
		}
	}
	return true
}

func describeExpectedWork(ws []WorkExpect) string {
	if len(ws) == 0 {
		return "none"
	}
	parts := make([]string, len(ws))
	for i, w := range ws {
		parts[i] = w.Step + "→" + w.To
		if w.Kind != "" {
			parts[i] += " (" + w.Kind + ")"
		}
	}
	return strings.Join(parts, ", ")
}

func describeWork(v *interpreter.View) string {
	if v == nil {
		return "unknown"
	}
	return describeExpectedWork(openWork(v))
}

func list(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}
