package workflows_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/baton-run/baton/internal/drive"
	"github.com/baton-run/baton/interpreter"
	"github.com/baton-run/baton/interpreter/proctest"
	"github.com/baton-run/baton/workflows"
)

// temporalTarget runs a process test's case as a workflow on Temporal: the
// same commands the machine target applies go to the run as updates.
// Checks and tool calls would go to the worker's evaluator and tool
// servers, so the cases it runs script neither; time is Temporal's own.
type temporalTarget struct {
	ctx   context.Context
	runs  *workflows.Client
	runID string
}

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

func (t *temporalTarget) Write(cmd interpreter.Command, _ proctest.Scripted) (json.RawMessage, error) {
	rid := drive.RequestID()
	raw, err := t.runs.Write(t.ctx, workflows.Write{Org: org, RunID: t.runID, RequestID: rid, Digest: rid, Command: cmd})
	var recorded *workflows.RecordedRefusal
	switch {
	case errors.As(err, &recorded):
		return nil, recorded.Refusal
	case errors.Is(err, workflows.ErrNoRun):
		// The run's workflow is over: the gateway answers run_ended, as
		// the machine does.
		return nil, &interpreter.Error{Code: interpreter.CodeConflict, Message: "The run has ended; nothing more can be written to it.", Issues: []string{interpreter.IssueRunEnded}}
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
// choices and refusals the case expects) runs on both, passes on both, and
// its final run view is the same but for ids and times.
func TestProcessTestCasesOnTemporal(t *testing.T) {
	h := setup(t)
	for _, file := range []string{
		"../conformance/supplier-rfp.test.yaml",
		"../conformance/support-escalation.test.yaml",
		"../conformance/invoice-approval.test.yaml",
		"../conformance/major-incident.test.yaml",
		"../conformance/major-incident-response.test.yaml",
	} {
		f, env, err := proctest.Load(file, proctest.Options{})
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range f.Cases {
			t.Run(fmt.Sprintf("%s/%s", env.Process.Name, c.Name), func(t *testing.T) {
				onMachine := proctest.RunCase(env, file, c, proctest.NewMachine())
				if !onMachine.OK {
					t.Fatalf("on the machine: %+v", onMachine.Failure)
				}
				target := &temporalTarget{ctx: ctxFor(t), runs: h.runs}
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
