package evaluator

import (
	"context"
	"errors"

	"github.com/baton-run/baton/interpreter"
)

// UnsureModel is the model name Unsure records on every verdict.
const UnsureModel = "baton-unsure"

// Unsure is the evaluator with no model behind it: it abstains on every
// question, so every checked submission is unsure and goes to a person.
// Nothing is ever passed without a model. It is what a server uses when no
// evaluator URL is configured.
type Unsure struct{}

// NewUnsure returns the evaluator that is unsure of everything.
func NewUnsure() *Unsure { return &Unsure{} }

// Model returns UnsureModel.
func (*Unsure) Model() string { return UnsureModel }

// Evaluate abstains on every question of r.
func (*Unsure) Evaluate(_ context.Context, r *interpreter.CheckRequest) (*interpreter.CheckAnswers, error) {
	if r == nil || len(r.Questions) == 0 {
		return nil, errors.New("evaluator: a check request with questions is required")
	}
	a := &interpreter.CheckAnswers{Model: UnsureModel}
	for _, q := range r.Questions {
		a.Answers = append(a.Answers, interpreter.CheckAnswer{ID: q.ID, Abstain: true})
	}
	return a, nil
}
