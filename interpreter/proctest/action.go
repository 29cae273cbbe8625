package proctest

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/baton-run/baton/interpreter"
)

// ActionKind names what a script entry does.
type ActionKind string

// The actions.
const (
	ActClaim    ActionKind = "claim"
	ActSubmit   ActionKind = "submit"
	ActRenew    ActionKind = "renew"
	ActEscalate ActionKind = "escalate"
	ActExpire   ActionKind = "expire"
	ActCall     ActionKind = "call"
	ActDecide   ActionKind = "decide"
	ActCancel   ActionKind = "cancel"
	ActEvent    ActionKind = "event"
	ActAfter    ActionKind = "after"
	ActExpect   ActionKind = "expect"
	// ActChild ends the running children of a process step
	// (baton-subprocess-1) as the script's answer says.
	ActChild ActionKind = "child"
)

// Action is one script entry.
type Action struct {
	Pos   Pos
	Kind  ActionKind
	Actor interpreter.Actor
	// Step is the step acted on (claim, submit, renew, escalate, expire,
	// call, decide).
	Step string

	Output      map[string]any
	HasOutput   bool
	Evidence    []interpreter.Evidence
	HasEvidence bool
	Next        *string
	Reason      *string
	Summary     *string
	Note        *string
	Progress    string
	Decision    string
	// Check scripts the evaluator's answers to the step's check.
	Check *CheckScript

	Event string
	Data  map[string]any
	After time.Duration
	// AfterText is After as written.
	AfterText string

	Tool      string
	Arguments json.RawMessage
	Answer    *CallAnswer

	// Children answers a process step's children, in item order; All
	// gives every child its one answer.
	Children []ChildAnswer
	All      bool

	Expect *Expect
}

// What names the action for a report: "submit review".
func (a *Action) What() string {
	switch a.Kind {
	case ActEvent:
		return "event " + a.Event
	case ActAfter:
		return "after " + a.AfterText
	case ActCall:
		return "call " + a.Tool
	case ActCancel, ActExpect:
		return string(a.Kind)
	case ActChild:
		return "children of " + a.Step + " end"
	case ActDecide:
		return "decide " + a.Step + " " + a.Decision
	}
	return string(a.Kind) + " " + a.Step
}

// CheckScript is what the evaluator answers for one submission: an
// answer per question, or an evaluator error (ERR).
type CheckScript struct {
	Err     bool
	Answers map[string]CheckAnswer
}

// CheckAnswer is one question's scripted answer.
type CheckAnswer struct {
	Abstain     bool
	Probability *float64
	Name        string
	Level       *int
	Confidence  *float64
}

// ChildAnswer is how one child run of a process step ends: its outcome
// (a finish of the child, rejected, failed or cancelled) and its note.
type ChildAnswer struct {
	Outcome string
	Note    *string
}

// CallAnswer is what the tool server does with a call that is sent.
type CallAnswer struct {
	// Result is the text of the tool's answer; IsError its flag.
	Result  string
	IsError bool
	// Unreachable: the call surely did not reach the tool.
	Unreachable bool
	// Lost: the call was sent and no answer came.
	Lost bool
}

// The keys of one script entry, by what they are.
var (
	actorKeys  = []string{"agent", "person", "role", "operator"}
	actionKeys = []string{"claim", "submit", "renew", "escalate", "expire", "call", "decide", "cancel", "event", "after", "child"}
	extraKeys  = []string{"output", "evidence", "next", "reason", "summary", "note", "progress", "decision", "check", "data", "arguments", "answer", "groups", "step", "expect"}
)

