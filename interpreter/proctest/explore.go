package proctest

import (
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/baton-run/baton/interpreter"
)

// ExploreReport is what Explore found.
type ExploreReport struct {
	Seed  int64 `json:"seed"`
	Walks int   `json:"walks"`
	// Unreached are the finishes no walk reached.
	Unreached []Route `json:"unreached"`
	// Untested are all the routes no walk took.
	Untested []Route `json:"untested"`
	// Endless are runs that cannot end: nothing to do and nothing
	// scheduled, or no end within a walk's bound.
	Endless []Finding `json:"endless"`
	// Unavoidable are refusals an actor could not avoid: every way to do
	// the work at hand was refused.
	Unavoidable []Finding `json:"unavoidable"`
}

// Finding is one problem a walk met, with the walk that shows it.
type Finding struct {
	Walk int    `json:"walk"`
	What string `json:"what"`
	// Trail is the walk's actions up to the problem.
	Trail []string `json:"trail"`
}

// walkBound is how many actions one explored walk takes at most.
var walkBound = 300

// exploreAgent is the agent of explored walks.
var exploreAgent = interpreter.Actor{ID: "a_explorer", Kind: interpreter.ActorAgent}

// Explore walks n random scripts of env's process, seeded by seed: at
// each point one of the things someone could do happens (an agent
// submits a sample with a random choice of route, escalates or lets its
// lease run out; a person decides a work item any way the item allows;
// an event arrives; time passes to the next deadline), and a check's
// answers pass or fail at random. Inputs start every run (nil: samples).
func Explore(env Env, inputs map[string]any, n int, seed int64) *ExploreReport {
	rep := &ExploreReport{Seed: seed, Walks: n, Endless: []Finding{}, Unavoidable: []Finding{}}
	taken := map[Route]bool{}
	seen := map[string]bool{}
	add := func(to *[]Finding, f Finding) {
		if !seen[f.What] {
			seen[f.What] = true
			*to = append(*to, f)
		}
	}
	for i := range n {
		w := &walker{rng: rand.New(rand.NewPCG(uint64(seed), uint64(i))), walk: i}
		w.run(env, inputs, taken)
		if w.endless != "" {
			add(&rep.Endless, Finding{Walk: i, What: w.endless, Trail: w.trail})
		}
		if w.unavoidable != "" {
			add(&rep.Unavoidable, Finding{Walk: i, What: w.unavoidable, Trail: w.trail})
		}
	}
	rep.Untested = Untested(env.Process, taken)
	rep.Unreached = []Route{}
	for _, r := range rep.Untested {
		if r.Kind == RouteFinish {
			rep.Unreached = append(rep.Unreached, r)
		}
	}
	return rep
}

type walker struct {
	rng                  *rand.Rand
	walk                 int
	trail                []string
	endless, unavoidable string
}

func (w *walker) run(env Env, inputs map[string]any, taken map[Route]bool) {
	t := NewMachine()
	c := &Case{Name: fmt.Sprintf("walk %d", w.walk), Inputs: inputs, Mode: interpreter.ModeLive, Starter: Starter}
	r := &caseRun{env: env, t: t, c: c, leases: map[string]*held{}, taken: taken}
	if _, err := t.Start(env.start(r.inputs(), c.Mode, c.Starter)); err != nil {
		w.unavoidable = "the run cannot start with these inputs: " + describeErr(err)
		return
	}
	for range walkBound {
		v, _ := t.View()
		observe(env.Process, v, taken)
		if interpreter.RunState(v.Run.State).Over() {
			return
		}
		var options []func() bool
		m := t.Run()
		for _, aw := range m.AgentWork(t.Now()) {
			options = append(options, func() bool { return w.agent(r, env.Process.Step(aw.StepID)) })
		}
		for _, it := range m.Run().Items {
			if it.Open {
				options = append(options, func() bool { return w.decide(r, m.Run(), it) })
			}
		}
		for _, sv := range v.Steps {
			s := env.Process.Step(sv.ID)
			if s.Kind == interpreter.KindWaitFor && sv.State != nil && *sv.State == string(interpreter.StepWaiting) {
				options = append(options, func() bool {
					return w.try(r, &Action{Kind: ActEvent, Event: s.Text, Actor: interpreter.Actor{ID: "events", Kind: interpreter.ActorSystem}}) == nil
				})
			}
			if sv.Children != nil && sv.Children.Running > 0 {
				// A child ends, any way it can.
				outcomes := env.childOutcomes(s)
				options = append(options, func() bool {
					a := &Action{Kind: ActChild, Step: s.ID, Children: []ChildAnswer{{Outcome: outcomes[w.rng.IntN(len(outcomes))]}}}
					return w.try(r, a) == nil
				})
			}
		}
		if next, ok := t.NextDeadline(); ok {
			options = append(options, func() bool {
				w.trail = append(w.trail, "time passes to "+next.Format("2006-01-02T15:04Z"))
				_ = t.Advance(next.Sub(t.Now()))
				return true
			})
		}
		if len(options) == 0 {
			w.endless = "the run waits with nothing anyone can do and nothing scheduled; steps: " + v.StepStates()
			return
		}
		if !options[w.rng.IntN(len(options))]() {
			return
		}
	}
	v, _ := t.View()
	w.endless = fmt.Sprintf("the run did not end in %d actions; steps: %s", walkBound, v.StepStates())
}

