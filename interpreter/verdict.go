package interpreter

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// This file is the check-1 profile's verdict logic (profile-check §2–§5):
// what the evaluator is shown, what it answers, and the verdict and issues
// that follow. The evaluator itself is called outside the interpreter; time
// arrives as an argument.

// The check profile's server defaults (profile-check §5).
const (
	// DefaultCheckPass is the default yes-probability at or above which a
	// yes/no answer passes.
	DefaultCheckPass = 0.9
	// DefaultCheckConfidence is the default confidence below which a choice
	// or rubric answer is unsure (SPEC-DECISIONS §27).
	DefaultCheckConfidence = 0.8
	// DefaultCheckStateBytes is the default size of the run data the
	// evaluator is shown.
	DefaultCheckStateBytes = 65536
	// MinCheckStateBytes is the smallest CheckLimits.StateBytes accepted.
	MinCheckStateBytes = 1024
)

// CheckLimits are the check profile's server limits. Their JSON names are
// the describe.limits keys checkPass, checkFail, checkConfidence and
// checkStateBytes. A zero Pass, Confidence or StateBytes means its default.
type CheckLimits struct {
	// Pass is the yes-probability at or above which a yes/no answer passes
	// when the question writes no pass. Default 0.9.
	Pass float64 `json:"checkPass"`
	// Fail, when set, is the yes-probability below which a yes/no answer
	// fails when the question writes no fail; between it and pass the answer
	// is unsure. Default nil: no fail threshold, below pass fails.
	Fail *float64 `json:"checkFail"`
	// Confidence is the confidence below which a choice or rubric answer is
	// unsure when the question writes no confidence. Default 0.8.
	Confidence float64 `json:"checkConfidence"`
	// StateBytes caps the compact JSON size of the run data the evaluator
	// is shown; larger run data is truncated oldest step first. Default
	// 65536, at least 1024.
	StateBytes int `json:"checkStateBytes"`
}

// DefaultCheckLimits returns the profile's server defaults: pass 0.9, no
// fail, confidence 0.8, 64 KiB of run data.
func DefaultCheckLimits() CheckLimits {
	return CheckLimits{Pass: DefaultCheckPass, Confidence: DefaultCheckConfidence, StateBytes: DefaultCheckStateBytes}
}

// Validate reports a limit out of range, naming it and its bounds. Zero
// values are valid: they take their defaults.
func (l CheckLimits) Validate() error {
	d := l.WithDefaults()
	switch {
	case math.IsNaN(l.Pass) || l.Pass < 0 || l.Pass > 1:
		return fmt.Errorf("check limits: checkPass is %v; set it between 0 and 1, or leave it 0 for %v", l.Pass, DefaultCheckPass)
	case l.Fail != nil && (math.IsNaN(*l.Fail) || *l.Fail < 0 || *l.Fail > d.Pass):
		return fmt.Errorf("check limits: checkFail is %v; set it between 0 and checkPass (%v), or leave it unset", *l.Fail, d.Pass)
	case math.IsNaN(l.Confidence) || l.Confidence < 0 || l.Confidence > 1:
		return fmt.Errorf("check limits: checkConfidence is %v; set it between 0 and 1, or leave it 0 for %v", l.Confidence, DefaultCheckConfidence)
	case l.StateBytes < 0 || (l.StateBytes > 0 && l.StateBytes < MinCheckStateBytes):
		return fmt.Errorf("check limits: checkStateBytes is %d; set it to at least %d, or leave it 0 for %d", l.StateBytes, MinCheckStateBytes, DefaultCheckStateBytes)
	}
	return nil
}

// WithDefaults fills the zero limits with their defaults.
func (l CheckLimits) WithDefaults() CheckLimits {
	if l.Pass <= 0 {
		l.Pass = DefaultCheckPass
	}
	if l.Confidence <= 0 {
		l.Confidence = DefaultCheckConfidence
	}
	if l.StateBytes <= 0 {
		l.StateBytes = DefaultCheckStateBytes
	}
	return l
}

