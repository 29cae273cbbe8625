package proctest

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/baton-run/baton/interpreter"
)

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
