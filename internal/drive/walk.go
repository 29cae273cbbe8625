package drive

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/baton-run/baton/interpreter"
)

// Walk walks one run of a process to its end, as agents, people and
// systems would: it claims and submits every ready agent step, decides
// every open work item, and sends the event every waiting wait_for step
// waits for. Its detours (RejectOnce, EscalateOnce, ExpireOnce,
// EventsEarly) exercise rework, hand-offs, leases and held events on the
// way. Zero fields take the defaults their comments give. A Walk walks one
// run; Run and Continue fill in what it did (Rejected, Escalated,
// Expired).
type Walk struct {
	Process *interpreter.Process
	// Inputs start the run. Default: interpreter.Samples of the process's
	// inputs.
	Inputs map[string]any
	// Mode is live or test. Default live.
	Mode string
	// Starter starts the run. Default: the person starter@example.com.
	Starter Who
	// Agent claims and submits. Default: the agent a_walker.
	Agent Who
	// Other is the agent that takes a step over after a lease ran out.
	// Default: the agent a_other.
	Other Who
	// Member returns someone who may decide a work item. Default: the
	// operator u_ops for an escalation, the named person, or a member of
	// the assigned group named after it.
	Member func(w interpreter.WorkItem) Who
	// RejectOnce rejects each approval that has on_reject once.
	RejectOnce bool
	// EscalateOnce escalates each agent step once and has the operator
	// return it; the claim after the return must show the return in its
	// handoff.
	EscalateOnce bool
	// ExpireOnce lets each agent step's first lease run out: the agent
	// renews it with a progress note, time moves past the lease, Other
	// claims the step and must find the note in its handoff, and the first
	// agent's token must be stale. It needs a driver that is a Clock.
	ExpireOnce bool
	// EventsEarly sends the event of every wait_for step right after the
	// start, before any step waits for it. The run holds them, and a step
	// must take its held event as it becomes ready, never wait for it.
	EventsEarly bool
	// ViaWork, on a driver that is a WorkLister, takes the work from
	// get_work as agents and people do: the agent claims what get_work
	// lists for the run, which must be the ready agent steps of the run
	// view, and a person decides a work item only as their get_work shows
	// it. Default off: the walk reads the run view alone.
	ViaWork bool
	// Idle is called when nothing can be done until time passes. Default:
	// on a Clock, move time to the next deadline; otherwise sleep 250ms.
	Idle func(ctx context.Context) error
	// Check, when set, sees every result the walk gets: the run view after
	// start_run, get_run and every write, the claim, the renewal, the
	// send_event result and the get_work list. An error stops the walk.
	Check func(what string, v any) error
	// Rounds bounds the walk. Default 200.
	Rounds int

	runID                        string
	rejected, escalated, expired map[string]bool
	returned, early, waited      map[string]bool
}

// The walk's default identities.
var (
	WalkStarter  = Who{ID: "starter@example.com", Kind: interpreter.ActorPerson}
	WalkAgent    = Who{ID: "a_walker", Kind: interpreter.ActorAgent}
	WalkOther    = Who{ID: "a_other", Kind: interpreter.ActorAgent}
	WalkOperator = Who{ID: "u_ops", Kind: interpreter.ActorOperator, Groups: []string{interpreter.DefaultOperators}}
)

// WalkProgress is the progress note an ExpireOnce walk renews with.
const WalkProgress = "Half done: the first list is checked."

// maxIdle is how many rounds in a row a walk waits for time before it
// calls the run stuck.
const maxIdle = 40

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

func (w *Walk) defaults(d Driver) {
	if w.Inputs == nil {
		w.Inputs = interpreter.Samples(w.Process.Inputs)
	}
	if w.Starter.ID == "" {
		w.Starter = WalkStarter
	}
	if w.Agent.ID == "" {
		w.Agent = WalkAgent
	}
	if w.Other.ID == "" {
		w.Other = WalkOther
	}
	if w.Member == nil {
		w.Member = DefaultMember
	}
	if w.Idle == nil {
		w.Idle = defaultIdle(d)
	}
	if w.Rounds == 0 {
		w.Rounds = 200
	}
	if w.rejected == nil {
		w.rejected, w.escalated, w.expired = map[string]bool{}, map[string]bool{}, map[string]bool{}
		w.returned, w.early, w.waited = map[string]bool{}, map[string]bool{}, map[string]bool{}
	}
}