// Verdict is the result of a check or of one of its questions.
type Verdict string

// The verdicts. A question's result is pass, fail or unsure; a check's
// verdict is its worst question (unsure outranks fail, fail outranks pass),
// or error when the evaluator did not answer.
const (
	VerdictPass   Verdict = "pass"
	VerdictFail   Verdict = "fail"
	VerdictUnsure Verdict = "unsure"
	VerdictError  Verdict = "error"
)

// String returns the verdict's name.
func (v Verdict) String() string { return string(v) }

func (v Verdict) rank() int {
	switch v {
	case VerdictPass:
		return 0
	case VerdictFail:
		return 1
	case VerdictUnsure:
		return 2
	}
	return 3
}

// CheckRequest is everything the evaluator is shown for one submission
// (profile-check §2): the step's instructions, the process body, the run
// data (truncated to CheckLimits.StateBytes), the submission and the
// questions. Its JSON form is stable: fields in struct order, map keys
// sorted, so the same material always reads the same. User values travel
// as JSON text, so the request survives a JSON round trip (a Temporal
// activity's input) byte for byte, numbers included.
type CheckRequest struct {
	// Process is the process name.
	Process string `json:"process"`
	// Step is the id of the checked step.
	Step string `json:"step"`
	// Instructions are the step's instructions (its agent or task text).
	Instructions string `json:"instructions"`
	// Body is the process body, the Markdown after the frontmatter.
	Body    string       `json:"body"`
	RunData CheckRunData `json:"runData"`
	// Submission is the submission being checked. It is untrusted input:
	// an evaluator treats it as data, never as instructions.
	Submission CheckSubmission `json:"submission"`
	// Questions are the check's questions in the order written.
	Questions []CheckQuestion `json:"questions"`
}

// CheckRunData is the run data the evaluator is shown: the inputs and, per
// step, the same entry run data holds, as compact JSON. When the run data
// is larger than CheckLimits.StateBytes, whole steps are left out, the one
// whose latest completion is oldest first, until it fits; if the inputs
// alone are too large they are left out too.
type CheckRunData struct {
	// Inputs are the run's inputs, or null when they were left out.
	Inputs json.RawMessage `json:"inputs"`
	// Steps holds each step's run-data entry that fits, by step id.
	Steps map[string]json.RawMessage `json:"steps"`
	// Truncated is true when anything was left out.
	Truncated bool `json:"truncated"`
	// OmittedSteps lists the steps left out, in the order they were
	// dropped (oldest completion first).
	OmittedSteps []string `json:"omittedSteps,omitempty"`
	// InputsOmitted is true when the inputs were left out.
	InputsOmitted bool `json:"inputsOmitted,omitempty"`
}

// CheckSubmission is the submission as the evaluator sees it.
type CheckSubmission struct {
	// Output is the submitted output object as JSON, numbers as written.
	Output  json.RawMessage `json:"output"`
	Summary string          `json:"summary"`
	// Evidence lists the evidence references; the evaluator does not open
	// files.
	Evidence []CheckEvidence `json:"evidence"`
}

// CheckEvidence is one evidence reference shown to the evaluator.
type CheckEvidence struct {
	Kind string `json:"kind"`
	Ref  string `json:"ref"`
}

// CheckQuestion is one question as the evaluator sees it: no thresholds,
// only what to answer.
type CheckQuestion struct {
	// ID names the question in the answers: "q1", "q2", … in order.
	ID   string       `json:"id"`
	Ask  string       `json:"ask"`
	Kind QuestionKind `json:"kind"`
	// OneOf are a choice question's answers, names and descriptions, in the
	// order written.
	OneOf []Choice `json:"one_of,omitempty"`
	// Levels are a rubric question's levels, worst first, numbered from 0.
	Levels []CheckLevel `json:"levels,omitempty"`
}

// CheckLevel is one level of a rubric question.
type CheckLevel struct {
	Level int    `json:"level"`
	Text  string `json:"text"`
}