func (p *parser) action(n *yaml.Node) (*Action, error) {
	all := slices.Concat(actorKeys, actionKeys, extraKeys)
	kv, err := p.fields(n, "a script entry", all...)
	if err != nil {
		return nil, err
	}
	a := &Action{Pos: at(n)}
	var actorKey, actorVal string
	var groups []string
	vals := map[string]*yaml.Node{}
	for i := 0; i < len(kv); i += 2 {
		k, v := kv[i], kv[i+1]
		vals[k.Value] = v
		switch {
		case slices.Contains(actorKeys, k.Value):
			if actorKey != "" {
				return nil, p.fail(k, "a script entry names one actor, not %s and %s", actorKey, k.Value)
			}
			actorKey = k.Value
			if actorVal, err = p.str(v, k.Value); err != nil {
				return nil, err
			}
		case slices.Contains(actionKeys, k.Value):
			if a.Kind != "" {
				return nil, p.fail(k, "a script entry does one thing, not %s and %s", a.Kind, k.Value)
			}
			a.Kind = ActionKind(k.Value)
		case k.Value == "groups":
			if groups, err = p.strs(v, "groups"); err != nil {
				return nil, err
			}
		}
	}
	if a.Kind == "" {
		if vals["expect"] == nil {
			return nil, p.fail(n, "a script entry needs an action (%s) or expect", strings.Join(actionKeys, ", "))
		}
		a.Kind = ActExpect
	}
	// Who may do what.
	need := map[ActionKind][]string{
		ActClaim: {"agent"}, ActSubmit: {"agent"}, ActRenew: {"agent"}, ActEscalate: {"agent"}, ActExpire: {"agent"}, ActCall: {"agent"},
		ActDecide: {"person", "role", "operator"}, ActCancel: {"operator", "person", "role"},
		ActEvent: {"", "agent", "person", "role", "operator"}, ActAfter: {""}, ActExpect: {""}, ActChild: {""},
	}[a.Kind]
	if !slices.Contains(need, actorKey) {
		if actorKey == "" {
			return nil, p.fail(n, "%s needs an actor: %s", a.Kind, strings.Join(need, " or "))
		}
		return nil, p.fail(n, "%s is not done by %s: %s", a.Kind, actorKey, strings.Join(need, " or "))
	}
	switch actorKey {
	case "agent":
		a.Actor = interpreter.Actor{ID: actorVal, Kind: interpreter.ActorAgent}
	case "person":
		a.Actor = interpreter.Actor{ID: strings.ToLower(actorVal), Kind: interpreter.ActorPerson, Groups: groups}
	case "role":
		// A member of the role's group; the group is bound when the case
		// runs, as roles are at publication.
		a.Actor = interpreter.Actor{ID: roleMember(actorVal), Kind: interpreter.ActorPerson, Groups: []string{actorVal}}
	case "operator":
		a.Actor = interpreter.Actor{ID: actorVal, Kind: interpreter.ActorOperator, Groups: append([]string{interpreter.DefaultOperators}, groups...)}
	default:
		a.Actor = interpreter.Actor{ID: "events", Kind: interpreter.ActorSystem}
	}
	allowed := map[ActionKind][]string{
		ActClaim:    {"expect"},
		ActSubmit:   {"output", "evidence", "next", "reason", "summary", "check", "expect"},
		ActRenew:    {"progress", "expect"},
		ActEscalate: {"note", "expect"},
		ActExpire:   {"progress", "expect"},
		ActCall:     {"arguments", "answer", "step", "expect"},
		ActDecide:   {"decision", "note", "output", "evidence", "next", "reason", "check", "expect"},
		ActCancel:   {"expect"},
		ActEvent:    {"data", "expect"},
		ActAfter:    {"expect"},
		ActExpect:   {"expect"},
		ActChild:    {"answer", "expect"},
	}[a.Kind]
	if actorKey == "person" || actorKey == "operator" {
		allowed = append(allowed, "groups")
	}
	for i := 0; i < len(kv); i += 2 {
		k := kv[i]
		if slices.Contains(extraKeys, k.Value) && !slices.Contains(allowed, k.Value) {
			return nil, p.fail(k, "%s takes no %s", a.Kind, k.Value)
		}
	}
	v := vals[string(a.Kind)]
	switch a.Kind {
	case ActClaim, ActSubmit, ActRenew, ActEscalate, ActExpire, ActDecide:
		if a.Step, err = p.str(v, string(a.Kind)); err != nil {
			return nil, err
		}
	case ActChild:
		if a.Step, err = p.str(v, "child"); err != nil {
			return nil, err
		}
		an := vals["answer"]
		if an == nil {
			return nil, p.fail(n, "child needs answer: {outcome, note}, or a list of them in item order")
		}
		if a.Children, a.All, err = p.childAnswers(an); err != nil {
			return nil, err
		}
	case ActCall:
		if a.Tool, err = p.str(v, "call"); err != nil {
			return nil, err
		}
		if sn := vals["step"]; sn != nil {
			if a.Step, err = p.str(sn, "step"); err != nil {
				return nil, err
			}
		}
		a.Arguments = json.RawMessage("{}")
		if an := vals["arguments"]; an != nil {
			m, err := p.object(an, "arguments")
			if err != nil {
				return nil, err
			}
			if a.Arguments, err = json.Marshal(m); err != nil {
				return nil, p.fail(an, "arguments: %v", err)
			}
		}
		if an := vals["answer"]; an != nil {
			if a.Answer, err = p.answer(an); err != nil {
				return nil, err
			}
		}
	case ActCancel:
		if v.Tag != "!!null" {
			s, err := p.str(v, "cancel")
			if err != nil {
				return nil, err
			}
			a.Note = &s
		}
	case ActEvent:
		if a.Event, err = p.str(v, "event"); err != nil {
			return nil, err
		}
		if dn := vals["data"]; dn != nil {
			if a.Data, err = p.object(dn, "data"); err != nil {
				return nil, err
			}
		}
	case ActAfter:
		s, err := p.str(v, "after")
		if err != nil {
			return nil, err
		}
		a.AfterText = s
		if a.After, err = parseTestDuration(s); err != nil {
			return nil, p.fail(v, "after: %v", err)
		}
	}
	if err := p.work(a, vals); err != nil {
		return nil, err
	}
	if en := vals["expect"]; en != nil {
		if a.Expect, err = p.expect(en); err != nil {
			return nil, err
		}
	}
	if a.Kind == ActDecide && a.Decision == "" {
		return nil, p.fail(n, "decide needs decision: approved, rejected, completed, returned or failed")
	}
	return a, nil
}

