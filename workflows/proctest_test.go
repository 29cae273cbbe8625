package workflows_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/baton-run/baton/internal/drive"
	"github.com/baton-run/baton/internal/testing/workertest"
	"github.com/baton-run/baton/interpreter"
	"github.com/baton-run/baton/interpreter/proctest"
	"github.com/baton-run/baton/workflows"
)

// temporalTarget runs a process test's case as a workflow on Temporal: the
// same commands the machine target applies go to the run as updates. A
// check goes to the worker's evaluator, which answers what the case
// scripts for the write in flight (scriptedEvaluator); tool calls would
// go to tool servers and time is Temporal's own, so the cases it runs
// script neither.
type temporalTarget struct {
	ctx   context.Context
	runs  *workflows.Client
	ev    *scriptedEvaluator
	runID string
}

// scriptedEvaluator answers a check as the case in flight scripts it, the
// way the machine target answers it.
type scriptedEvaluator struct {
	procs drive.Processes
	mu    sync.Mutex
	check *proctest.CheckScript
}

func (e *scriptedEvaluator) script(cs *proctest.CheckScript) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.check = cs
}

func (e *scriptedEvaluator) Evaluate(_ context.Context, r *interpreter.CheckRequest) (*interpreter.CheckAnswers, error) {
	e.mu.Lock()
	cs := e.check
	e.mu.Unlock()
	if cs != nil && cs.Err {
		return nil, errors.New("the evaluator answered with an error (ERR in the script)")
	}
	p := e.procs[r.Process]
	if p == nil {
		return nil, fmt.Errorf("no process %s", r.Process)
	}
	return proctest.Answers(p.Step(r.Step), r, cs)
}

func (e *scriptedEvaluator) Model() string { return proctest.ScriptModel }

func (t *temporalTarget) Start(s interpreter.Start) (*interpreter.View, error) {
	rid := drive.RequestID()
	raw, err := t.runs.StartRun(t.ctx, workflows.Input{Org: org, RequestID: rid, Digest: rid, Start: s})
	if err != nil {
		return nil, err
	}
	t.runID = workflows.RunID(org, rid)
	var v interpreter.View
	return &v, json.Unmarshal(raw, &v)
}

func (t *temporalTarget) Write(cmd interpreter.Command, s proctest.Scripted) (json.RawMessage, error) {
	t.ev.script(s.Check)
	rid := drive.RequestID()
	raw, err := t.runs.Write(t.ctx, workflows.Write{Org: org, RunID: t.runID, RequestID: rid, Digest: rid, Command: cmd})
	var recorded *workflows.RecordedRefusal
	switch {
	case errors.As(err, &recorded):
		return nil, recorded.Refusal
	case errors.Is(err, workflows.ErrNoRun):
		// The run's workflow is over: the gateway answers run_ended, as
		// the machine does.
		return nil, interpreter.ErrRunEnded()
	}
	return raw, err
}

func (t *temporalTarget) View() (*interpreter.View, error) {
	raw, err := t.runs.View(t.ctx, t.runID)
	if err != nil {
		return nil, err
	}
	var v interpreter.View
	return &v, json.Unmarshal(raw, &v)
}

func (t *temporalTarget) Advance(time.Duration) error {
	return errors.New("time on Temporal is the server's: this case cannot run here")
}

func (t *temporalTarget) Now() time.Time { return time.Now() }

// A process test's case ends on Temporal where it ends on the machine:
// each case of these shipped test files (people deciding, rework after a
// rejection, an escalation returned, a parallel step, a cancellation, route
// choices, checks passing, failing, unsure and erring, and refusals the
// case expects) runs on both, passes on both, and its final run view is
// the same but for ids and times.
func TestProcessTestCasesOnTemporal(t *testing.T) {
	ev := &scriptedEvaluator{procs: drive.Processes{}}
	h := setupWith(t, &workertest.Options{Evaluator: ev})
	for _, file := range []string{
		"../examples/conformance/vendor-check.test.yaml",
		"../examples/conformance/supplier-rfp.test.yaml",
		"../examples/conformance/support-escalation.test.yaml",
		"../examples/conformance/invoice-approval.test.yaml",
		"../examples/conformance/major-incident.test.yaml",
		"../examples/conformance/major-incident-response.test.yaml",
	} {
		f, env, err := proctest.Load(file, proctest.Options{})
		if err != nil {
			t.Fatal(err)
		}
		ev.procs[env.Process.Name] = env.Process
		for _, c := range f.Cases {
			t.Run(fmt.Sprintf("%s/%s", env.Process.Name, c.Name), func(t *testing.T) {
				onMachine := proctest.RunCase(env, file, c, proctest.NewMachine())
				if !onMachine.OK {
					t.Fatalf("on the machine: %+v", onMachine.Failure)
				}
				target := &temporalTarget{ctx: ctxFor(t), runs: h.runs, ev: ev}
				onTemporal := proctest.RunCase(env, file, c, target)
				if !onTemporal.OK {
					t.Fatalf("on Temporal: %+v", onTemporal.Failure)
				}
				got, want := normalView(t, onTemporal.End, target.runID), normalView(t, onMachine.End, proctest.RunID)
				if got != want {
					t.Fatalf("final views differ\non Temporal: %s\non the machine: %s", got, want)
				}
			})
		}
	}
}

// normalView is a view's JSON with what differs between two runs of the
// same script replaced: the run id, every time and every snapshot (a hash
// over run data, which holds times).
func normalView(t *testing.T, v *interpreter.View, runID string) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var x any
	if err := json.Unmarshal(b, &x); err != nil {
		t.Fatal(err)
	}
	var walk func(key string, x any) any
	walk = func(key string, x any) any {
		switch y := x.(type) {
		case map[string]any:
			for k, e := range y {
				y[k] = walk(k, e)
			}
		case []any:
			for i, e := range y {
				y[i] = walk(key, e)
			}
		case string:
			if y == runID {
				return "<run>"
			}
			if key == "snapshot" {
				return "<snapshot>"
			}
			if _, err := time.Parse(time.RFC3339, y); err == nil {
				return "<time>"
			}
		}
		return x
	}
	out, err := json.Marshal(walk("", x))
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}