// QuestionID returns the id of the i-th question (0-based): "q1" for 0.
func QuestionID(i int) string { return "q" + strconv.Itoa(i+1) }

// NewCheckRequest builds what the evaluator is shown for a submission to
// step s of process p. data is the run data as it stands before the
// submission is recorded (nil for none); it is copied, so the request does
// not change when the run does. It refuses a step without a check.
func NewCheckRequest(p *Process, s *Step, data *Data, sub Submission, limits CheckLimits) (*CheckRequest, error) {
	if p == nil || s == nil {
		return nil, errors.New("check request: a process and a step are required")
	}
	if s.Check == nil || len(s.Check.Questions) == 0 {
		return nil, fmt.Errorf("check request: step %q has no check", s.ID)
	}
	l := limits.WithDefaults()
	rd, err := checkRunData(p, data, l.StateBytes)
	if err != nil {
		return nil, fmt.Errorf("check request for step %q: %w", s.ID, err)
	}
	r := &CheckRequest{
		Process:      p.Name,
		Step:         s.ID,
		Instructions: s.Text,
		Body:         p.Body,
		RunData:      rd,
		Submission:   CheckSubmission{Output: json.RawMessage("{}"), Evidence: []CheckEvidence{}},
		Questions:    checkQuestions(s.Check),
	}
	if sub.Output != nil {
		if r.Submission.Output, err = json.Marshal(sub.Output); err != nil {
			return nil, fmt.Errorf("check request for step %q: encode the output: %w", s.ID, err)
		}
	}
	if sub.Summary != nil {
		r.Submission.Summary = *sub.Summary
	}
	for _, e := range sub.Evidence {
		r.Submission.Evidence = append(r.Submission.Evidence, CheckEvidence{Kind: e.Kind, Ref: e.Ref})
	}
	return r, nil
}

// checkQuestions returns the questions of c as the evaluator sees them.
func checkQuestions(c *Check) []CheckQuestion {
	out := make([]CheckQuestion, len(c.Questions))
	for i, q := range c.Questions {
		cq := CheckQuestion{ID: QuestionID(i), Ask: q.Ask, Kind: q.Kind}
		switch q.Kind {
		case QuestionChoice:
			cq.OneOf = slices.Clone(q.OneOf)
		case QuestionRubric:
			for n, text := range q.Levels {
				cq.Levels = append(cq.Levels, CheckLevel{Level: n, Text: text})
			}
		}
		out[i] = cq
	}
	return out
}

// checkRunData copies run data as JSON, leaving out whole steps, oldest
// latest completion first, until its compact JSON form
// {"inputs":…,"steps":{…}} is at most max bytes.
func checkRunData(p *Process, data *Data, max int) (CheckRunData, error) {
	inputs := map[string]any{}
	var steps map[string]*StepData
	if data != nil {
		if data.Inputs != nil {
			inputs = data.Inputs
		}
		steps = data.Steps
	}
	rd := CheckRunData{Steps: map[string]json.RawMessage{}}
	var err error
	if rd.Inputs, err = json.Marshal(inputs); err != nil {
		return rd, fmt.Errorf("encode run inputs: %w", err)
	}
	type entry struct {
		id, last string
		index    int
		size     int // bytes of "id":entry
	}
	var entries []entry
	size := len(`{"inputs":,"steps":{}}`) + len(rd.Inputs)
	for id, d := range steps {
		if d == nil {
			continue
		}
		raw, err := json.Marshal(d)
		if err != nil {
			return rd, fmt.Errorf("encode run data of step %q: %w", id, err)
		}
		key, _ := json.Marshal(id)
		rd.Steps[id] = raw
		e := entry{id: id, last: latestAt(d), index: p.Index(id), size: len(key) + 1 + len(raw)}
		entries = append(entries, e)
		size += e.size
	}
	if len(entries) > 1 {
		size += len(entries) - 1 // commas between steps
	}
	slices.SortFunc(entries, func(a, b entry) int {
		if c := strings.Compare(a.last, b.last); c != 0 {
			return c
		}
		if a.index != b.index {
			return a.index - b.index
		}
		return strings.Compare(a.id, b.id)
	})
	for len(entries) > 0 && size > max {
		e := entries[0]
		entries = entries[1:]
		delete(rd.Steps, e.id)
		size -= e.size
		if len(entries) > 0 {
			size-- // its comma
		}
		rd.OmittedSteps = append(rd.OmittedSteps, e.id)
		rd.Truncated = true
	}
	if size > max {
		size -= len(rd.Inputs) - len("null")
		rd.Inputs = json.RawMessage("null")
		rd.InputsOmitted = true
		rd.Truncated = true
	}
	return rd, nil
}

