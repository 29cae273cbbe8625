package evaluator

import (
	"context"
	"time"

	"github.com/baton-run/baton/interpreter"
)

// Observed returns an Evaluator that calls e and tells observe of every
// call: its outcome, "ok" or the Kind of its error ("error" for an error
// of no kind), and how long it took. telemetry.Metrics.EvaluatorCall is
// such an observer. A nil observe returns e itself.
func Observed(e Evaluator, observe func(outcome string, took time.Duration)) Evaluator {
	if observe == nil {
		return e
	}
	return &observed{e: e, observe: observe}
}

type observed struct {
	e       Evaluator
	observe func(outcome string, took time.Duration)
}

func (o *observed) Evaluate(ctx context.Context, r *interpreter.CheckRequest) (*interpreter.CheckAnswers, error) {
	start := time.Now()
	a, err := o.e.Evaluate(ctx, r)
	outcome := "ok"
	if err != nil {
		outcome = string(KindOf(err))
		if outcome == "" {
			outcome = "error"
		}
	}
	o.observe(outcome, time.Since(start))
	return a, err
}

// Model returns the model of the evaluator observed, "" when it names
// none.
func (o *observed) Model() string {
	if m, ok := o.e.(interface{ Model() string }); ok {
		return m.Model()
	}
	return ""
}
