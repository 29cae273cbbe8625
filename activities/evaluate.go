package activities

import (
	"context"
	"errors"

	"go.temporal.io/sdk/temporal"

	"github.com/baton-run/baton/activities/evaluator"
	"github.com/baton-run/baton/interpreter"
)

// Evaluate asks the evaluator about a checked submission and returns its
// answers, checked against the questions. Anything but well-formed
// answers is an error whose type is the evaluator error's kind
// (unavailable, rejected, malformed) and whose details hold the model's
// name: never a verdict. The workflow retries it once.
func (a *Activities) Evaluate(ctx context.Context, req *interpreter.CheckRequest) (*interpreter.CheckAnswers, error) {
	ev := a.opts.Evaluator
	if ev == nil {
		return nil, temporal.NewApplicationErrorWithOptions("no evaluator is configured for the check profile", string(evaluator.KindUnavailable),
			temporal.ApplicationErrorOptions{Details: []any{""}})
	}
	model := ""
	if m, ok := ev.(interface{ Model() string }); ok {
		model = m.Model()
	}
	ans, err := ev.Evaluate(ctx, req)
	if err == nil {
		err = interpreter.ValidateCheckAnswers(req, ans)
	}
	if err != nil {
		kind := evaluator.KindOf(err)
		switch {
		case errors.Is(err, interpreter.ErrMalformedAnswers):
			kind = evaluator.KindMalformed
		case kind == "":
			kind = evaluator.KindUnavailable
		}
		var e *evaluator.Error
		if errors.As(err, &e) && e.Model != "" {
			model = e.Model
		}
		a.opts.Logger.Warn("check evaluator failed", "step", req.Step, "process", req.Process, "kind", kind, "model", model, "error", err)
		return nil, temporal.NewApplicationErrorWithOptions(err.Error(), string(kind), temporal.ApplicationErrorOptions{Details: []any{model}})
	}
	return ans, nil
}