// latestAt returns the time of a step's latest completion in run data, as
// the sortable stamp run data records, or "" when none is recorded.
func latestAt(d *StepData) string {
	last := ""
	if d.Record != nil {
		last = d.Record.At
	}
	for _, r := range d.History {
		if r != nil && r.At > last {
			last = r.At
		}
	}
	return last
}

// CheckAnswers are the evaluator's answers to a CheckRequest, one per
// question in order.
type CheckAnswers struct {
	// Model names what answered; it is recorded on the verdict.
	Model   string        `json:"model"`
	Answers []CheckAnswer `json:"answers"`
}

// CheckAnswer answers one question. Exactly the fields of the question's
// kind are set: Probability for yes/no; Name and Confidence for a choice;
// Level and Confidence for a rubric. An evaluator that declines to answer
// sets Abstain and nothing else, and the question's result is unsure.
type CheckAnswer struct {
	// ID is the question's id, "q1" for the first.
	ID string `json:"id"`
	// Abstain is true when the evaluator gives no answer: the result is
	// unsure and the verdict shows a null answer. An evaluator with no model
	// behind it abstains on every question, so nothing passes unseen.
	Abstain bool `json:"abstain,omitempty"`
	// Probability is the probability, from 0 to 1, that the answer to a
	// yes/no question is yes.
	Probability *float64 `json:"probability,omitempty"`
	// Name is the chosen answer of a choice question, one of its one_of.
	Name string `json:"name,omitempty"`
	// Level is the chosen level of a rubric question, from 0 (worst).
	Level *int `json:"level,omitempty"`
	// Confidence, from 0 to 1, is how sure the evaluator is of a choice or
	// a level.
	Confidence *float64 `json:"confidence,omitempty"`
}

// ErrMalformedAnswers matches every *MalformedAnswersError.
var ErrMalformedAnswers = errors.New("malformed check answers")

// MalformedAnswersError says what is wrong with an evaluator's answers.
// Malformed answers are an evaluator error, never a verdict.
type MalformedAnswersError struct {
	// Problems lists each problem, such as "answers[1].name: \"maybe\" is
	// not one of states, hedges, unclear".
	Problems []string
}

func (e *MalformedAnswersError) Error() string {
	return "malformed check answers, an evaluator error and not a verdict: " + strings.Join(e.Problems, "; ")
}

// Is reports whether target is ErrMalformedAnswers.
func (e *MalformedAnswersError) Is(target error) bool { return target == ErrMalformedAnswers }

