// Package proctest runs process tests: the cases of a PROCESS.test.yaml,
// each a script of what agents, people, operators, events, checks, tool
// servers and time do to one run of a process, with expectations on the
// way. Cases run on the run machine (package interpreter) with virtual
// time, the same code the workflow runs; nothing here talks to Temporal,
// PostgreSQL or the network. After the cases it reports the routes of the
// process no case took, and Explore walks random scripts looking for
// finishes no one reaches, runs that cannot end and refusals an actor
// cannot avoid. docs/process-tests.md describes the file format.
package proctest

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/baton-run/baton/interpreter"
)

// Suffix ends the name of every test file.
const Suffix = ".test.yaml"

// Pos is a place in a test file, 1-based.
type Pos struct {
	Line   int `json:"line"`
	Column int `json:"column"`
}

func (p Pos) String() string { return fmt.Sprintf("%d:%d", p.Line, p.Column) }

func at(n *yaml.Node) Pos { return Pos{n.Line, n.Column} }

// FileError is a test file that cannot be read or is not a valid test
// file: the case runner never starts on it.
type FileError struct {
	Path string
	Pos  Pos
	Msg  string
}

func (e *FileError) Error() string {
	if e.Pos.Line == 0 {
		return e.Path + ": " + e.Msg
	}
	return fmt.Sprintf("%s:%s: %s", e.Path, e.Pos, e.Msg)
}

// File is one test file, read.
type File struct {
	// Path is the test file's path as given.
	Path string
	// ProcessPath is the PROCESS.md it tests: its process: key, relative
	// to the test file, or the PROCESS.md beside it.
	ProcessPath string
	// ToolsPath is its tools: key, the tool registration (baton-tools-1)
	// relative to the test file; empty when it has none.
	ToolsPath string
	// Roles binds role names to groups, as publication does. A role
	// without a binding is the group of its own name.
	Roles map[string]string
	Cases []*Case
}

// Case is one named script.
type Case struct {
	Name   string
	Pos    Pos
	Inputs map[string]any
	// Mode is live (default) or test.
	Mode    string
	Starter interpreter.Actor
	Actions []*Action
}

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

// Expect is what must hold after an action, or at a point of the script.
type Expect struct {
	Pos Pos
	// Outcome is the finish the run ended at.
	Outcome *string
	// State is the run's state: active, waiting, ended, cancelled.
	State string
	// Steps maps step ids to states (null for unreached).
	Steps []KeyValue
	// Data maps run-data paths (inputs.amount, steps.review.output.x) to
	// values.
	Data []KeyValue
	// Work lists the open work items: step and assignee (group or person).
	Work    []WorkExpect
	HasWork bool
	// Ready lists the agent steps ready to claim.
	Ready    []string
	HasReady bool
	// Overdue lists the steps past their due time.
	Overdue    []string
	HasOverdue bool
	// Refused expects the action refused, with this code and these issues.
	Refused *Refusal
	// Handoff is what the claim (or the step's work item) hands over.
	Handoff *HandoffExpect
	// Status is a call's status.
	Status string
}

// KeyValue is one entry of a mapping expectation, with its place.
type KeyValue struct {
	Pos   Pos
	Key   string
	Value any
}

// WorkExpect is one open work item.
type WorkExpect struct {
	Step string `json:"step"`
	To   string `json:"to"`
	Kind string `json:"kind,omitempty"`
}

// Refusal is an expected refusal.
type Refusal struct {
	Code   string
	Issues []string
}

// HandoffExpect is what a handoff must carry; empty fields are not checked.
type HandoffExpect struct {
	Progress string
	Returned string
	Issues   []string
	Check    bool
}

