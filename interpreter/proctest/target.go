package proctest

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/baton-run/baton/interpreter"
)

// Target is where a case's commands go: a run on the machine (Machine,
// what baton test uses), or, in Baton's own tests, a workflow on Temporal,
// so that a case can be shown to end the same on both.
type Target interface {
	// Start starts the run.
	Start(s interpreter.Start) (*interpreter.View, error)
	// Write applies one command and returns its result as JSON: the run
	// view for submit, escalate, decide and cancel, the claim's and
	// renewal's results, send_event's and call_tool's. A refusal is an
	// *interpreter.Error. s holds what the case scripts for the command's
	// check and call; a target that asks a real evaluator or tool server
	// may ignore it.
	Write(cmd interpreter.Command, s Scripted) (json.RawMessage, error)
	// View is the run's view now.
	View() (*interpreter.View, error)
	// Advance moves time on by d, applying what falls due on the way.
	Advance(d time.Duration) error
	// Now is the target's time.
	Now() time.Time
}

// Scripted is what a case says the world outside the run answers to one
// command.
type Scripted struct {
	// Check answers the step's check; nil: every question passes.
	Check *CheckScript
	// Call answers a tool call that is sent; nil: the call fails as
	// unscripted.
	Call *CallAnswer
}

// Epoch is when every case's run starts, in virtual time.
var Epoch = time.Date(2026, 10, 6, 9, 0, 0, 0, time.UTC)

// writeStep is how far virtual time moves with every write, so that
// writes happen one after another as on a server.
const writeStep = time.Second

// Machine is a Target on the run machine, in memory, with virtual time:
// every deadline fires at its own time as the workflow's timers do, and a
// checked submission or a sent call is answered from the script where the
// workflow would ask its evaluator or the tool server.
type Machine struct {
	m       *interpreter.Machine
	now     time.Time
	effects []interpreter.Effect
}

// NewMachine returns a Machine whose time starts at Epoch.
func NewMachine() *Machine { return &Machine{now: Epoch} }

// Now is the machine's time.
func (t *Machine) Now() time.Time { return t.now }

// Run is the machine of the run, once it started.
func (t *Machine) Run() *interpreter.Machine { return t.m }

// Start starts the run.
func (t *Machine) Start(s interpreter.Start) (*interpreter.View, error) {
	t.now = t.now.Add(writeStep)
	m, err := interpreter.StartRun(s, t.now)
	if err != nil {
		return nil, err
	}
	t.m = m
	t.take()
	return m.View(t.now), nil
}

// take keeps the effects the run asked for and drops its asynchronous
// needs: the children of its process steps are the script's, which ends
// them with child: entries.
func (t *Machine) take() {
	t.effects = append(t.effects, t.m.TakeEffects()...)
	t.m.TakeNeeds()
}

// View returns the run view now.
func (t *Machine) View() (*interpreter.View, error) {
	if t.m == nil {
		return nil, errors.New("no run started")
	}
	return t.m.View(t.now), nil
}

// Advance moves time on by d, firing each deadline at its own time.
func (t *Machine) Advance(d time.Duration) error {
	t.advanceTo(t.now.Add(d))
	return nil
}

func (t *Machine) advanceTo(until time.Time) {
	for t.m != nil {
		next, ok := t.m.NextDeadline()
		if !ok || next.After(until) {
			break
		}
		if next.After(t.now) {
			t.now = next
		}
		changed := t.m.Tick(t.now)
		t.take()
		if !changed {
			break
		}
	}
	if until.After(t.now) {
		t.now = until
	}
}

// NextDeadline is when time alone changes the run next.
func (t *Machine) NextDeadline() (time.Time, bool) {
	if t.m == nil {
		return time.Time{}, false
	}
	return t.m.NextDeadline()
}

// Write applies one command, answering its check or its call from s.
func (t *Machine) Write(cmd interpreter.Command, s Scripted) (json.RawMessage, error) {
	if t.m == nil {
		return nil, errors.New("no run started")
	}
	t.advanceTo(t.now.Add(writeStep))
	res, err := t.m.Apply(cmd, t.now)
	t.take()
	if err != nil {
		return nil, err
	}
	if need, ok := res.(interpreter.Need); ok {
		if res, err = t.answer(need, s); err != nil {
			return nil, err
		}
	}
	return json.Marshal(res)
}