// ValidateCheckAnswers checks answers against the questions of r: a model
// name, one answer per question in order with the question's id, and for
// each exactly the fields of its kind in range (a probability and a
// confidence from 0 to 1, a name among one_of, a level among the levels),
// or Abstain alone.
// It returns a *MalformedAnswersError listing every problem, or nil.
func ValidateCheckAnswers(r *CheckRequest, a *CheckAnswers) error {
	if r == nil {
		return &MalformedAnswersError{Problems: []string{"no request to check the answers against"}}
	}
	if a == nil {
		return &MalformedAnswersError{Problems: []string{"no answers"}}
	}
	var ps []string
	add := func(format string, args ...any) { ps = append(ps, fmt.Sprintf(format, args...)) }
	if strings.TrimSpace(a.Model) == "" {
		add("model: missing")
	}
	if len(a.Answers) != len(r.Questions) {
		add("answers: %d for %d questions", len(a.Answers), len(r.Questions))
	}
	for i, q := range r.Questions {
		if i >= len(a.Answers) {
			add("answers[%d]: missing, the answer to %s", i, q.ID)
			continue
		}
		an := a.Answers[i]
		at := fmt.Sprintf("answers[%d]", i)
		if an.ID != q.ID {
			add("%s.id: %q, want %q", at, an.ID, q.ID)
		}
		unit := func(field string, v *float64) {
			switch {
			case v == nil:
				add("%s.%s: missing", at, field)
			case math.IsNaN(*v) || *v < 0 || *v > 1:
				add("%s.%s: %v is not between 0 and 1", at, field, *v)
			}
		}
		notFor := func(field string, set bool) {
			if set {
				add("%s.%s: not an answer to a %s question", at, field, q.Kind)
			}
		}
		if an.Abstain {
			if an.Probability != nil || an.Name != "" || an.Level != nil || an.Confidence != nil {
				add("%s: abstains and answers", at)
			}
			continue
		}
		switch q.Kind {
		case QuestionYesNo:
			unit("probability", an.Probability)
			notFor("name", an.Name != "")
			notFor("level", an.Level != nil)
			notFor("confidence", an.Confidence != nil)
		case QuestionChoice:
			names := make([]string, len(q.OneOf))
			for n, c := range q.OneOf {
				names[n] = c.Name
			}
			switch {
			case an.Name == "":
				add("%s.name: missing, one of %s", at, strings.Join(names, ", "))
			case !slices.Contains(names, an.Name):
				add("%s.name: %q is not one of %s", at, an.Name, strings.Join(names, ", "))
			}
			unit("confidence", an.Confidence)
			notFor("probability", an.Probability != nil)
			notFor("level", an.Level != nil)
		case QuestionRubric:
			switch {
			case an.Level == nil:
				add("%s.level: missing, a level from 0 to %d", at, len(q.Levels)-1)
			case *an.Level < 0 || *an.Level >= len(q.Levels):
				add("%s.level: %d is not a level from 0 to %d", at, *an.Level, len(q.Levels)-1)
			}
			unit("confidence", an.Confidence)
			notFor("probability", an.Probability != nil)
			notFor("name", an.Name != "")
		default:
			add("questions[%d].kind: %q is not a question kind", i, q.Kind)
		}
	}
	for i := len(r.Questions); i < len(a.Answers); i++ {
		add("answers[%d]: no such question", i)
	}
	if len(ps) > 0 {
		return &MalformedAnswersError{Problems: ps}
	}
	return nil
}

// CheckVerdict is a check's verdict in the shape of the check-verdict
// schema: recorded as steps.<id>.check, handoff.check or escalation.check.
type CheckVerdict struct {
	Verdict  Verdict `json:"verdict"`
	Advisory bool    `json:"advisory"`
	// Model is what answered, as the evaluator reported it.
	Model     string                `json:"model"`
	Questions []CheckQuestionResult `json:"questions"`
	// Truncated is true when the evaluator was shown truncated run data.
	Truncated bool `json:"truncated,omitempty"`
	// At is when the verdict was reached, as run data writes times.
	At string `json:"at"`
}

// CheckQuestionResult is one question's answer and result.
type CheckQuestionResult struct {
	Ask  string       `json:"ask"`
	Kind QuestionKind `json:"kind"`
	// Answer is the yes-probability (float64) of a yes/no question, the
	// chosen name (string) of a choice, the level (int) of a rubric, or nil
	// when the evaluator abstained or did not answer. Decoded from JSON a number is a
	// float64.
	Answer any `json:"answer"`
	// Confidence is set for a choice or a rubric.
	Confidence *float64 `json:"confidence,omitempty"`
	// Result is pass, fail or unsure.
	Result Verdict `json:"result"`
}

