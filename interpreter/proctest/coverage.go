package proctest

import (
	"fmt"
	"slices"
	"strings"

	"github.com/baton-run/baton/interpreter"
)

// RouteKind is the sort of a route coverage counts.
type RouteKind string

// The routes of a process that coverage counts.
const (
	// RouteNext is one choice of a step's list next.
	RouteNext RouteKind = "next"
	// RouteReject is an approval's on_reject.
	RouteReject RouteKind = "on_reject"
	// RouteTimeout is a wait_for's on_timeout.
	RouteTimeout RouteKind = "on_timeout"
	// RouteBranch is one branch of a parallel step.
	RouteBranch RouteKind = "branch"
	// RouteFinish is a finish step reached.
	RouteFinish RouteKind = "finish"
	// RouteOutcome is one of a process step's on_outcome routes
	// (baton-subprocess-1).
	RouteOutcome RouteKind = "on_outcome"
)

// Route is one route of a process.
type Route struct {
	Kind RouteKind `json:"kind"`
	From string    `json:"from"`
	// To is the step the route goes to; for a finish, its outcome.
	To string `json:"to"`
	// Outcome is the child's outcome an on_outcome route is for.
	Outcome string `json:"outcome,omitempty"`
}

func (r Route) String() string {
	switch r.Kind {
	case RouteFinish:
		return fmt.Sprintf("finish %s (%s)", r.From, r.To)
	case RouteOutcome:
		return fmt.Sprintf("on_outcome %s (%s) → %s", r.From, r.Outcome, r.To)
	}
	return fmt.Sprintf("%s %s → %s", r.Kind, r.From, r.To)
}

// Routes lists the routes of p that coverage counts, in step order.
func Routes(p *interpreter.Process) []Route {
	var out []Route
	for _, s := range p.Steps {
		if len(s.Next) > 1 || (s.NextList && len(s.Next) > 0) {
			for _, n := range s.Next {
				out = append(out, Route{Kind: RouteNext, From: s.ID, To: n.To})
			}
		}
		if s.OnReject != "" {
			out = append(out, Route{Kind: RouteReject, From: s.ID, To: s.OnReject})
		}
		if s.OnTimeout != "" && s.Kind == interpreter.KindWaitFor {
			out = append(out, Route{Kind: RouteTimeout, From: s.ID, To: s.OnTimeout})
		}
		for _, b := range s.Branches {
			out = append(out, Route{Kind: RouteBranch, From: s.ID, To: b})
		}
		if s.Kind == interpreter.KindFinish {
			out = append(out, Route{Kind: RouteFinish, From: s.ID, To: s.Text})
		}
		if s.Kind == interpreter.KindProcess && s.Call != nil {
			for _, r := range s.Call.OnOutcome {
				out = append(out, Route{Kind: RouteOutcome, From: s.ID, To: r.To, Outcome: r.Outcome})
			}
		}
	}
	return out
}

// observe adds to taken the routes a view shows the run took: a choice
// in a step's record or history, a rejection, a wait_for the server
// completed (its timeout), a branch entered, a finish reached.
func observe(p *interpreter.Process, v *interpreter.View, taken map[Route]bool) {
	if v == nil {
		return
	}
	states := map[string]string{}
	for _, sv := range v.Steps {
		if sv.State != nil {
			states[sv.ID] = *sv.State
		}
	}
	for _, s := range p.Steps {
		var recs []*interpreter.Record
		if v.Data != nil {
			if d := v.Data.Steps[s.ID]; d != nil {
				if d.Record != nil {
					recs = append(recs, d.Record)
				}
				recs = append(recs, d.History...)
			}
		}
		for _, rec := range recs {
			if rec.Next != "" && len(s.Next) > 0 {
				taken[Route{Kind: RouteNext, From: s.ID, To: rec.Next}] = true
			}
			if s.OnReject != "" && rec.Decision == interpreter.DecisionRejected {
				taken[Route{Kind: RouteReject, From: s.ID, To: s.OnReject}] = true
			}
			if s.OnTimeout != "" && s.Kind == interpreter.KindWaitFor && rec.By == "server" {
				taken[Route{Kind: RouteTimeout, From: s.ID, To: s.OnTimeout}] = true
			}
			if o := outcomeRouted(s, rec); o != "" {
				to, _ := s.Call.Route(o)
				taken[Route{Kind: RouteOutcome, From: s.ID, To: to, Outcome: o}] = true
			}
		}
		for _, b := range s.Branches {
			if _, ok := states[b]; ok {
				taken[Route{Kind: RouteBranch, From: s.ID, To: b}] = true
			}
		}
		if s.Kind == interpreter.KindFinish && states[s.ID] == string(interpreter.StepDone) {
			taken[Route{Kind: RouteFinish, From: s.ID, To: s.Text}] = true
		}
	}
}

// outcomeRouted is the child outcome whose on_outcome route a process
// step's record took, or "": one child's outcome, or for for_each the
// first of failed and cancelled that some child ended with, as the run
// routes (profile-subprocess §4).
func outcomeRouted(s *interpreter.Step, rec *interpreter.Record) string {
	if s.Kind != interpreter.KindProcess || s.Call == nil || rec.Decision == interpreter.DecisionFailed {
		return ""
	}
	var outcomes []string
	if s.Call.ForEach == "" {
		o, _ := rec.Output["outcome"].(string)
		outcomes = []string{o}
	} else {
		items, _ := rec.Output["items"].([]any)
		for _, want := range []string{interpreter.DecisionFailed, interpreter.OutcomeCancelled} {
			for _, it := range items {
				if m, _ := it.(map[string]any); m != nil && m["outcome"] == want {
					outcomes = append(outcomes, want)
					break
				}
			}
		}
	}
	for _, o := range outcomes {
		if _, ok := s.Call.Route(o); ok {
			return o
		}
		if s.Call.ForEach != "" {
			return ""
		}
	}
	return ""
}

// Untested returns the routes of p that none of taken holds.
func Untested(p *interpreter.Process, taken map[Route]bool) []Route {
	out := []Route{}
	for _, r := range Routes(p) {
		if !taken[r] {
			out = append(out, r)
		}
	}
	return out
}

// Taken returns the routes a case took, sorted.
func (r *Result) Taken() []Route {
	out := make([]Route, 0, len(r.taken))
	for rt := range r.taken {
		out = append(out, rt)
	}
	slices.SortFunc(out, func(a, b Route) int {
		if c := strings.Compare(string(a.Kind), string(b.Kind)); c != 0 {
			return c
		}
		if c := strings.Compare(a.From, b.From); c != 0 {
			return c
		}
		return strings.Compare(a.To, b.To)
	})
	return out
}