// Find returns the test files under paths: a file as is, a folder walked
// for files whose names end in Suffix.
func Find(paths []string) ([]string, error) {
	var out []string
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			return nil, err
		}
		if !st.IsDir() {
			out = append(out, p)
			continue
		}
		err = filepath.WalkDir(p, func(path string, d os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if !d.IsDir() && strings.HasSuffix(d.Name(), Suffix) {
				out = append(out, path)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// ReadFile reads and checks a test file.
func ReadFile(path string) (*File, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, &FileError{Path: path, Msg: err.Error()}
	}
	return ParseFile(path, src)
}

// ParseFile reads a test file's text; path names it in errors and
// resolves its process: and tools: keys.
func ParseFile(path string, src []byte) (*File, error) {
	p := &parser{path: path}
	var doc yaml.Node
	if err := yaml.Unmarshal(src, &doc); err != nil {
		return nil, &FileError{Path: path, Pos: yamlErrPos(err), Msg: err.Error()}
	}
	if len(doc.Content) == 0 {
		return nil, &FileError{Path: path, Msg: "the file is empty"}
	}
	f, err := p.file(doc.Content[0])
	if err != nil {
		return nil, err
	}
	return f, nil
}

// yamlErrPos takes "yaml: line N: ..." apart.
func yamlErrPos(err error) Pos {
	s := err.Error()
	if i := strings.Index(s, "line "); i >= 0 {
		rest := s[i+5:]
		if j := strings.IndexByte(rest, ':'); j > 0 {
			if n, e := strconv.Atoi(rest[:j]); e == nil {
				return Pos{Line: n, Column: 1}
			}
		}
	}
	return Pos{}
}

type parser struct{ path string }

func (p *parser) fail(n *yaml.Node, format string, args ...any) error {
	return &FileError{Path: p.path, Pos: at(n), Msg: fmt.Sprintf(format, args...)}
}

// fields walks a mapping, refusing keys outside allowed.
func (p *parser) fields(n *yaml.Node, what string, allowed ...string) ([]*yaml.Node, error) {
	if n.Kind != yaml.MappingNode {
		return nil, p.fail(n, "%s must be a mapping", what)
	}
	seen := map[string]bool{}
	for i := 0; i < len(n.Content); i += 2 {
		k := n.Content[i]
		if !slices.Contains(allowed, k.Value) {
			return nil, p.fail(k, "%s: unknown key %q; the keys are %s", what, k.Value, strings.Join(allowed, ", "))
		}
		if seen[k.Value] {
			return nil, p.fail(k, "%s: key %q twice", what, k.Value)
		}
		seen[k.Value] = true
	}
	return n.Content, nil
}

func (p *parser) str(n *yaml.Node, what string) (string, error) {
	if n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		return "", p.fail(n, "%s must be a string", what)
	}
	return n.Value, nil
}

func (p *parser) strs(n *yaml.Node, what string) ([]string, error) {
	if n.Kind == yaml.ScalarNode {
		s, err := p.str(n, what)
		return []string{s}, err
	}
	if n.Kind != yaml.SequenceNode {
		return nil, p.fail(n, "%s must be a list of strings", what)
	}
	out := []string{}
	for _, e := range n.Content {
		s, err := p.str(e, what)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

func (p *parser) value(n *yaml.Node, what string) (any, error) {
	var v any
	if err := n.Decode(&v); err != nil {
		return nil, p.fail(n, "%s: %v", what, err)
	}
	return jsonable(v), nil
}

func (p *parser) object(n *yaml.Node, what string) (map[string]any, error) {
	if n.Kind != yaml.MappingNode {
		return nil, p.fail(n, "%s must be a mapping", what)
	}
	v, err := p.value(n, what)
	if err != nil {
		return nil, err
	}
	return v.(map[string]any), nil
}

// jsonable turns YAML's values into JSON's: maps with string keys.
func jsonable(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = jsonable(e)
		}
		return x
	case map[any]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[fmt.Sprint(k)] = jsonable(e)
		}
		return out
	case []any:
		for i, e := range x {
			x[i] = jsonable(e)
		}
		return x
	case time.Time:
		return x.Format(time.RFC3339)
	}
	return v
}

