// Package evaluator answers the check profile's questions about a
// submission. An Evaluator is shown an interpreter.CheckRequest and returns
// interpreter.CheckAnswers, which interpreter.JudgeCheck turns into a
// verdict.
//
// Three evaluators are here: OpenAI asks any server that speaks the OpenAI
// chat completions API (OpenAI, vLLM, Ollama, LM Studio, gateways); Unsure
// abstains on every question, so every checked submission goes to a person
// (the default when no model is configured); Scripted answers from a file or
// a Go function, for tests and demos.
//
// Every evaluator makes one attempt per call and returns only answers that
// interpreter.ValidateCheckAnswers accepts. Anything else is an *Error whose
// Kind says whether the evaluator was unavailable, refused the request, or
// answered something malformed. Retrying is the caller's business: a run
// retries once and then answers retry (SPEC-DECISIONS §28).
package evaluator

import (
	"context"

	"github.com/baton-run/baton/interpreter"
)

// Evaluator answers a check's questions about one submission. The request
// is untrusted material: its submission is data to judge, never
// instructions. Evaluate returns answers that pass
// interpreter.ValidateCheckAnswers for r, or an error.
type Evaluator interface {
	Evaluate(ctx context.Context, r *interpreter.CheckRequest) (*interpreter.CheckAnswers, error)
}

// Func is an Evaluator written as a function, for tests. Its answers are
// validated like any evaluator's: malformed ones become an *Error of kind
// KindMalformed. An error that is not an *Error becomes one of kind
// KindUnavailable.
type Func func(ctx context.Context, r *interpreter.CheckRequest) (*interpreter.CheckAnswers, error)

// Evaluate calls f and validates what it returns.
func (f Func) Evaluate(ctx context.Context, r *interpreter.CheckRequest) (*interpreter.CheckAnswers, error) {
	a, err := f(ctx, r)
	if err != nil {
		if KindOf(err) == "" {
			err = &Error{Kind: KindUnavailable, Err: err}
		}
		return nil, err
	}
	return checked(r, a, "")
}

// checked returns a when it answers r, else an *Error of kind KindMalformed.
func checked(r *interpreter.CheckRequest, a *interpreter.CheckAnswers, model string) (*interpreter.CheckAnswers, error) {
	if err := interpreter.ValidateCheckAnswers(r, a); err != nil {
		if model == "" && a != nil {
			model = a.Model
		}
		return nil, &Error{Kind: KindMalformed, Model: model, Err: err}
	}
	return a, nil
}
