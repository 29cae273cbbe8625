package drivetest

import (
	"context"
	"fmt"

	"github.com/baton-run/baton/internal/drive"
	"github.com/baton-run/baton/interpreter"
)

// PassingModel is the model the Passing evaluator's answers name.
const PassingModel = "drivetest-passing"

// Passing is an evaluator for the checks of procs that answers every
// question so that it passes, surely: a yes/no question with probability
// 1, a choice with its first passing name, a rubric with its best level,
// each with confidence 1. It refuses a request for a step procs does not
// hold, or whose questions are not the step's.
func Passing(procs drive.Processes) drive.Evaluator { return passing(procs) }

type passing drive.Processes

func (procs passing) Evaluate(_ context.Context, r *interpreter.CheckRequest) (*interpreter.CheckAnswers, error) {
	var s *interpreter.Step
	if p := procs[r.Process]; p != nil {
		s = p.Step(r.Step)
	}
	if s == nil || s.Check == nil || len(s.Check.Questions) != len(r.Questions) {
		return nil, fmt.Errorf("drivetest: no check of step %s of process %q with %d questions", r.Step, r.Process, len(r.Questions))
	}
	one := 1.0
	a := &interpreter.CheckAnswers{Model: PassingModel}
	for i, q := range s.Check.Questions {
		an := interpreter.CheckAnswer{ID: r.Questions[i].ID}
		switch q.Kind {
		case interpreter.QuestionYesNo:
			an.Probability = &one
		case interpreter.QuestionChoice:
			if len(q.PassNames) == 0 {
				return nil, fmt.Errorf("drivetest: question %s of step %s passes no name", an.ID, s.ID)
			}
			an.Name, an.Confidence = q.PassNames[0], &one
		case interpreter.QuestionRubric:
			best := len(q.Levels) - 1
			an.Level, an.Confidence = &best, &one
		}
		a.Answers = append(a.Answers, an)
	}
	return a, nil
}