func (p *parser) file(n *yaml.Node) (*File, error) {
	kv, err := p.fields(n, "the test file", "process", "tools", "roles", "cases")
	if err != nil {
		return nil, err
	}
	dir := filepath.Dir(p.path)
	f := &File{Path: p.path, ProcessPath: filepath.Join(dir, "PROCESS.md")}
	var cases *yaml.Node
	for i := 0; i < len(kv); i += 2 {
		k, v := kv[i], kv[i+1]
		switch k.Value {
		case "process":
			s, err := p.str(v, "process")
			if err != nil {
				return nil, err
			}
			f.ProcessPath = resolve(dir, s)
		case "tools":
			s, err := p.str(v, "tools")
			if err != nil {
				return nil, err
			}
			f.ToolsPath = resolve(dir, s)
		case "roles":
			m, err := p.object(v, "roles")
			if err != nil {
				return nil, err
			}
			f.Roles = map[string]string{}
			for r, g := range m {
				s, ok := g.(string)
				if !ok {
					return nil, p.fail(v, "roles: %s must name a group", r)
				}
				f.Roles[r] = s
			}
		case "cases":
			cases = v
		}
	}
	if cases == nil || cases.Kind != yaml.SequenceNode || len(cases.Content) == 0 {
		return nil, p.fail(n, "the test file needs cases: a list of one case or more")
	}
	names := map[string]bool{}
	for _, cn := range cases.Content {
		c, err := p.testCase(cn)
		if err != nil {
			return nil, err
		}
		if names[c.Name] {
			return nil, p.fail(cn, "two cases are named %q", c.Name)
		}
		names[c.Name] = true
		f.Cases = append(f.Cases, c)
	}
	return f, nil
}

func (p *parser) testCase(n *yaml.Node) (*Case, error) {
	kv, err := p.fields(n, "a case", "name", "inputs", "mode", "starter", "script")
	if err != nil {
		return nil, err
	}
	c := &Case{Pos: at(n), Mode: interpreter.ModeLive, Starter: Starter}
	var script *yaml.Node
	for i := 0; i < len(kv); i += 2 {
		k, v := kv[i], kv[i+1]
		switch k.Value {
		case "name":
			if c.Name, err = p.str(v, "name"); err != nil {
				return nil, err
			}
		case "inputs":
			if c.Inputs, err = p.object(v, "inputs"); err != nil {
				return nil, err
			}
		case "mode":
			if c.Mode, err = p.str(v, "mode"); err != nil {
				return nil, err
			}
			if c.Mode != interpreter.ModeLive && c.Mode != interpreter.ModeTest {
				return nil, p.fail(v, "mode is live or test, not %q", c.Mode)
			}
		case "starter":
			s, err := p.str(v, "starter")
			if err != nil {
				return nil, err
			}
			c.Starter = interpreter.Actor{ID: s, Kind: interpreter.ActorPerson}
			if !interpreter.IsPerson(s) {
				c.Starter.Kind = interpreter.ActorAgent
			}
		case "script":
			script = v
		}
	}
	if c.Name == "" {
		return nil, p.fail(n, "a case needs a name")
	}
	if script == nil || script.Kind != yaml.SequenceNode {
		return nil, p.fail(n, "case %q needs script: a list of actions", c.Name)
	}
	for _, an := range script.Content {
		a, err := p.action(an)
		if err != nil {
			return nil, err
		}
		c.Actions = append(c.Actions, a)
	}
	return c, nil
}

