// Package drivetest is the fixture suite every layer of Baton runs, written
// once over drive.Driver: the run machine (interpreter), the workflow on
// Temporal (workflows) and the gateway over MCP (tests). Run walks each
// conformance fixture to a finish in the variants a layer lists, checks
// every view, claim, renewal, event result, work item and get_work list
// against the official core-2 schemas as it goes, and checks the end.
//
// A checked step's submission waits for its check's verdict on every layer,
// so each layer gives its walks an evaluator that passes every question:
// Passing on the machine, and on the workflow and the gateway a fake model
// that the worker's OpenAI evaluator asks over HTTP (workertest.Model),
// which answers as Passing does. The end of a walk shows the verdict on
// each checked step.
//
// It also holds the fixture loader and the end-of-run check the layers'
// other tests share. It depends on internal/drive, spectest and the
// interpreter alone, so the interpreter's tests run it without linking a
// worker. Only tests import it.
package drivetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/baton-run/baton/internal/drive"
	"github.com/baton-run/baton/internal/testing/spectest"
	"github.com/baton-run/baton/interpreter"
)

// Variant is one way of walking a fixture.
type Variant string

// The variants. Each but Happy takes one detour on the way to a finish.
const (
	// Happy walks straight through.
	Happy Variant = "happy"
	// Rework rejects each approval that has on_reject once (spec §3.1).
	Rework Variant = "rework"
	// Escalation escalates each agent step once and has an operator
	// return it (spec §3.3–3.4).
	Escalation Variant = "escalation"
	// Expiry lets each agent step's first lease run out, with a progress
	// note, and has another agent take it over (spec §3.3). It moves
	// time, so it runs only on drivers that are drive.Clocks.
	Expiry Variant = "expiry"
	// EventsEarly sends every wait_for step's event before the step waits
	// for it (spec §3.6).
	EventsEarly Variant = "events-early"
	// TestMode walks a run started in test mode, which every view, claim,
	// work item and get_work item must say (spec §3.3).
	TestMode Variant = "test-mode"
)

// Layer is one layer of Baton the suite walks.
type Layer struct {
	// New returns the driver of one walk. It is called in the walk's own
	// parallel subtest, so it may bind per-call checks to t; every process
	// Fixtures names must start through it.
	New func(t *testing.T) drive.Driver
	// Fixtures are the conformance fixtures the layer walks: those it can
	// run (see Fixtures).
	Fixtures []string
	// Variants are the walks of each fixture, listed explicitly per layer.
	// Expiry needs a driver that is a drive.Clock.
	Variants []Variant
	// After, when set, checks what only this layer shows once a walk
	// ended at a finish.
	After func(t *testing.T, w Walked)
	// Timeout bounds one walk. Default one minute.
	Timeout time.Duration
	// CheckModel is the model every check verdict the walks record must
	// name: that of the evaluator the layer's checks ask. Default any.
	CheckModel string
}

// Walked is one walk that ended, for Layer.After.
type Walked struct {
	Fixture string
	Variant Variant
	Process *interpreter.Process
	Driver  drive.Driver
	Walk    *drive.Walk
	// End is the view of the run after its end, read again with get_run.
	End *interpreter.View
}

// Run walks every fixture of the layer in every variant of the layer, each
// walk a parallel subtest named fixture/variant.
func Run(t *testing.T, l Layer) {
	t.Helper()
	if l.New == nil || len(l.Fixtures) == 0 || len(l.Variants) == 0 {
		t.Fatal("drivetest: a layer needs New, Fixtures and Variants")
	}
	if l.Timeout == 0 {
		l.Timeout = time.Minute
	}
	for _, name := range l.Fixtures {
		p := Fixture(t, name)
		for _, v := range l.Variants {
			t.Run(name+"/"+string(v), func(t *testing.T) {
				t.Parallel()
				walk(t, l, name, p, v)
			})
		}
	}
}

func walk(t *testing.T, l Layer, name string, p *interpreter.Process, v Variant) {
	d := l.New(t)
	mode := interpreter.ModeLive
	if v == TestMode {
		mode = interpreter.ModeTest
	}
	w := &drive.Walk{Process: p, Mode: mode, ViaWork: true, Check: Checker(p, mode)}
	switch v {
	case Happy, TestMode:
	case Rework:
		w.RejectOnce = true
	case Escalation:
		w.EscalateOnce = true
	case Expiry:
		if _, ok := d.(drive.Clock); !ok {
			t.Fatalf("variant expiry moves time, and %T is not a drive.Clock: leave expiry out of this layer's variants", d)
		}
		w.ExpireOnce = true
	case EventsEarly:
		w.EventsEarly = true
	default:
		t.Fatalf("drivetest: no variant %q", v)
	}
	if c, ok := d.(drive.Clock); ok {
		// On a clock the walk moves, a wait_until waits for it.
		w.Inputs = Inputs(p, c.Now().Add(time.Hour))
	}
	ctx, cancel := context.WithTimeout(context.Background(), l.Timeout)
	defer cancel()
	if _, err := w.Run(ctx, d); err != nil {
		t.Fatal(err)
	}
	end, err := d.GetRun(ctx, w.Agent, w.RunID())
	if err != nil {
		t.Fatalf("get_run after the end: %v", err)
	}
	if err := w.Check("get_run", end); err != nil {
		t.Fatal(err)
	}
	if err := EndedAtFinish(p, end); err != nil {
		t.Fatal(err)
	}
	if end.Run.Mode != mode {
		t.Fatalf("the run ended in mode %q, want %q", end.Run.Mode, mode)
	}
	if err := detours(p, w, v, end); err != nil {
		t.Fatal(err)
	}
	if err := verdicts(p, l.CheckModel, end); err != nil {
		t.Fatal(err)
	}
	if l.After != nil {
		l.After(t, Walked{Fixture: name, Variant: v, Process: p, Driver: d, Walk: w, End: end})
	}
}

