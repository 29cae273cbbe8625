package proctest

import (
	"fmt"
	"slices"
	"strings"

	"github.com/baton-run/baton/interpreter"
)

// This file answers a process step (baton-subprocess-1) in a case: the
// script says how its children end (child: STEP with answer:), and the
// runner tells the run, as a child's end by signal tells it on a server.

// running are the ids of a process step's running children, in item
// order, as the run view shows them.
func running(v *interpreter.View, stepID string) []string {
	for _, s := range v.Steps {
		if s.ID == stepID && s.Children != nil {
			return s.Children.RunningIDs
		}
	}
	return nil
}

// endChildren ends a process step's running children as the script
// answers: one answer for every child (those that start as others end
// too), or a list answering the children in item order.
func (r *caseRun) endChildren(a *Action) error {
	s, err := r.step(a)
	if err != nil {
		return err
	}
	if s.Kind != interpreter.KindProcess {
		return fmt.Errorf("step %s runs no process: child: answers a process step", s.ID)
	}
	answered := 0
	for a.All || answered < len(a.Children) {
		v, err := r.t.View()
		if err != nil {
			return err
		}
		ids := running(v, s.ID)
		if len(ids) == 0 {
			break
		}
		ans := a.Children[0]
		if !a.All {
			ans = a.Children[answered]
		}
		if err := r.outcomeOf(s, ans.Outcome); err != nil {
			return err
		}
		if _, err := r.t.Write(interpreter.ChildEnded{RunID: ids[0], Outcome: ans.Outcome, Note: ans.Note}, Scripted{}); err != nil {
			return err
		}
		answered++
	}
	switch {
	case answered == 0:
		return fmt.Errorf("step %s has no running children (steps: %s)", s.ID, r.view().StepStates())
	case !a.All && answered < len(a.Children):
		return fmt.Errorf("step %s had %d children to answer; the answer lists %d", s.ID, answered, len(a.Children))
	}
	return nil
}

// outcomeOf checks that a child of step s can end with outcome, when the
// test file names the child.
func (r *caseRun) outcomeOf(s *interpreter.Step, outcome string) error {
	c := r.env.Children[s.Call.Process]
	if c == nil {
		return nil
	}
	if ok := c.Outcomes(); !slices.Contains(ok, outcome) {
		return fmt.Errorf("%s cannot end %s; it ends %s", c.Name, outcome, strings.Join(ok, ", "))
	}
	return nil
}

// childOutcomes are the outcomes a walk picks from for a child of s: the
// child's own when the test file names it, else those its routes name
// and a plain one.
func (env Env) childOutcomes(s *interpreter.Step) []string {
	if c := env.Children[s.Call.Process]; c != nil {
		return c.Outcomes()
	}
	out := []string{"done"}
	for _, r := range s.Call.OnOutcome {
		out = append(out, r.Outcome)
	}
	return out
}