func defaultIdle(d Driver) func(ctx context.Context) error {
	if c, ok := d.(Clock); ok {
		return func(ctx context.Context) error {
			next, ok := c.Next()
			if !ok {
				return errors.New("nothing can be done and nothing is scheduled")
			}
			return c.Advance(ctx, next)
		}
	}
	return func(ctx context.Context) error {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(250 * time.Millisecond):
			return nil
		}
	}
}

func (w *Walk) check(what string, v any) error {
	if w.Check == nil {
		return nil
	}
	return w.Check(what, v)
}

// RunID returns the id of the run the walk walks, once it started.
func (w *Walk) RunID() string { return w.runID }

// Rejected returns the approvals the walk rejected, sorted.
func (w *Walk) Rejected() []string { return keys(w.rejected) }

// Escalated returns the agent steps the walk escalated, sorted.
func (w *Walk) Escalated() []string { return keys(w.escalated) }

// Expired returns the agent steps whose first lease the walk let run out,
// sorted.
func (w *Walk) Expired() []string { return keys(w.expired) }

func keys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// Run starts a run and walks it to its end, returning the final view.
func (w *Walk) Run(ctx context.Context, d Driver) (*interpreter.View, error) {
	w.defaults(d)
	v, err := d.Start(ctx, w.Starter, w.Process.Name, w.Inputs, w.Mode)
	if err != nil {
		return nil, fmt.Errorf("start_run: %w", err)
	}
	w.runID = v.Run.ID
	if err := w.check("start_run", v); err != nil {
		return nil, err
	}
	if w.EventsEarly {
		if v, err = w.eventsEarly(ctx, d, v.Run.ID); err != nil {
			return nil, err
		}
	}
	return w.Continue(ctx, d, v)
}

// Continue walks a started run from its view v to its end.
func (w *Walk) Continue(ctx context.Context, d Driver, v *interpreter.View) (*interpreter.View, error) {
	w.defaults(d)
	runID := v.Run.ID
	w.runID = runID
	idle := 0
	for round := 0; round < w.Rounds; round++ {
		if v.Run.State == string(interpreter.RunEnded) || v.Run.State == string(interpreter.RunCancelled) {
			return v, nil
		}
		last, err := w.agentSteps(ctx, d, v)
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
			if v, err = w.decide(ctx, d, runID, v.WorkItems[0]); err != nil {
				return nil, err
			}
			idle = 0
			continue
		}
		if acted {
			idle = 0
			continue
		}
		if acted, err = w.events(ctx, d, v); err != nil {
			return nil, err
		}
		if acted {
			idle = 0
		} else {
			if idle++; idle > maxIdle {
				return nil, fmt.Errorf("%s: the run is stuck, %d rounds with nothing to do; steps: %s", w.Process.Name, maxIdle, v.StepStates())
			}
			if err := w.Idle(ctx); err != nil {
				return nil, fmt.Errorf("%s: waiting with steps %s: %w", w.Process.Name, v.StepStates(), err)
			}
		}
		if v, err = d.GetRun(ctx, w.Agent, runID); err != nil {
			return nil, fmt.Errorf("get_run: %w", err)
		}
		if err := w.check("get_run", v); err != nil {
			return nil, err
		}
	}
	return nil, fmt.Errorf("%s: the run did not end in %d rounds; steps: %s", w.Process.Name, w.Rounds, v.StepStates())
}

// readyAgentSteps returns the agent steps the view shows ready.
func readyAgentSteps(v *interpreter.View) []string {
	var out []string
	for _, s := range v.Steps {
		if s.Kind == interpreter.KindAgent && s.State != nil && *s.State == string(interpreter.StepReady) {
			out = append(out, s.ID)
		}
	}
	return out
}

// listed checks, on a ViaWork walk, that get_work lists the run's ready
// agent steps, no more and no fewer.
func (w *Walk) listed(ctx context.Context, d Driver, runID string, ready []string) error {
	lister, ok := d.(WorkLister)
	if !w.ViaWork || !ok {
		return nil
	}
	list, err := lister.GetWork(ctx, w.Agent, w.Process.Name)
	if err != nil {
		return fmt.Errorf("get_work: %w", err)
	}
	if err := w.check("get_work", list); err != nil {
		return err
	}
	var got []string
	for _, it := range list.Agent {
		if it.RunID == runID {
			got = append(got, it.StepID)
		}
	}
	want := slices.Clone(ready)
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		return fmt.Errorf("get_work lists the agent steps %v of run %s, its view shows %v ready", got, runID, want)
	}
	return nil
}