// detours checks that a variant's detours happened and left what they
// should in run data.
func detours(p *interpreter.Process, w *drive.Walk, v Variant, end *interpreter.View) error {
	steps := end.Data.Steps
	switch v {
	case Rework:
		if len(w.Rejected()) == 0 && hasOnReject(p) {
			return errors.New("no approval was rejected")
		}
		for _, id := range w.Rejected() {
			d := steps[id]
			if d == nil || d.Record == nil || d.Decision != interpreter.DecisionApproved || len(d.History) == 0 || d.History[0].Decision != interpreter.DecisionRejected {
				return fmt.Errorf("approval %s: want approved now and rejected in history, got %+v", id, d)
			}
		}
	case Escalation:
		if len(w.Escalated()) == 0 && hasKind(p, interpreter.KindAgent) {
			return errors.New("no agent step was escalated")
		}
		for _, id := range w.Escalated() {
			if d := steps[id]; d == nil || d.Record == nil || d.By != w.Agent.ID {
				return fmt.Errorf("agent step %s after a return: %+v, want done by %s", id, d, w.Agent.ID)
			}
		}
	case Expiry:
		if len(w.Expired()) == 0 && hasKind(p, interpreter.KindAgent) {
			return errors.New("no lease ran out")
		}
		for _, id := range w.Expired() {
			if d := steps[id]; d == nil || d.Record == nil || d.By != w.Other.ID {
				return fmt.Errorf("agent step %s after its lease ran out: %+v, want done by %s", id, d, w.Other.ID)
			}
		}
	case EventsEarly:
		for _, s := range p.Steps {
			d := steps[s.ID]
			if s.Kind != interpreter.KindWaitFor || d == nil || d.Record == nil {
				continue
			}
			if d.Output["early"] != true || d.By != w.Agent.ID {
				return fmt.Errorf("wait_for step %s recorded %+v, want the event sent early", s.ID, d.Record)
			}
		}
	}
	return nil
}

// verdicts checks that every completion of a checked step carries its
// check's verdict in run data, as steps.<id>.check for the current one and
// in history for earlier ones (profile-check §3). The suite's evaluators
// pass every check, and its walks leave no checked step to a person who
// completes an escalation (which is not checked again), so every verdict
// is a pass of every question, by model when it is set.
func verdicts(p *interpreter.Process, model string, end *interpreter.View) error {
	for _, s := range p.Steps {
		d := end.Data.Steps[s.ID]
		if s.Check == nil || d == nil {
			continue
		}
		recs := append([]*interpreter.Record{d.Record}, d.History...)
		for i, rec := range recs {
			if rec == nil {
				continue
			}
			if err := passed(s, model, rec.Check); err != nil {
				which := "the current completion"
				if i > 0 {
					which = fmt.Sprintf("history[%d]", i-1)
				}
				return fmt.Errorf("checked step %s, %s: %w", s.ID, which, err)
			}
		}
	}
	return nil
}

// passed checks one recorded verdict of s's check.
func passed(s *interpreter.Step, model string, raw json.RawMessage) error {
	if len(raw) == 0 {
		return errors.New("no check verdict is recorded")
	}
	if err := spectest.ValidateErr("check-verdict.json", raw); err != nil {
		return err
	}
	var v interpreter.CheckVerdict
	if err := json.Unmarshal(raw, &v); err != nil {
		return err
	}
	switch {
	case v.Verdict != interpreter.VerdictPass || v.Advisory != s.Advisory:
		return fmt.Errorf("verdict %s (advisory %v), want pass (advisory %v)", v.Verdict, v.Advisory, s.Advisory)
	case v.Model == "" || (model != "" && v.Model != model):
		return fmt.Errorf("the verdict names model %q, want %q", v.Model, model)
	case len(v.Questions) != len(s.Check.Questions):
		return fmt.Errorf("the verdict answers %d questions, the check asks %d", len(v.Questions), len(s.Check.Questions))
	}
	for i, q := range v.Questions {
		if q.Ask != s.Check.Questions[i].Ask || q.Kind != s.Check.Questions[i].Kind || q.Result != interpreter.VerdictPass {
			return fmt.Errorf("question %d: %+v, want %q (%s) passed", i+1, q, s.Check.Questions[i].Ask, s.Check.Questions[i].Kind)
		}
	}
	return nil
}

func hasOnReject(p *interpreter.Process) bool {
	for _, s := range p.Steps {
		if s.OnReject != "" {
			return true
		}
	}
	return false
}

func hasKind(p *interpreter.Process, k interpreter.Kind) bool {
	for _, s := range p.Steps {
		if s.Kind == k {
			return true
		}
	}
	return false
}

// Inputs returns samples of p's inputs with every datetime at at, so that
// a wait_until on one waits until then.
func Inputs(p *interpreter.Process, at time.Time) map[string]any {
	in := interpreter.Samples(p.Inputs)
	for _, f := range p.Inputs {
		if f.Type == interpreter.TypeDatetime && len(f.OneOf) == 0 {
			in[f.Name] = at.UTC().Format(time.RFC3339)
		}
	}
	return in
}
