package evaluator

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/baton-run/baton/interpreter"
)

// ScriptedModel is the model name a script without one records.
const ScriptedModel = "baton-scripted"

// Script holds scripted answers, for tests and demos. As YAML (or JSON):
//
//	model: demo-model            # optional, default baton-scripted
//	steps:
//	  check_vendor:              # a step id, or process/step for one process only
//	    - ask: The cleared verdict matches what the attached report says.
//	      probability: 0.95
//	    - index: 1               # the question's 0-based index, instead of ask
//	      name: states
//	      confidence: 0.9
//	    - ask: How complete is the screening?
//	      level: 2
//	      confidence: 0.85
//
// Every question of a checked step needs exactly one answer, and every
// answer must name a question of the step: a step or question the script
// does not know is an error, never a silent pass.
type Script struct {
	// Model is recorded on verdicts. Default "baton-scripted".
	Model string `yaml:"model" json:"model"`
	// Steps maps a step id, or "<process>/<step>" to answer for one process
	// only, to the answers. process/step wins over step.
	Steps map[string][]ScriptAnswer `yaml:"steps" json:"steps"`
}

// ScriptAnswer answers one question, named by its ask text or its 0-based
// index. The answer fields are those of interpreter.CheckAnswer.
type ScriptAnswer struct {
	Ask         string   `yaml:"ask,omitempty" json:"ask,omitempty"`
	Index       *int     `yaml:"index,omitempty" json:"index,omitempty"`
	Probability *float64 `yaml:"probability,omitempty" json:"probability,omitempty"`
	Name        string   `yaml:"name,omitempty" json:"name,omitempty"`
	Level       *int     `yaml:"level,omitempty" json:"level,omitempty"`
	Confidence  *float64 `yaml:"confidence,omitempty" json:"confidence,omitempty"`
	Abstain     bool     `yaml:"abstain,omitempty" json:"abstain,omitempty"`
}

// ParseScript reads a script from YAML or JSON, refusing unknown keys.
func ParseScript(b []byte) (*Script, error) {
	d := yaml.NewDecoder(bytes.NewReader(b))
	d.KnownFields(true)
	var s Script
	if err := d.Decode(&s); err != nil {
		return nil, fmt.Errorf("evaluator script: %w", err)
	}
	return &s, nil
}

// LoadScript reads a script file.
func LoadScript(path string) (*Script, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("evaluator script: %w", err)
	}
	s, err := ParseScript(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

// Scripted answers from a Script.
type Scripted struct {
	script Script
}

// NewScripted returns an evaluator answering from s. It refuses a script
// with no steps, or with an answer that names its question by both or
// neither of ask and index.
func NewScripted(s *Script) (*Scripted, error) {
	if s == nil || len(s.Steps) == 0 {
		return nil, errors.New("evaluator script: no steps; give answers under steps: <step id>")
	}
	var problems []string
	for key, answers := range s.Steps {
		if len(answers) == 0 {
			problems = append(problems, fmt.Sprintf("steps.%s: no answers", key))
		}
		for i, a := range answers {
			if (a.Ask == "") == (a.Index == nil) {
				problems = append(problems, fmt.Sprintf("steps.%s[%d]: name the question by ask or by index, not both or neither", key, i))
			}
		}
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("evaluator script: %s", strings.Join(problems, "; "))
	}
	sc := &Scripted{script: *s}
	if sc.script.Model == "" {
		sc.script.Model = ScriptedModel
	}
	return sc, nil
}

// Model returns the model name the script records.
func (s *Scripted) Model() string { return s.script.Model }

// Evaluate answers r from the script. A step the script does not know, a
// question without an answer, an answer naming no question of the step,
// or two answers to one question are an *Error of kind KindRejected;
// answers out of range are KindMalformed, as from any evaluator.
func (s *Scripted) Evaluate(_ context.Context, r *interpreter.CheckRequest) (*interpreter.CheckAnswers, error) {
	if r == nil || len(r.Questions) == 0 {
		return nil, errors.New("evaluator: a check request with questions is required")
	}
	reject := func(format string, args ...any) error {
		return &Error{Kind: KindRejected, Model: s.script.Model, Err: fmt.Errorf(format, args...)}
	}
	key := r.Process + "/" + r.Step
	entries, ok := s.script.Steps[key]
	if !ok {
		key = r.Step
		entries, ok = s.script.Steps[key]
	}
	if !ok {
		return nil, reject("the script has no answers for step %q of process %q", r.Step, r.Process)
	}
	used := make([]bool, len(entries))
	a := &interpreter.CheckAnswers{Model: s.script.Model}
	for i, q := range r.Questions {
		match := -1
		for j, e := range entries {
			if (e.Index != nil && *e.Index == i) || (e.Index == nil && e.Ask == q.Ask) {
				if match >= 0 {
					return nil, reject("steps.%s: answers %d and %d both answer question %d %q", key, match, j, i, q.Ask)
				}
				match = j
			}
		}
		if match < 0 {
			return nil, reject("steps.%s: no answer to question %d %q", key, i, q.Ask)
		}
		used[match] = true
		e := entries[match]
		a.Answers = append(a.Answers, interpreter.CheckAnswer{
			ID: q.ID, Probability: e.Probability, Name: e.Name, Level: e.Level, Confidence: e.Confidence, Abstain: e.Abstain,
		})
	}
	for j, u := range used {
		if !u {
			return nil, reject("steps.%s[%d]: names no question of step %q", key, j, r.Step)
		}
	}
	return checked(r, a, s.script.Model)
}
