package drive

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/baton-run/baton/interpreter"
	"github.com/baton-run/baton/workflows"
)

// TemporalOptions configure a Temporal driver.
type TemporalOptions struct {
	// Org is the organization runs start in. Default "o_test".
	Org string
	// Lease is the length of every claim's and renewal's lease. Default
	// ten minutes.
	Lease time.Duration
	// Wrote, when set, is told of every write the run accepted, with its
	// tool and its result, before the driver returns it.
	Wrote func(ctx context.Context, runID, tool string, result json.RawMessage)
}

// Temporal drives runs as workflows on Temporal through a workflows.Client,
// doing what the gateway does around it: it resolves process names, issues
// lease ids and keeps uploaded files. A worker must serve the client's task
// queue. Time is the server's. It is safe for concurrent use.
type Temporal struct {
	c     *workflows.Client
	procs Processes
	opts  TemporalOptions
	files files
}

// NewTemporal returns a driver that runs the processes of procs through c.
// Nil options mean defaults.
func NewTemporal(c *workflows.Client, procs Processes, opts *TemporalOptions) *Temporal {
	d := &Temporal{c: c, procs: procs}
	if opts != nil {
		d.opts = *opts
	}
	if d.opts.Org == "" {
		d.opts.Org = "o_test"
	}
	if d.opts.Lease == 0 {
		d.opts.Lease = 10 * time.Minute
	}
	return d
}

// write sends one command to a run under a fresh request id, which is also
// the digest, and decodes its answer into out. A refusal the run recorded,
// or said final, comes back as the refusal alone: a fresh request id has no later
// attempt to tell it from.
func (d *Temporal) write(ctx context.Context, runID, tool string, cmd interpreter.Command, out any) error {
	rid := RequestID()
	res, err := d.c.Write(ctx, workflows.Write{Org: d.opts.Org, RunID: runID, RequestID: rid, Digest: rid, Command: cmd})
	var recorded *workflows.RecordedRefusal
	if errors.As(err, &recorded) {
		return recorded.Refusal
	}
	var final *workflows.FinalRefusal
	if errors.As(err, &final) {
		return final.Refusal
	}
	if err != nil {
		return err
	}
	if d.opts.Wrote != nil {
		d.opts.Wrote(ctx, runID, tool, res)
	}
	return interpreter.DecodeExact(res, out)
}

func (d *Temporal) Start(ctx context.Context, starter Who, process string, inputs map[string]any, mode string) (*interpreter.View, error) {
	p, err := d.procs.lookup(process)
	if err != nil {
		return nil, err
	}
	rid := RequestID()
	res, err := d.c.StartRun(ctx, workflows.Input{
		Org: d.opts.Org, RequestID: rid, Digest: rid,
		Start: interpreter.Start{Process: p, Version: 1, Inputs: inputs, Mode: mode, Starter: starter},
	})
	if err != nil {
		return nil, err
	}
	if d.opts.Wrote != nil {
		d.opts.Wrote(ctx, workflows.RunID(d.opts.Org, rid), "start_run", res)
	}
	var v interpreter.View
	return &v, interpreter.DecodeExact(res, &v)
}

// GetRun reads a run's view from its workflow, a closed one too.
func (d *Temporal) GetRun(ctx context.Context, who Who, runID string) (*interpreter.View, error) {
	res, err := d.c.View(ctx, runID)
	if err != nil {
		return nil, err
	}
	var v interpreter.View
	return &v, interpreter.DecodeExact(res, &v)
}

func (d *Temporal) Claim(ctx context.Context, agent Who, runID, stepID string) (*interpreter.ClaimWire, error) {
	l := lease{runID, stepID, "l_" + RequestID()}
	var res interpreter.ClaimResult
	if err := d.write(ctx, runID, "claim", interpreter.Claim{StepID: stepID, Actor: agent, LeaseID: l.id, Lease: d.opts.Lease}, &res); err != nil {
		return nil, err
	}
	c := res.Wire(l.token())
	return &c, nil
}

func (d *Temporal) Renew(ctx context.Context, agent Who, token, progress string) (*interpreter.RenewWire, error) {
	l, err := parseToken(token)
	if err != nil {
		return nil, err
	}
	next := lease{l.run, l.step, "l_" + RequestID()}
	var res interpreter.RenewResult
	if err := d.write(ctx, l.run, "renew", interpreter.Renew{StepID: l.step, LeaseID: l.id, Actor: agent, NewLeaseID: next.id, Lease: d.opts.Lease, Progress: progress}, &res); err != nil {
		return nil, err
	}
	r := res.Wire(next.token())
	return &r, nil
}

func (d *Temporal) Submit(ctx context.Context, agent Who, token string, w Work) (*interpreter.View, error) {
	l, err := parseToken(token)
	if err != nil {
		return nil, err
	}
	var v interpreter.View
	return &v, d.write(ctx, l.run, "submit", interpreter.Submit{StepID: l.step, LeaseID: l.id, Actor: agent, Submission: d.files.submission(w)}, &v)
}

func (d *Temporal) Escalate(ctx context.Context, agent Who, token, note string) (*interpreter.View, error) {
	l, err := parseToken(token)
	if err != nil {
		return nil, err
	}
	var v interpreter.View
	return &v, d.write(ctx, l.run, "escalate", interpreter.Escalate{StepID: l.step, LeaseID: l.id, Actor: agent, Note: note}, &v)
}

func (d *Temporal) Decide(ctx context.Context, who Who, runID string, dec Decision) (*interpreter.View, error) {
	var v interpreter.View
	return &v, d.write(ctx, runID, "decide", d.files.decide(who, dec), &v)
}

func (d *Temporal) SendEvent(ctx context.Context, who Who, runID, name string, data map[string]any) (*interpreter.EventResult, error) {
	var r interpreter.EventResult
	return &r, d.write(ctx, runID, "send_event", interpreter.SendEvent{Name: name, Data: data, Actor: who}, &r)
}

func (d *Temporal) Cancel(ctx context.Context, who Who, runID, reason string) (*interpreter.View, error) {
	var v interpreter.View
	return &v, d.write(ctx, runID, "cancel", interpreter.Cancel{Actor: who, Reason: reason}, &v)
}

// Upload keeps a file for file evidence, as the gateway's store would.
func (d *Temporal) Upload(ctx context.Context, who Who, name string, content []byte) (string, error) {
	return d.files.upload(content), nil
}
