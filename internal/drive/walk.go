package drive

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/baton-run/baton/interpreter"
)

// Walk walks one run of a process to its end, as agents, people and
// systems would: it claims and submits every ready agent step, decides
// every open work item, and sends the event every waiting wait_for step
// waits for. Zero fields take the defaults their comments give.
type Walk struct {
	Process *interpreter.Process
	// Inputs start the run. Default: Samples of the process's inputs.
	Inputs map[string]any
	// Mode is live or test. Default live.
	Mode string
	// Starter starts the run. Default: the person starter@example.com.
	Starter Who
	// Agent claims and submits. Default: the agent a_walker.
	Agent Who
	// Member returns someone who may decide a work item. Default: the
	// operator u_ops for an escalation, the named person, or a member of
	// the assigned group named after it.
	Member func(w interpreter.WorkItem) Who
	// RejectOnce rejects each approval that has on_reject once.
	RejectOnce bool
	// EscalateOnce escalates each agent step once and has the operator
	// return it.
	EscalateOnce bool
	// Idle is called when nothing can be done until time passes. Default:
	// sleep 250ms.
	Idle func(ctx context.Context) error
	// Check, when set, sees the run view after every action and every
	// claim; an error stops the walk.
	Check func(what string, v any) error
	// Rounds bounds the walk. Default 200.
	Rounds int
}

// The walk's default identities.
var (
	WalkStarter  = Who{ID: "starter@example.com", Kind: interpreter.ActorPerson}
	WalkAgent    = Who{ID: "a_walker", Kind: interpreter.ActorAgent}
	WalkOperator = Who{ID: "u_ops", Kind: interpreter.ActorOperator, Groups: []string{"operators"}}
)

// DefaultMember is Walk's default Member.
func DefaultMember(w interpreter.WorkItem) Who {
	switch {
	case w.Escalation != nil:
		return WalkOperator
	case w.AssignedTo.Person != "":
		return Who{ID: strings.ToLower(w.AssignedTo.Person), Kind: interpreter.ActorPerson}
	default:
		return Who{ID: "member-of-" + w.AssignedTo.Group + "@example.com", Kind: interpreter.ActorPerson, Groups: []string{w.AssignedTo.Group}}
	}
}

func (w *Walk) defaults() {
	if w.Inputs == nil {
		w.Inputs = interpreter.Samples(w.Process.Inputs)
	}
	if w.Starter.ID == "" {
		w.Starter = WalkStarter
	}
	if w.Agent.ID == "" {
		w.Agent = WalkAgent
	}
	if w.Member == nil {
		w.Member = DefaultMember
	}
	if w.Idle == nil {
		w.Idle = func(ctx context.Context) error {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(250 * time.Millisecond):
				return nil
			}
		}
	}
	if w.Rounds == 0 {
		w.Rounds = 200
	}
}

func (w *Walk) check(what string, v any) error {
	if w.Check == nil {
		return nil
	}
	return w.Check(what, v)
}

// Run starts a run and walks it to its end, returning the final view.
func (w *Walk) Run(ctx context.Context, d Driver) (*interpreter.View, error) {
	w.defaults()
	v, err := d.Start(ctx, w.Starter, w.Process.Name, w.Inputs, w.Mode)
	if err != nil {
		return nil, fmt.Errorf("start_run: %w", err)
	}
	if err := w.check("start_run", v); err != nil {
		return nil, err
	}
	return w.Continue(ctx, d, v)
}

// Continue walks a started run from its view v to its end.
func (w *Walk) Continue(ctx context.Context, d Driver, v *interpreter.View) (*interpreter.View, error) {
	w.defaults()
	runID := v.Run.ID
	rejected, escalated := map[string]bool{}, map[string]bool{}
	for round := 0; round < w.Rounds; round++ {
		if v.Run.State == string(interpreter.RunEnded) || v.Run.State == string(interpreter.RunCancelled) {
			return v, nil
		}
		last, err := w.agentSteps(ctx, d, v, escalated)
		if err != nil {
			return nil, err
		}
		acted := last != nil
		if acted {
			// The last write's view shows everything the writes did.
			v = last
		}
		if len(v.WorkItems) > 0 {
			// Every decision changes the snapshot: one, then read again.
			if v, err = w.decide(ctx, d, runID, v.WorkItems[0], rejected); err != nil {
				return nil, err
			}
			continue
		}
		if acted {
			continue
		}
		if acted, err = w.events(ctx, d, v); err != nil {
			return nil, err
		}
		if !acted {
			if err := w.Idle(ctx); err != nil {
				return nil, err
			}
		}
		if v, err = d.GetRun(ctx, w.Agent, runID); err != nil {
			return nil, fmt.Errorf("get_run: %w", err)
		}
		if err := w.check("get_run", v); err != nil {
			return nil, err
		}
	}
	return nil, fmt.Errorf("%s: the run did not end in %d rounds; steps: %s", w.Process.Name, w.Rounds, Steps(v))
}