// The keys of one script entry, by what they are.
var (
	actorKeys  = []string{"agent", "person", "role", "operator"}
	actionKeys = []string{"claim", "submit", "renew", "escalate", "expire", "call", "decide", "cancel", "event", "after"}
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
		ActEvent: {"", "agent", "person", "role", "operator"}, ActAfter: {""}, ActExpect: {""},
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
		if a.After, err = ParseDuration(s); err != nil {
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

// resolve is a path the test file names, relative to its folder.
func resolve(dir, path string) string {
	if filepath.IsAbs(path) {
		return path
	}
	return filepath.Join(dir, path)
}

// roleMember is the identity a role: entry acts as.
func roleMember(role string) string { return "member-of-" + role + "@example.com" }

// ParseDuration reads a duration: a whole number and s, m, h or d.
func ParseDuration(s string) (time.Duration, error) {
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

func (p *parser) expect(n *yaml.Node) (*Expect, error) {
	kv, err := p.fields(n, "expect", "outcome", "state", "steps", "data", "work", "ready", "overdue", "refused", "handoff", "status")
	if err != nil {
		return nil, err
	}
	e := &Expect{Pos: at(n)}
	for i := 0; i < len(kv); i += 2 {
		k, v := kv[i], kv[i+1]
		switch k.Value {
		case "outcome":
			s, err := p.str(v, "outcome")
			if err != nil {
				return nil, err
			}
			e.Outcome = &s
		case "state":
			if e.State, err = p.str(v, "state"); err != nil {
				return nil, err
			}
		case "status":
			if e.Status, err = p.str(v, "status"); err != nil {
				return nil, err
			}
		case "steps", "data":
			if v.Kind != yaml.MappingNode {
				return nil, p.fail(v, "%s must be a mapping", k.Value)
			}
			for j := 0; j < len(v.Content); j += 2 {
				kk, vv := v.Content[j], v.Content[j+1]
				val, err := p.value(vv, k.Value+" "+kk.Value)
				if err != nil {
					return nil, err
				}
				entry := KeyValue{Pos: at(kk), Key: kk.Value, Value: val}
				if k.Value == "steps" {
					if val != nil {
						if _, ok := val.(string); !ok {
							return nil, p.fail(vv, "steps: the state of %s is a word such as ready or done, or null", kk.Value)
						}
					}
					e.Steps = append(e.Steps, entry)
				} else {
					e.Data = append(e.Data, entry)
				}
			}
		case "ready", "overdue":
			var l []string
			if v.Tag == "!!null" {
				l = []string{}
			} else if l, err = p.strs(v, k.Value); err != nil {
				return nil, err
			}
			if k.Value == "ready" {
				e.Ready, e.HasReady = l, true
			} else {
				e.Overdue, e.HasOverdue = l, true
			}
		case "work":
			e.HasWork = true
			e.Work = []WorkExpect{}
			if v.Tag == "!!null" {
				continue
			}
			if v.Kind != yaml.SequenceNode {
				return nil, p.fail(v, "work must be a list of {step, to}")
			}
			for _, wn := range v.Content {
				var w WorkExpect
				if _, err := p.fields(wn, "a work item", "step", "to", "kind"); err != nil {
					return nil, err
				}
				if err := wn.Decode(&w); err != nil || w.Step == "" {
					return nil, p.fail(wn, "a work item is {step, to[, kind]}")
				}
				e.Work = append(e.Work, w)
			}
		case "refused":
			e.Refused = &Refusal{}
			if v.Kind == yaml.ScalarNode {
				e.Refused.Code = v.Value
				continue
			}
			rk, err := p.fields(v, "refused", "code", "issues")
			if err != nil {
				return nil, err
			}
			for j := 0; j < len(rk); j += 2 {
				if rk[j].Value == "code" {
					if e.Refused.Code, err = p.str(rk[j+1], "code"); err != nil {
						return nil, err
					}
				} else if e.Refused.Issues, err = p.strs(rk[j+1], "issues"); err != nil {
					return nil, err
				}
			}
		case "handoff":
			hk, err := p.fields(v, "handoff", "progress", "returned", "issues", "check")
			if err != nil {
				return nil, err
			}
			e.Handoff = &HandoffExpect{}
			for j := 0; j < len(hk); j += 2 {
				hv := hk[j+1]
				switch hk[j].Value {
				case "progress":
					e.Handoff.Progress, err = p.str(hv, "progress")
				case "returned":
					e.Handoff.Returned, err = p.str(hv, "returned")
				case "issues":
					e.Handoff.Issues, err = p.strs(hv, "issues")
				case "check":
					e.Handoff.Check = hv.Value == "true"
				}
				if err != nil {
					return nil, err
				}
			}
		}
	}
	return e, nil
}