// parseTestDuration reads how far a process test moves its clock (after:)
// or reaches from it (now+90s): a Go duration such as 90s or 1h30m, or a
// whole number of days such as 2d. It is not the spec's duration grammar,
// which a PROCESS.md's own durations follow (interpreter.ParseDuration:
// m, h or d only).
func parseTestDuration(s string) (time.Duration, error) {
	if len(s) >= 2 && s[len(s)-1] == 'd' {
		n, err := strconv.Atoi(s[:len(s)-1])
		if err == nil && n >= 0 {
			return time.Duration(n) * 24 * time.Hour, nil
		}
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("%q is not a duration such as 30m, 4h or 2d", s)
	}
	return d, nil
}

// work reads a submission's or decision's keys.
func (p *parser) work(a *Action, vals map[string]*yaml.Node) error {
	var err error
	opt := func(key string) (*string, error) {
		n := vals[key]
		if n == nil {
			return nil, nil
		}
		s, err := p.str(n, key)
		return &s, err
	}
	if a.Next, err = opt("next"); err != nil {
		return err
	}
	if a.Reason, err = opt("reason"); err != nil {
		return err
	}
	if a.Summary, err = opt("summary"); err != nil {
		return err
	}
	if a.Kind != ActCancel {
		if a.Note, err = opt("note"); err != nil {
			return err
		}
	}
	if n := vals["progress"]; n != nil {
		if a.Progress, err = p.str(n, "progress"); err != nil {
			return err
		}
	}
	if n := vals["decision"]; n != nil {
		if a.Decision, err = p.str(n, "decision"); err != nil {
			return err
		}
		ok := []string{interpreter.DecisionApproved, interpreter.DecisionRejected, interpreter.DecisionCompleted, interpreter.DecisionReturned, interpreter.DecisionFailed}
		if !slices.Contains(ok, a.Decision) {
			return p.fail(n, "decision is one of %s, not %q", strings.Join(ok, ", "), a.Decision)
		}
	}
	if n := vals["output"]; n != nil {
		if a.Output, err = p.object(n, "output"); err != nil {
			return err
		}
		a.HasOutput = true
	}
	if n := vals["evidence"]; n != nil {
		if n.Kind != yaml.SequenceNode {
			return p.fail(n, "evidence must be a list: link, file, or {kind, ref}")
		}
		a.HasEvidence = true
		a.Evidence = []interpreter.Evidence{}
		for i, e := range n.Content {
			ev := interpreter.Evidence{}
			if e.Kind == yaml.ScalarNode {
				ev.Kind = e.Value
			} else {
				m, err := p.object(e, "evidence")
				if err != nil {
					return err
				}
				ev.Kind, _ = m["kind"].(string)
				ev.Ref, _ = m["ref"].(string)
			}
			if ev.Ref == "" {
				ev.Ref = standInRef(ev.Kind, i)
			}
			a.Evidence = append(a.Evidence, ev)
		}
	}
	if n := vals["check"]; n != nil {
		if a.Check, err = p.check(n); err != nil {
			return err
		}
	}
	return nil
}

// standInRef is the reference of an evidence stand-in.
func standInRef(kind string, i int) string {
	if kind == "file" {
		return fmt.Sprintf("f_standin_%d", i+1)
	}
	return fmt.Sprintf("https://example.com/evidence/%d", i+1)
}

