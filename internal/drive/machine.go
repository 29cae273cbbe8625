package drive

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/baton-run/baton/interpreter"
)

// MachineOptions configure a Machine driver.
type MachineOptions struct {
	// Start is the driver's time when it is made. Default
	// 2026-10-06T09:00:00Z.
	Start time.Time
	// Step is how far time moves with every write, so that writes happen
	// one after the other as on a server. Default one second.
	Step time.Duration
	// Lease is the length of every claim's and renewal's lease. Default
	// ten minutes.
	Lease time.Duration
	// Evaluator answers the check profile's questions about a submission
	// to a checked step, as the workflow's evaluator activity does: asked
	// twice at most, its answers judged by the run. Default none: such a
	// submission gets retry, as from a worker without an evaluator.
	Evaluator Evaluator
}

// An Evaluator answers a check's questions about one submission. The
// evaluators of activities/evaluator are Evaluators.
type Evaluator interface {
	Evaluate(ctx context.Context, r *interpreter.CheckRequest) (*interpreter.CheckAnswers, error)
}

// evaluateAttempts is how often the machine asks the evaluator about one
// submission, as the workflow's activity retried once.
const evaluateAttempts = 2

// defaultMachineStart is MachineOptions.Start's default.
var defaultMachineStart = time.Date(2026, 10, 6, 9, 0, 0, 0, time.UTC)

// Machine drives runs in-process on the run machine, doing what the
// workflow does around it: it checks every command before applying it,
// fires deadlines when time moves, and keeps the effects the machine asks
// for. Time is a parameter, so Machine is a Clock. Results travel as JSON,
// as they would on the wire. It is safe for concurrent use.
type Machine struct {
	procs Processes
	opts  MachineOptions
	files files

	mu      sync.Mutex
	now     time.Time
	runs    map[string]*interpreter.Machine
	order   []string // run ids, oldest first
	leases  int
	effects []interpreter.Effect
	// told holds the child runs whose end their parent was told of.
	told map[string]bool
}

// NewMachine returns a driver that runs the processes of procs in memory.
// Nil options mean defaults.
func NewMachine(procs Processes, opts *MachineOptions) *Machine {
	d := &Machine{procs: procs, runs: map[string]*interpreter.Machine{}, told: map[string]bool{}}
	if opts != nil {
		d.opts = *opts
	}
	if d.opts.Start.IsZero() {
		d.opts.Start = defaultMachineStart
	}
	if d.opts.Step == 0 {
		d.opts.Step = time.Second
	}
	if d.opts.Lease == 0 {
		d.opts.Lease = 10 * time.Minute
	}
	d.now = d.opts.Start
	return d
}

// Now is the driver's time.
func (d *Machine) Now() time.Time {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.now
}

// Next returns the earliest deadline of any run.
func (d *Machine) Next() (time.Time, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.next()
}

func (d *Machine) next() (time.Time, bool) {
	var best time.Time
	found := false
	for _, id := range d.order {
		if t, ok := d.runs[id].NextDeadline(); ok && (!found || t.Before(best)) {
			best, found = t, true
		}
	}
	return best, found
}

// Advance moves time to t, firing every deadline on the way at its own
// time, as the workflow's timers do.
func (d *Machine) Advance(ctx context.Context, t time.Time) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.advance(t)
	return nil
}

func (d *Machine) advance(t time.Time) {
	for {
		next, ok := d.next()
		if !ok || next.After(t) {
			break
		}
		if next.After(d.now) {
			d.now = next
		}
		changed := false
		for _, id := range d.order {
			changed = d.runs[id].Tick(d.now) || changed
		}
		d.takeEffects()
		if !changed {
			// A deadline that changes nothing when it comes would come
			// forever; the walk finds the run stuck instead.
			break
		}
	}
	if t.After(d.now) {
		d.now = t
	}
}

func (d *Machine) takeEffects() {
	for _, id := range d.order {
		d.effects = append(d.effects, d.runs[id].TakeEffects()...)
	}
	d.family()
}

