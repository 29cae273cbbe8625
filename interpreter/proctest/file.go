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
	// Processes are the children its process steps run
	// (baton-subprocess-1), by name: a PROCESS.md, or the folder of one,
	// relative to the test file.
	Processes map[string]string
	Cases     []*Case
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
	kv, err := p.fields(n, "the test file", "process", "tools", "roles", "processes", "cases")
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
		case "processes":
			m, err := p.object(v, "processes")
			if err != nil {
				return nil, err
			}
			f.Processes = map[string]string{}
			for name, path := range m {
				s, ok := path.(string)
				if !ok {
					return nil, p.fail(v, "processes: %s must name a PROCESS.md or its folder", name)
				}
				f.Processes[name] = resolve(dir, s)
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

// resolve is a path the test file names, relative to its folder.
func resolve(dir, path string) string {
	if filepath.IsAbs(path) {
		return path
	}
	return filepath.Join(dir, path)
}

// roleMember is the identity a role: entry acts as.
func roleMember(role string) string { return "member-of-" + role + "@example.com" }
