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
)

// Route is one route of a process.
type Route struct {
	Kind RouteKind `json:"kind"`
	From string    `json:"from"`
	// To is the step the route goes to; for a finish, its outcome.
	To string `json:"to"`
}

func (r Route) String() string {
	if r.Kind == RouteFinish {
		return fmt.Sprintf("finish %s (%s)", r.From, r.To)
	}
	return fmt.Sprintf("%s %s → %s", r.Kind, r.From, r.To)
}

// Routes lists the routes of p that coverage counts, in step order.
func Routes(p *interpreter.Process) []Route {
	var out []Route
	for _, s := range p.Steps {
		if len(s.Next) > 1 || (s.NextList && len(s.Next) > 0) {
			for _, n := range s.Next {
				out = append(out, Route{RouteNext, s.ID, n.To})
			}
		}
		if s.OnReject != "" {
			out = append(out, Route{RouteReject, s.ID, s.OnReject})
		}
		if s.OnTimeout != "" && s.Kind == interpreter.KindWaitFor {
			out = append(out, Route{RouteTimeout, s.ID, s.OnTimeout})
		}
		for _, b := range s.Branches {
			out = append(out, Route{RouteBranch, s.ID, b})
		}
		if s.Kind == interpreter.KindFinish {
			out = append(out, Route{RouteFinish, s.ID, s.Text})
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
				taken[Route{RouteNext, s.ID, rec.Next}] = true
			}
			if s.OnReject != "" && rec.Decision == interpreter.DecisionRejected {
				taken[Route{RouteReject, s.ID, s.OnReject}] = true
			}
			if s.OnTimeout != "" && s.Kind == interpreter.KindWaitFor && rec.By == "server" {
				taken[Route{RouteTimeout, s.ID, s.OnTimeout}] = true
			}
		}
		for _, b := range s.Branches {
			if _, ok := states[b]; ok {
				taken[Route{RouteBranch, s.ID, b}] = true
			}
		}
		if s.Kind == interpreter.KindFinish && states[s.ID] == string(interpreter.StepDone) {
			taken[Route{RouteFinish, s.ID, s.Text}] = true
		}
	}
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