// JudgeCheck computes the verdict of step s's check from the evaluator's
// answers to r (profile-check §2–§3), at time now, and the issues lines of
// the questions that failed (nil when none did).
//
// A yes/no answer with probability p fails when a fail threshold is set
// (the question's fail, else CheckLimits.Fail) and p is below it; otherwise
// it passes when p is at or above pass (the question's pass, else
// CheckLimits.Pass); otherwise it is unsure when a fail threshold is set
// and fails when none is. A choice passes when its name is in pass, is
// unsure when in unsure, and fails otherwise; a rubric passes when its level
// is at or above pass and fails otherwise; either is unsure whatever the
// answer when its confidence is below the question's confidence, else
// CheckLimits.Confidence. A question the evaluator abstained on is
// unsure. The verdict is the worst result.
//
// Malformed answers return an error matching ErrMalformedAnswers and no
// verdict: they are an evaluator error. A request built for another step,
// or for other questions, is an error too.
func JudgeCheck(s *Step, r *CheckRequest, a *CheckAnswers, limits CheckLimits, now time.Time) (*CheckVerdict, []string, error) {
	if s == nil || s.Check == nil || len(s.Check.Questions) == 0 {
		return nil, nil, errors.New("judge check: the step has no check")
	}
	if r == nil || r.Step != s.ID {
		return nil, nil, fmt.Errorf("judge check: the request is not for step %q; build it with NewCheckRequest for this step", s.ID)
	}
	if len(r.Questions) != len(s.Check.Questions) {
		return nil, nil, fmt.Errorf("judge check: the request has %d questions and step %q has %d; build it again for this version", len(r.Questions), s.ID, len(s.Check.Questions))
	}
	for i, q := range s.Check.Questions {
		if r.Questions[i].Ask != q.Ask || r.Questions[i].Kind != q.Kind {
			return nil, nil, fmt.Errorf("judge check: question %d of the request differs from step %q's; build it again for this version", i, s.ID)
		}
	}
	if err := ValidateCheckAnswers(r, a); err != nil {
		return nil, nil, err
	}
	l := limits.WithDefaults()
	v := &CheckVerdict{
		Verdict:   VerdictPass,
		Advisory:  s.Advisory,
		Model:     a.Model,
		Questions: make([]CheckQuestionResult, 0, len(s.Check.Questions)),
		Truncated: r.RunData.Truncated,
		At:        FormatTime(now),
	}
	for i, q := range s.Check.Questions {
		res, err := judgeQuestion(q, a.Answers[i], l)
		if err != nil {
			return nil, nil, fmt.Errorf("judge check: step %q question %d: %w", s.ID, i, err)
		}
		v.Questions = append(v.Questions, res)
		if res.Result.rank() > v.Verdict.rank() {
			v.Verdict = res.Result
		}
	}
	return v, CheckIssues(s, v, limits), nil
}

// judgeQuestion computes one question's result from a validated answer.
func judgeQuestion(q *Question, an CheckAnswer, l CheckLimits) (CheckQuestionResult, error) {
	res := CheckQuestionResult{Ask: q.Ask, Kind: q.Kind}
	if an.Abstain {
		res.Result = VerdictUnsure
		return res, nil
	}
	switch q.Kind {
	case QuestionYesNo:
		p := *an.Probability
		pass, fail := yesNoThresholds(q, l)
		res.Answer = p
		switch {
		case fail != nil && p < *fail:
			res.Result = VerdictFail
		case p >= pass:
			res.Result = VerdictPass
		case fail != nil:
			res.Result = VerdictUnsure
		default:
			res.Result = VerdictFail
		}
		return res, nil
	case QuestionChoice:
		res.Answer = an.Name
		switch {
		case slices.Contains(q.PassNames, an.Name):
			res.Result = VerdictPass
		case slices.Contains(q.Unsure, an.Name):
			res.Result = VerdictUnsure
		default:
			res.Result = VerdictFail
		}
	case QuestionRubric:
		if q.Pass == nil {
			return res, errors.New("a rubric question has no pass level")
		}
		res.Answer = *an.Level
		if float64(*an.Level) >= *q.Pass {
			res.Result = VerdictPass
		} else {
			res.Result = VerdictFail
		}
	default:
		return res, fmt.Errorf("%q is not a question kind", q.Kind)
	}
	c := *an.Confidence
	res.Confidence = &c
	least := l.Confidence
	if q.Confidence != nil {
		least = *q.Confidence
	}
	if c < least {
		res.Result = VerdictUnsure
	}
	return res, nil
}