// agentSteps claims and submits (or escalates) every ready agent step, and
// returns the view the last of those writes returned (nil when none).
func (w *Walk) agentSteps(ctx context.Context, d Driver, v *interpreter.View, escalated map[string]bool) (*interpreter.View, error) {
	var last *interpreter.View
	for _, s := range v.Steps {
		if s.Kind != interpreter.KindAgent || s.State == nil || *s.State != string(interpreter.StepReady) {
			continue
		}
		c, err := d.Claim(ctx, w.Agent, v.Run.ID, s.ID)
		if err != nil {
			return nil, fmt.Errorf("claim %s: %w", s.ID, err)
		}
		if err := w.check("claim", c); err != nil {
			return nil, err
		}
		if w.EscalateOnce && !escalated[s.ID] {
			escalated[s.ID] = true
			if last, err = d.Escalate(ctx, w.Agent, c.Token, "Cannot reach the system."); err != nil {
				return nil, fmt.Errorf("escalate %s: %w", s.ID, err)
			}
			if err := w.check("escalate", last); err != nil {
				return nil, err
			}
			continue
		}
		work, err := w.work(ctx, d, w.Agent, c.Step.Output, c.Step.Evidence, c.Step.Next)
		if err != nil {
			return nil, err
		}
		if last, err = d.Submit(ctx, w.Agent, c.Token, work); err != nil {
			return nil, fmt.Errorf("submit %s: %w", s.ID, err)
		}
		if err := w.check("submit", last); err != nil {
			return nil, err
		}
	}
	return last, nil
}

// work fills a step's requirements with samples, uploading file evidence.
func (w *Walk) work(ctx context.Context, d Driver, who Who, output interpreter.Fields, evidence []string, next []interpreter.Route) (Work, error) {
	summary := "Did the work and checked it."
	wk := Work{Output: interpreter.Samples(output), Summary: &summary}
	for _, k := range evidence {
		ref := "https://example.com/doc/1"
		if k == "file" {
			id, err := d.Upload(ctx, who, "evidence.txt", []byte("evidence for the step"))
			if err != nil {
				return wk, fmt.Errorf("upload: %w", err)
			}
			ref = id
		}
		wk.Evidence = append(wk.Evidence, interpreter.Evidence{Kind: k, Ref: ref})
	}
	if next != nil {
		to, reason := w.prefer(next), "It fits."
		wk.Next, wk.Reason = &to, &reason
	}
	return wk, nil
}

// prefer chooses a route: one into a wait_for step when there is one, so
// events get exercised, else the first.
func (w *Walk) prefer(routes []interpreter.Route) string {
	for _, r := range routes {
		if s := w.Process.Step(r.To); s != nil && s.Kind == interpreter.KindWaitFor {
			return r.To
		}
	}
	return routes[0].To
}

// decide completes a work item the way its kind asks.
func (w *Walk) decide(ctx context.Context, d Driver, runID string, it interpreter.WorkItem, rejected map[string]bool) (*interpreter.View, error) {
	who := w.Member(it)
	s := w.Process.Step(it.StepID)
	dec := Decision{WorkItemID: it.ID, Snapshot: it.Snapshot}
	note := func(n string) *string { return &n }
	switch {
	case it.Escalation != nil && w.EscalateOnce && (it.Handoff == nil || it.Handoff.Returned == nil):
		dec.Decision, dec.Note = interpreter.DecisionReturned, note("Try the other endpoint.")
	case it.Kind == string(interpreter.KindApprove) && it.Escalation == nil && w.RejectOnce && s.OnReject != "" && !rejected[s.ID]:
		rejected[s.ID] = true
		dec.Decision, dec.Note = interpreter.DecisionRejected, note("Needs another pass.")
	case it.Kind == string(interpreter.KindApprove) && it.Escalation == nil:
		dec.Decision = interpreter.DecisionApproved
	default:
		wk, err := w.work(ctx, d, who, it.Output, it.Evidence, it.Next)
		if err != nil {
			return nil, err
		}
		wk.Summary = nil
		dec.Decision, dec.Work = interpreter.DecisionCompleted, &wk
	}
	v, err := d.Decide(ctx, who, runID, dec)
	if err != nil {
		return nil, fmt.Errorf("decide %s %s on %s: %w", dec.Decision, it.ID, it.StepID, err)
	}
	return v, w.check("decide", v)
}

// events sends the event of every waiting wait_for step.
func (w *Walk) events(ctx context.Context, d Driver, v *interpreter.View) (bool, error) {
	acted := false
	for _, sv := range v.Steps {
		s := w.Process.Step(sv.ID)
		if s.Kind != interpreter.KindWaitFor || sv.State == nil || *sv.State != string(interpreter.StepWaiting) {
			continue
		}
		res, err := d.SendEvent(ctx, w.Agent, v.Run.ID, s.Text, map[string]any{"paid": true})
		if err != nil {
			return false, fmt.Errorf("send_event %s: %w", s.Text, err)
		}
		if res.ConsumedBy == nil || *res.ConsumedBy != s.ID {
			return false, fmt.Errorf("event %s: consumedBy %v, want %s", s.Text, res.ConsumedBy, s.ID)
		}
		acted = true
	}
	return acted, nil
}

// Steps describes a view's step states, for messages.
func Steps(v *interpreter.View) string {
	if v == nil {
		return "(no view)"
	}
	var b strings.Builder
	for i, s := range v.Steps {
		if i > 0 {
			b.WriteString(", ")
		}
		st := "null"
		if s.State != nil {
			st = *s.State
		}
		fmt.Fprintf(&b, "%s=%s", s.ID, st)
	}
	return b.String()
}