// Effects returns every effect the runs asked for so far (overdue
// notifications), oldest first.
func (d *Machine) Effects() []interpreter.Effect {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]interpreter.Effect(nil), d.effects...)
}

func (d *Machine) machine(runID string) (*interpreter.Machine, error) {
	if m := d.runs[runID]; m != nil {
		return m, nil
	}
	return nil, interpreter.ErrNoRun(runID)
}

// wire passes v through JSON into out, as a client receives it.
func wire(v, out any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return interpreter.DecodeExact(b, out)
}

// write applies one command to a run the way the workflow does: the
// machine's check first (the update's validator), then the command, then,
// when the command asks for a check of its submission, the evaluator and
// the check's verdict (see answer). A check that disagrees with the
// command, or a refusal that changed the run, is the machine failing.
func (d *Machine) write(ctx context.Context, runID string, cmd interpreter.Command) (any, error) {
	m, err := d.machine(runID)
	if err != nil {
		return nil, err
	}
	d.advance(d.now.Add(d.opts.Step))
	checked := m.Check(cmd, d.now)
	before, err := m.State()
	if err != nil {
		return nil, err
	}
	res, err := m.Apply(cmd, d.now)
	d.takeEffects()
	if (checked == nil) != (err == nil) || (err != nil && checked.Error() != err.Error()) {
		return nil, fmt.Errorf("machine: %T: Check said %v but Apply said %v", cmd, checked, err)
	}
	if err != nil {
		after, serr := m.State()
		if serr != nil {
			return nil, serr
		}
		if !bytes.Equal(before, after) {
			return nil, fmt.Errorf("machine: the refused %T changed the run: %w", cmd, err)
		}
		return nil, err
	}
	if need, ok := res.(interpreter.Need); ok {
		return d.answer(ctx, m, need)
	}
	return res, nil
}

// answer performs a need the run made while it applied a command and
// applies the reply, as the workflow's ask does. The driver performs a
// check: it asks its evaluator about the held submission. It returns what
// the write answers, or its refusal; a refusal here may have changed the
// run (a failed check's handoff).
func (d *Machine) answer(ctx context.Context, m *interpreter.Machine, need interpreter.Need) (any, error) {
	check, ok := need.(*interpreter.CheckNeeded)
	if !ok {
		return nil, fmt.Errorf("machine: the driver cannot perform a %T", need)
	}
	res, err := m.Answer(need, d.evaluate(ctx, check.Request), d.now)
	d.takeEffects()
	return res, err
}

// evaluate asks the evaluator about a check's request, at most
// evaluateAttempts times, as the workflow's activity is retried.
func (d *Machine) evaluate(ctx context.Context, r *interpreter.CheckRequest) interpreter.CheckReply {
	ev := d.opts.Evaluator
	if ev == nil {
		return interpreter.CheckReply{Failure: "no evaluator is configured for the check profile"}
	}
	var reply interpreter.CheckReply
	if named, ok := ev.(interface{ Model() string }); ok {
		reply.Model = named.Model()
	}
	for range evaluateAttempts {
		a, err := ev.Evaluate(ctx, r)
		if err == nil {
			err = interpreter.ValidateCheckAnswers(r, a)
		}
		if err == nil {
			reply.Answers, reply.Failure = a, ""
			break
		}
		reply.Failure = err.Error()
	}
	return reply
}

func (d *Machine) view(ctx context.Context, runID string, cmd interpreter.Command) (*interpreter.View, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	res, err := d.write(ctx, runID, cmd)
	if err != nil {
		return nil, err
	}
	var v interpreter.View
	return &v, wire(res, &v)
}

func (d *Machine) leaseID() string {
	d.leases++
	return fmt.Sprintf("l_%d", d.leases)
}