func (p *parser) check(n *yaml.Node) (*CheckScript, error) {
	if n.Kind == yaml.ScalarNode && n.Value == "ERR" {
		return &CheckScript{Err: true}, nil
	}
	if n.Kind != yaml.MappingNode {
		return nil, p.fail(n, "check is ERR or a mapping of question ids (q1, q2, …) to answers")
	}
	cs := &CheckScript{Answers: map[string]CheckAnswer{}}
	for i := 0; i < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		var an CheckAnswer
		switch {
		case v.Kind == yaml.ScalarNode && v.Value == "abstain":
			an.Abstain = true
		case v.Kind == yaml.ScalarNode && (v.Value == "yes" || v.Value == "no"):
			pr := 0.0
			if v.Value == "yes" {
				pr = 1
			}
			an.Probability = &pr
		case v.Kind == yaml.ScalarNode && v.Tag == "!!float":
			f, _ := strconv.ParseFloat(v.Value, 64)
			an.Probability = &f
		case v.Kind == yaml.ScalarNode && v.Tag == "!!int":
			l, _ := strconv.Atoi(v.Value)
			an.Level = &l
		case v.Kind == yaml.ScalarNode:
			an.Name = v.Value
		case v.Kind == yaml.MappingNode:
			var m struct {
				Probability *float64 `yaml:"probability"`
				Name        string   `yaml:"name"`
				Level       *int     `yaml:"level"`
				Confidence  *float64 `yaml:"confidence"`
			}
			if err := v.Decode(&m); err != nil {
				return nil, p.fail(v, "check %s: %v", k.Value, err)
			}
			an = CheckAnswer{Probability: m.Probability, Name: m.Name, Level: m.Level, Confidence: m.Confidence}
		default:
			return nil, p.fail(v, "check %s: an answer is yes, no, a probability (0.8), a name, a level (2), abstain or {probability|name|level, confidence}", k.Value)
		}
		cs.Answers[k.Value] = an
	}
	return cs, nil
}

func (p *parser) answer(n *yaml.Node) (*CallAnswer, error) {
	if n.Kind == yaml.ScalarNode {
		switch n.Value {
		case "unreachable":
			return &CallAnswer{Unreachable: true}, nil
		case "lost":
			return &CallAnswer{Lost: true}, nil
		}
		return &CallAnswer{Result: n.Value}, nil
	}
	kv, err := p.fields(n, "answer", "result", "error")
	if err != nil {
		return nil, err
	}
	ca := &CallAnswer{}
	for i := 0; i < len(kv); i += 2 {
		k, v := kv[i], kv[i+1]
		if v.Kind != yaml.ScalarNode {
			// A structured result is sent as its JSON text.
			val, err := p.value(v, "answer "+k.Value)
			if err != nil {
				return nil, err
			}
			b, _ := json.Marshal(val)
			ca.Result = string(b)
		} else {
			ca.Result = v.Value
		}
		ca.IsError = k.Value == "error"
	}
	return ca, nil
}

// childAnswers reads a child: entry's answer: one {outcome, note} for
// every child, or a list of them, one per child in item order.
func (p *parser) childAnswers(n *yaml.Node) ([]ChildAnswer, bool, error) {
	one := func(n *yaml.Node) (ChildAnswer, error) {
		kv, err := p.fields(n, "a child's answer", "outcome", "note")
		if err != nil {
			return ChildAnswer{}, err
		}
		var a ChildAnswer
		for i := 0; i < len(kv); i += 2 {
			s, err := p.str(kv[i+1], kv[i].Value)
			if err != nil {
				return ChildAnswer{}, err
			}
			if kv[i].Value == "outcome" {
				a.Outcome = s
			} else {
				a.Note = &s
			}
		}
		if a.Outcome == "" {
			return ChildAnswer{}, p.fail(n, "a child's answer needs outcome: a finish of the child, rejected, failed or cancelled")
		}
		return a, nil
	}
	if n.Kind != yaml.SequenceNode {
		a, err := one(n)
		return []ChildAnswer{a}, true, err
	}
	if len(n.Content) == 0 {
		return nil, false, p.fail(n, "answer: the list answers no child")
	}
	out := make([]ChildAnswer, len(n.Content))
	for i, e := range n.Content {
		var err error
		if out[i], err = one(e); err != nil {
			return nil, false, err
		}
	}
	return out, false, nil
}
