package activities

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/baton-run/baton/activities/evaluator"
	"github.com/baton-run/baton/internal/store"
	"github.com/baton-run/baton/internal/testing/pgtest"
	"github.com/baton-run/baton/interpreter"
)

// countingMetrics records the calls New wires to it.
type countingMetrics struct {
	mu         sync.Mutex
	evaluator  []string
	downstream int
}

func (m *countingMetrics) EvaluatorCall(outcome string, _ time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.evaluator = append(m.evaluator, outcome)
}

func (m *countingMetrics) DownstreamCall(string, string, string, time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.downstream++
}
func (*countingMetrics) ReadModelWritten(time.Duration)          {}
func (*countingMetrics) RunStarted(string, string, string)       {}
func (*countingMetrics) RunEnded(string, string, string, string) {}

// With Metrics set, New counts every evaluator call: a worker needs no
// wiring of its own.
func TestNewCountsEvaluatorCalls(t *testing.T) {
	t.Parallel()
	st, err := store.Open(context.Background(), pgtest.NewDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	m := &countingMetrics{}
	a, err := New(st, nil, &Options{Evaluator: evaluator.NewUnsure(), Metrics: m})
	if err != nil {
		t.Fatal(err)
	}
	req := &interpreter.CheckRequest{Questions: []interpreter.CheckQuestion{{ID: "q1", Ask: "Is it complete?", Kind: interpreter.QuestionYesNo}}}
	if _, err := a.opts.Evaluator.Evaluate(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	if _, err := a.opts.Evaluator.Evaluate(context.Background(), nil); err == nil {
		t.Fatal("an empty request was evaluated")
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.evaluator) != 2 || m.evaluator[0] != "ok" {
		t.Errorf("evaluator calls counted: %v, want ok and a failure", m.evaluator)
	}
}