// try runs an action and keeps it in the trail; it returns the refusal.
func (w *walker) try(r *caseRun, a *Action) error {
	_, err := r.act(a)
	line := a.What()
	if err != nil {
		line += " (refused: " + describeErr(err) + ")"
	}
	w.trail = append(w.trail, line)
	return err
}

// agent does one agent step: mostly a sample submission, sometimes an
// escalation or a lease left to run out.
func (w *walker) agent(r *caseRun, s *interpreter.Step) bool {
	switch n := w.rng.IntN(10); {
	case n == 0:
		return w.try(r, &Action{Kind: ActEscalate, Step: s.ID, Actor: exploreAgent}) == nil || w.refusedAll(s.ID, "escalate")
	case n == 1:
		return w.try(r, &Action{Kind: ActExpire, Step: s.ID, Actor: exploreAgent}) == nil || w.refusedAll(s.ID, "claim")
	}
	var routes []*string
	for _, rt := range s.Next {
		to := rt.To
		routes = append(routes, &to)
	}
	if len(routes) == 0 || !s.NextList && len(s.Next) == 1 {
		routes = []*string{nil}
	}
	w.rng.Shuffle(len(routes), func(i, j int) { routes[i], routes[j] = routes[j], routes[i] })
	var last error
	for _, to := range routes {
		a := &Action{Kind: ActSubmit, Step: s.ID, Actor: exploreAgent, Next: to, Check: w.check(s)}
		if last = w.try(r, a); last == nil {
			return true
		}
		if a.Check != nil {
			// A failed check is the check's word, not a refusal to avoid.
			return true
		}
	}
	w.unavoidable = fmt.Sprintf("every submission to step %s with sample output was refused: %s", s.ID, describeErr(last))
	return false
}

func (w *walker) refusedAll(step, what string) bool {
	w.unavoidable = fmt.Sprintf("%s of step %s was refused: %s", what, step, w.trail[len(w.trail)-1])
	return false
}

// check picks the answers to a step's check: mostly passing, sometimes a
// failing first question or an evaluator error.
func (w *walker) check(s *interpreter.Step) *CheckScript {
	if s.Check == nil {
		return nil
	}
	switch n := w.rng.IntN(10); {
	case n < 7:
		return nil
	case n < 9:
		q := s.Check.Questions[0]
		an := CheckAnswer{}
		switch q.Kind {
		case interpreter.QuestionYesNo:
			zero := 0.0
			an.Probability = &zero
		case interpreter.QuestionChoice:
			for _, c := range q.OneOf {
				if !slices.Contains(q.PassNames, c.Name) {
					an.Name = c.Name
					break
				}
			}
		case interpreter.QuestionRubric:
			zero := 0
			an.Level = &zero
		}
		if an.Probability == nil && an.Name == "" && an.Level == nil {
			return nil
		}
		return &CheckScript{Answers: map[string]CheckAnswer{interpreter.QuestionID(0): an}}
	}
	return &CheckScript{Err: true}
}

// decide decides an open work item any way its kind allows, trying the
// others when one is refused.
func (w *walker) decide(r *caseRun, run *interpreter.Run, it *interpreter.Item) bool {
	who := interpreter.Actor{ID: it.AssignedTo.Person, Kind: interpreter.ActorPerson}
	if g := it.AssignedTo.Group; g != "" {
		who = interpreter.Actor{ID: roleMember(g), Kind: interpreter.ActorPerson, Groups: []string{g}}
		if g == run.Operators {
			who = interpreter.Actor{ID: "u_explorer", Kind: interpreter.ActorOperator, Groups: []string{g}}
		}
	}
	decisions := slices.Clone(it.Kind.Decisions())
	w.rng.Shuffle(len(decisions), func(i, j int) { decisions[i], decisions[j] = decisions[j], decisions[i] })
	s := r.env.Process.Step(it.StepID)
	note := "Explored."
	var last error
	for _, d := range decisions {
		a := &Action{Kind: ActDecide, Step: it.StepID, Actor: who, Decision: d}
		if d != interpreter.DecisionCompleted && d != interpreter.DecisionApproved {
			a.Note = &note
		}
		if d == interpreter.DecisionCompleted && s != nil && len(s.Next) > 0 && (s.NextList || len(s.Next) > 1) && it.Escalation == nil {
			to := s.Next[w.rng.IntN(len(s.Next))].To
			a.Next = &to
		}
		if s != nil {
			a.Check = w.check(s)
		}
		if last = w.try(r, a); last == nil {
			return true
		}
	}
	w.unavoidable = fmt.Sprintf("every decision on the work item of step %s was refused: %s", it.StepID, describeErr(last))
	return false
}