// agentSteps claims and submits (or escalates) every ready agent step, and
// returns the view the last of those writes returned (nil when none).
func (w *Walk) agentSteps(ctx context.Context, d Driver, v *interpreter.View) (*interpreter.View, error) {
	ready := readyAgentSteps(v)
	if len(ready) == 0 {
		return nil, nil
	}
	if err := w.listed(ctx, d, v.Run.ID, ready); err != nil {
		return nil, err
	}
	var last *interpreter.View
	for _, id := range ready {
		holder := w.Agent
		c, err := d.Claim(ctx, holder, v.Run.ID, id)
		if err != nil {
			return nil, fmt.Errorf("claim %s: %w", id, err)
		}
		if err := w.check("claim", c); err != nil {
			return nil, err
		}
		if w.returned[id] {
			delete(w.returned, id)
			if c.Handoff == nil || c.Handoff.Returned == nil {
				return nil, fmt.Errorf("claim %s after the operator returned it: handoff %+v, want the return", id, c.Handoff)
			}
		}
		if w.EscalateOnce && !w.escalated[id] {
			w.escalated[id] = true
			if last, err = d.Escalate(ctx, holder, c.Token, "Cannot reach the system."); err != nil {
				return nil, fmt.Errorf("escalate %s: %w", id, err)
			}
			if err := w.check("escalate", last); err != nil {
				return nil, err
			}
			continue
		}
		work, err := w.work(ctx, d, holder, c.Step.Output, c.Step.Evidence, c.Step.Next)
		if err != nil {
			return nil, err
		}
		if w.ExpireOnce && !w.expired[id] {
			w.expired[id] = true
			if c, err = w.expire(ctx, d, v.Run.ID, id, c.Token, work); err != nil {
				return nil, err
			}
			holder = w.Other
		}
		if last, err = d.Submit(ctx, holder, c.Token, work); err != nil {
			return nil, fmt.Errorf("submit %s: %w", id, err)
		}
		if err := w.check("submit", last); err != nil {
			return nil, err
		}
	}
	return last, nil
}