// yesNoThresholds returns a yes/no question's pass and fail thresholds, the
// question's own or else the limits'. fail is nil when neither sets one.
func yesNoThresholds(q *Question, l CheckLimits) (pass float64, fail *float64) {
	pass = l.Pass
	if q.Pass != nil {
		pass = *q.Pass
	}
	fail = l.Fail
	if q.Fail != nil {
		fail = q.Fail
	}
	return pass, fail
}

// CheckIssues returns the issues lines of a verdict on step s's check, one
// for each failed question in order, or nil when none failed
// (profile-check §3, SPEC-DECISIONS §29):
//
//	check: <ask> → no (0.12)            yes/no, "yes" when p is at or above pass
//	check: <ask> → hedges (0.90)        choice: the name and its confidence
//	check: <ask> → level 1: <text> (0.85)   rubric: the level, its text, the confidence
//
// Numbers have two decimals. The verdict may have come back from JSON.
func CheckIssues(s *Step, v *CheckVerdict, limits CheckLimits) []string {
	if v == nil {
		return nil
	}
	l := limits.WithDefaults()
	var lines []string
	for i, r := range v.Questions {
		if r.Result != VerdictFail {
			continue
		}
		var q *Question
		if s != nil && s.Check != nil && i < len(s.Check.Questions) {
			q = s.Check.Questions[i]
		}
		lines = append(lines, "check: "+r.Ask+" → "+answerText(q, r, l))
	}
	return lines
}

// answerText prints a question's answer as an issues line shows it.
func answerText(q *Question, r CheckQuestionResult, l CheckLimits) string {
	conf := ""
	if r.Confidence != nil {
		conf = " (" + twoDecimals(*r.Confidence) + ")"
	}
	switch r.Kind {
	case QuestionYesNo:
		p, _ := number(r.Answer)
		pass := l.Pass
		if q != nil {
			pass, _ = yesNoThresholds(q, l)
		}
		word := "yes"
		if p < pass {
			word = "no"
		}
		return word + " (" + twoDecimals(p) + ")"
	case QuestionRubric:
		n, _ := number(r.Answer)
		level := int(n)
		text := ""
		if q != nil && level >= 0 && level < len(q.Levels) {
			text = ": " + q.Levels[level]
		}
		return "level " + strconv.Itoa(level) + text + conf
	default:
		return fmt.Sprint(r.Answer) + conf
	}
}

// number reads a numeric answer as judging or JSON decoding left it.
func number(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case int:
		return float64(x), true
	case json.Number:
		f, err := x.Float64()
		return f, err == nil
	}
	return 0, false
}

func twoDecimals(f float64) string { return strconv.FormatFloat(f, 'f', 2, 64) }

// NewCheckErrorVerdict returns the verdict recorded when the evaluator did
// not answer a check on step s: verdict error, each question with a null
// answer and result unsure. A step with advisory: true records it and
// completes (profile-check §3); a blocking step records nothing and the
// caller gets retry. model names the evaluator that was asked, if known.
func NewCheckErrorVerdict(s *Step, model string, now time.Time) *CheckVerdict {
	v := &CheckVerdict{Verdict: VerdictError, Model: model, Questions: []CheckQuestionResult{}, At: FormatTime(now)}
	if s != nil {
		v.Advisory = s.Advisory
		if s.Check != nil {
			for _, q := range s.Check.Questions {
				v.Questions = append(v.Questions, CheckQuestionResult{Ask: q.Ask, Kind: q.Kind, Result: VerdictUnsure})
			}
		}
	}
	return v
}