func (d *Machine) Start(ctx context.Context, starter Who, process string, inputs map[string]any, mode string) (*interpreter.View, error) {
	p, err := d.procs.lookup(process)
	if err != nil {
		return nil, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.advance(d.now.Add(d.opts.Step))
	id := fmt.Sprintf("r_%d", len(d.order)+1)
	m, err := interpreter.StartRun(interpreter.Start{RunID: id, Process: p, Version: 1, Inputs: inputs, Mode: mode, Starter: starter, Children: interpreter.BindLocal(p, d.procs)}, d.now)
	if err != nil {
		return nil, err
	}
	d.runs[id] = m
	d.order = append(d.order, id)
	d.takeEffects()
	var v interpreter.View
	return &v, wire(m.View(d.now), &v)
}

func (d *Machine) GetRun(ctx context.Context, who Who, runID string) (*interpreter.View, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	m, err := d.machine(runID)
	if err != nil {
		return nil, err
	}
	var v interpreter.View
	return &v, wire(m.View(d.now), &v)
}

// GetWork lists the work open to who across the driver's runs.
func (d *Machine) GetWork(ctx context.Context, who Who, process string) (*WorkList, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	list := &WorkList{}
	for _, id := range d.order {
		m := d.runs[id]
		if process != "" && m.Run().Process != process {
			continue
		}
		if who.Kind == interpreter.ActorAgent {
			list.Agent = append(list.Agent, m.AgentWork(d.now)...)
		} else {
			list.Person = append(list.Person, m.PersonWork(d.now, who)...)
		}
	}
	var out WorkList
	return &out, wire(list, &out)
}

func (d *Machine) Claim(ctx context.Context, agent Who, runID, stepID string) (*interpreter.ClaimWire, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	l := lease{runID, stepID, d.leaseID()}
	res, err := d.write(ctx, runID, interpreter.Claim{StepID: stepID, Actor: agent, LeaseID: l.id, Lease: d.opts.Lease})
	if err != nil {
		return nil, err
	}
	var c interpreter.ClaimWire
	return &c, wire(res.(*interpreter.ClaimResult).Wire(l.token()), &c)
}

func (d *Machine) Renew(ctx context.Context, agent Who, token, progress string) (*interpreter.RenewWire, error) {
	l, err := parseToken(token)
	if err != nil {
		return nil, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	next := lease{l.run, l.step, d.leaseID()}
	res, err := d.write(ctx, l.run, interpreter.Renew{StepID: l.step, LeaseID: l.id, Actor: agent, NewLeaseID: next.id, Lease: d.opts.Lease, Progress: progress})
	if err != nil {
		return nil, err
	}
	var r interpreter.RenewWire
	return &r, wire(res.(*interpreter.RenewResult).Wire(next.token()), &r)
}

func (d *Machine) Submit(ctx context.Context, agent Who, token string, w Work) (*interpreter.View, error) {
	l, err := parseToken(token)
	if err != nil {
		return nil, err
	}
	return d.view(ctx, l.run, interpreter.Submit{StepID: l.step, LeaseID: l.id, Actor: agent, Submission: d.files.submission(w)})
}

func (d *Machine) Escalate(ctx context.Context, agent Who, token, note string) (*interpreter.View, error) {
	l, err := parseToken(token)
	if err != nil {
		return nil, err
	}
	return d.view(ctx, l.run, interpreter.Escalate{StepID: l.step, LeaseID: l.id, Actor: agent, Note: note})
}

func (d *Machine) Decide(ctx context.Context, who Who, runID string, dec Decision) (*interpreter.View, error) {
	return d.view(ctx, runID, d.files.decide(who, dec))
}

func (d *Machine) SendEvent(ctx context.Context, who Who, runID, name string, data map[string]any) (*interpreter.EventResult, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	res, err := d.write(ctx, runID, interpreter.SendEvent{Name: name, Data: data, Actor: who})
	if err != nil {
		return nil, err
	}
	var r interpreter.EventResult
	return &r, wire(res, &r)
}

func (d *Machine) Cancel(ctx context.Context, who Who, runID, reason string) (*interpreter.View, error) {
	return d.view(ctx, runID, interpreter.Cancel{Actor: who, Reason: reason})
}

// Upload keeps a file for file evidence.
func (d *Machine) Upload(ctx context.Context, who Who, name string, content []byte) (string, error) {
	return d.files.upload(content), nil
}