// answer answers a need of the run from the script, where the workflow
// would ask its evaluator or the tool server, and applies the reply.
func (t *Machine) answer(need interpreter.Need, s Scripted) (any, error) {
	var reply interpreter.Reply
	var err error
	switch n := need.(type) {
	case *interpreter.CheckNeeded:
		reply, err = t.checkReply(n, s.Check)
	case *interpreter.CallNeeded:
		reply, err = callReply(n, s.Call)
	default:
		err = fmt.Errorf("a case cannot answer a %T", need)
	}
	if err != nil {
		return nil, err
	}
	res, err := t.m.Answer(need, reply, t.now)
	t.take()
	return res, err
}

// checkReply is the scripted evaluator's answer to a check.
func (t *Machine) checkReply(need *interpreter.CheckNeeded, cs *CheckScript) (interpreter.CheckReply, error) {
	reply := interpreter.CheckReply{Model: ScriptModel}
	if cs != nil && cs.Err {
		reply.Failure = "the evaluator answered with an error (ERR in the script)"
		return reply, nil
	}
	a, err := Answers(t.m.Process().Step(need.StepID), need.Request, cs)
	if err == nil {
		err = interpreter.ValidateCheckAnswers(need.Request, a)
	}
	reply.Answers = a
	return reply, err
}

// ScriptModel is the model every scripted check verdict names.
const ScriptModel = "script"

// Answers are the scripted answers to a check's questions: those the
// script gives, and a passing one for each it leaves out.
func Answers(s *interpreter.Step, r *interpreter.CheckRequest, cs *CheckScript) (*interpreter.CheckAnswers, error) {
	if s == nil || s.Check == nil || len(s.Check.Questions) != len(r.Questions) {
		return nil, fmt.Errorf("step %s has no check of %d questions", r.Step, len(r.Questions))
	}
	one := 1.0
	a := &interpreter.CheckAnswers{Model: ScriptModel}
	used := 0
	for i, q := range s.Check.Questions {
		id := r.Questions[i].ID
		an := interpreter.CheckAnswer{ID: id}
		if cs != nil {
			if sc, ok := cs.Answers[id]; ok {
				used++
				an.Abstain, an.Probability, an.Name, an.Level, an.Confidence = sc.Abstain, sc.Probability, sc.Name, sc.Level, sc.Confidence
				if !an.Abstain && an.Confidence == nil && q.Kind != interpreter.QuestionYesNo {
					an.Confidence = &one
				}
				if q.Kind == interpreter.QuestionChoice && an.Name == "" && an.Level != nil {
					return nil, fmt.Errorf("check %s is a choice question: answer with one of its names", id)
				}
				a.Answers = append(a.Answers, an)
				continue
			}
		}
		switch q.Kind {
		case interpreter.QuestionYesNo:
			an.Probability = &one
		case interpreter.QuestionChoice:
			if len(q.PassNames) > 0 {
				an.Name = q.PassNames[0]
			}
			an.Confidence = &one
		case interpreter.QuestionRubric:
			best := len(q.Levels) - 1
			an.Level, an.Confidence = &best, &one
		}
		a.Answers = append(a.Answers, an)
	}
	if cs != nil && used != len(cs.Answers) {
		return nil, fmt.Errorf("check: the script answers a question step %s does not ask; its questions are q1 to q%d", s.ID, len(r.Questions))
	}
	return a, nil
}

// callReply is the script's answer to a call that is sent.
func callReply(need *interpreter.CallNeeded, ca *CallAnswer) (interpreter.CallReply, error) {
	switch {
	case ca == nil:
		return interpreter.CallReply{}, fmt.Errorf("the call of %s is sent, and the script gives no answer: add answer: to the call", need.Tool)
	case ca.Unreachable:
		return interpreter.CallReply{NotSent: true, Why: "unreachable (scripted)"}, nil
	case ca.Lost:
		return interpreter.CallReply{Why: "no answer (scripted)"}, nil
	}
	return interpreter.CallReply{Result: interpreter.TextResult(ca.Result, ca.IsError), IsError: ca.IsError}, nil
}