// expire renews the agent's lease on a step with a progress note, lets it
// run out, and has Other claim the step; the note must be in Other's
// handoff and the agent's token stale. It returns Other's claim.
func (w *Walk) expire(ctx context.Context, d Driver, runID, stepID, token string, work Work) (*interpreter.ClaimWire, error) {
	clock, ok := d.(Clock)
	if !ok {
		return nil, fmt.Errorf("a lease can run out only on a driver whose time the walk moves (a Clock); %T is not one", d)
	}
	r, err := d.Renew(ctx, w.Agent, token, WalkProgress)
	if err != nil {
		return nil, fmt.Errorf("renew %s: %w", stepID, err)
	}
	if err := w.check("renew", r); err != nil {
		return nil, err
	}
	until, err := time.Parse(time.RFC3339, r.ExpiresAt)
	if err != nil {
		return nil, fmt.Errorf("renew %s: expiresAt: %w", stepID, err)
	}
	if err := clock.Advance(ctx, until.Add(time.Second)); err != nil {
		return nil, err
	}
	c, err := d.Claim(ctx, w.Other, runID, stepID)
	if err != nil {
		return nil, fmt.Errorf("claim %s after its lease ran out: %w", stepID, err)
	}
	if err := w.check("claim", c); err != nil {
		return nil, err
	}
	if c.Handoff == nil || c.Handoff.Progress != WalkProgress {
		return nil, fmt.Errorf("claim %s after its lease ran out: handoff %+v, want the progress note", stepID, c.Handoff)
	}
	_, err = d.Submit(ctx, w.Agent, r.Token, work)
	var e *interpreter.Error
	if !errors.As(err, &e) || e.Code != interpreter.CodeStale {
		return nil, fmt.Errorf("submit %s with the token of a lease that ran out: %v, want stale", stepID, err)
	}
	return c, nil
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
func (w *Walk) decide(ctx context.Context, d Driver, runID string, it interpreter.WorkItem) (*interpreter.View, error) {
	who := w.Member(it)
	it, err := w.seen(ctx, d, who, runID, it)
	if err != nil {
		return nil, err
	}
	s := w.Process.Step(it.StepID)
	dec := Decision{WorkItemID: it.ID, Snapshot: it.Snapshot}
	note := func(n string) *string { return &n }
	switch {
	case it.Escalation != nil && w.EscalateOnce && (it.Handoff == nil || it.Handoff.Returned == nil):
		w.returned[it.StepID] = true
		dec.Decision, dec.Note = interpreter.DecisionReturned, note("Try the other endpoint.")
	case it.Kind == string(interpreter.KindApprove) && it.Escalation == nil && w.RejectOnce && s.OnReject != "" && !w.rejected[s.ID]:
		w.rejected[s.ID] = true
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

// seen returns the work item as who's get_work shows it, on a ViaWork
// walk; an item missing there is an error. Otherwise it returns it as is.
func (w *Walk) seen(ctx context.Context, d Driver, who Who, runID string, it interpreter.WorkItem) (interpreter.WorkItem, error) {
	lister, ok := d.(WorkLister)
	if !w.ViaWork || !ok {
		return it, nil
	}
	list, err := lister.GetWork(ctx, who, w.Process.Name)
	if err != nil {
		return it, fmt.Errorf("get_work as %s: %w", who.ID, err)
	}
	if err := w.check("get_work", list); err != nil {
		return it, err
	}
	for _, p := range list.Person {
		if p.RunID == runID && p.WorkItem.ID == it.ID {
			return p.WorkItem, nil
		}
	}
	return it, fmt.Errorf("%s does not see work item %s (%s) in get_work", who.ID, it.ID, it.StepID)
}

// eventsEarly sends the event of every wait_for step before the walk
// begins, and returns the run's view after them.
func (w *Walk) eventsEarly(ctx context.Context, d Driver, runID string) (*interpreter.View, error) {
	for _, s := range w.Process.Steps {
		if s.Kind != interpreter.KindWaitFor {
			continue
		}
		res, err := d.SendEvent(ctx, w.Agent, runID, s.Text, map[string]any{"early": true})
		if err != nil {
			return nil, fmt.Errorf("send_event %s early: %w", s.Text, err)
		}
		if err := w.check("send_event", res); err != nil {
			return nil, err
		}
		w.early[s.ID] = true
		if res.ConsumedBy != nil {
			v, err := d.GetRun(ctx, w.Agent, runID)
			if err != nil {
				return nil, fmt.Errorf("get_run: %w", err)
			}
			if st := v.StepState(*res.ConsumedBy); st != string(interpreter.StepDone) {
				return nil, fmt.Errorf("event %s consumed by %s, which is %s", s.Text, *res.ConsumedBy, st)
			}
		}
	}
	v, err := d.GetRun(ctx, w.Agent, runID)
	if err != nil {
		return nil, fmt.Errorf("get_run: %w", err)
	}
	return v, w.check("get_run", v)
}

// events sends the event of every waiting wait_for step.
func (w *Walk) events(ctx context.Context, d Driver, v *interpreter.View) (bool, error) {
	acted := false
	for _, sv := range v.Steps {
		s := w.Process.Step(sv.ID)
		if s.Kind != interpreter.KindWaitFor || sv.State == nil || *sv.State != string(interpreter.StepWaiting) {
			continue
		}
		if w.early[s.ID] && !w.waited[s.ID] {
			return false, fmt.Errorf("step %s waits for event %s, which the run holds since the start", s.ID, s.Text)
		}
		w.waited[s.ID] = true
		res, err := d.SendEvent(ctx, w.Agent, v.Run.ID, s.Text, map[string]any{"paid": true})
		if err != nil {
			return false, fmt.Errorf("send_event %s: %w", s.Text, err)
		}
		if err := w.check("send_event", res); err != nil {
			return false, err
		}
		if res.ConsumedBy == nil || *res.ConsumedBy != s.ID {
			return false, fmt.Errorf("event %s: consumedBy %v, want %s", s.Text, res.ConsumedBy, s.ID)
		}
		acted = true
	}
	return acted, nil
}
