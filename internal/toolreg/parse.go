package toolreg

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/baton-run/baton/interpreter"
)

// Parsing rulings, where the profile leaves the detail open:
//
//   - The file is read as a process's frontmatter is (interpreter.ParseYAML):
//     the YAML 1.2 core schema, anchors, aliases, unknown tags and duplicate
//     keys refused the same way.
//   - Every value is a string, a list or a mapping; a scalar that YAML 1.2
//     does not read as a string (30, true, null, !!int "30") is refused
//     where a string is expected. Quoting makes it a string.
//   - Issues come ordered by line and column; YAML syntax errors carry a
//     line only.

// FileError refuses a registration file. It carries every issue found,
// ordered by position.
type FileError struct {
	// File names the file in messages; "" when parsed from bytes alone.
	File   string
	Issues []interpreter.Issue
}

// Error returns the issues, one per line, each prefixed with the file.
func (e *FileError) Error() string {
	prefix := ""
	if e.File != "" {
		prefix = e.File + ":"
	}
	var b strings.Builder
	if len(e.Issues) == 1 {
		b.WriteString("tool registration refused: ")
	} else {
		fmt.Fprintf(&b, "tool registration refused, %d issues:", len(e.Issues))
	}
	for i, is := range e.Issues {
		if len(e.Issues) > 1 || i > 0 {
			b.WriteString("\n")
		}
		b.WriteString(prefix)
		b.WriteString(is.String())
	}
	return b.String()
}

// ParseOptions adjusts Parse.
type ParseOptions struct {
	// Name names the file in messages. Default "": none.
	Name string
	// Dir is the folder a relative credentials file is resolved against.
	// Default "": the working directory at parse time.
	Dir string
}

// ReadFile reads and parses a registration file. A relative credentials
// file is resolved against the file's folder.
func ReadFile(path string) (*File, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(abs)
	if err != nil {
		return nil, fmt.Errorf("tool registration: %w", err)
	}
	defer f.Close()
	src, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("tool registration %s: %w", path, err)
	}
	if len(src) > MaxFileBytes {
		return nil, fmt.Errorf("tool registration %s: over %d bytes", path, MaxFileBytes)
	}
	return Parse(src, &ParseOptions{Name: path, Dir: filepath.Dir(abs)})
}

// Parse validates a registration file (docs/profile-tools.md §1) and
// returns it, or a *FileError with every issue at once.
func Parse(src []byte, opts *ParseOptions) (*File, error) {
	if opts == nil {
		opts = &ParseOptions{}
	}
	dir := opts.Dir
	if dir == "" {
		var err error
		if dir, err = os.Getwd(); err != nil {
			return nil, err
		}
	}
	p := &parser{dir: dir}
	doc, issues, yerr := interpreter.ParseYAML(src, "file")
	switch {
	case yerr != nil:
		msg, line := yerr.Message, yerr.Line
		if yerr.Syntax {
			msg = "YAML: " + msg
		}
		if line == 0 {
			line = 1
		}
		p.issues = append(p.issues, interpreter.Issue{Line: line, Message: msg})
	case doc == nil:
		p.issues = append(p.issues, interpreter.Issue{Line: 1, Column: 1, Message: "servers: required; the file is empty"})
	default:
		p.issues = append(p.issues, issues...)
	}
	var f *File
	if doc != nil {
		p.doc = doc
		f = p.file(doc.Root)
	}
	if len(p.issues) > 0 {
		sort.SliceStable(p.issues, func(i, j int) bool {
			a, b := p.issues[i], p.issues[j]
			if a.Line != b.Line {
				return a.Line < b.Line
			}
			return a.Column < b.Column
		})
		return nil, &FileError{File: opts.Name, Issues: p.issues}
	}
	return f, nil
}

// parser walks the node tree, collecting issues.
type parser struct {
	dir    string
	doc    *interpreter.YAMLDocument
	issues []interpreter.Issue
}

func (p *parser) at(n *yaml.Node, format string, args ...any) {
	p.issues = append(p.issues, interpreter.Issue{Line: n.Line, Column: n.Column, Message: fmt.Sprintf(format, args...)})
}

func orTop(path string) string {
	if path == "" {
		return "file"
	}
	return path
}

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// kindName names the JSON type n resolves to, as the frontmatter's
// messages do.
func (p *parser) kindName(n *yaml.Node) string {
	if k := p.doc.Kind(n); k != "" {
		return k
	}
	return "value"
}

// member is one key of a mapping with its key node.
type member struct {
	key *yaml.Node
	val *yaml.Node
}

// mapping returns n's members by key, refusing anything but a mapping and
// unknown keys.
func (p *parser) mapping(n *yaml.Node, path string, allowed ...string) (map[string]member, bool) {
	if n.Kind != yaml.MappingNode {
		p.at(n, "%s: expected a mapping, found a %s", orTop(path), p.kindName(n))
		return nil, false
	}
	out := map[string]member{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if allowed != nil && !contains(allowed, k.Value) {
			p.at(k, "%s: unknown field", joinPath(path, k.Value))
			continue
		}
		if _, dup := out[k.Value]; !dup {
			out[k.Value] = member{key: k, val: v}
		}
	}
	return out, true
}

func contains(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}

// str reads a value that resolves to a string. A node refused by
// ParseYAML (an anchor, an alias, a tag) was reported already.
func (p *parser) str(n *yaml.Node, path string) (string, bool) {
	if p.doc.Kind(n) == "" {
		return "", false
	}
	s, ok := p.doc.String(n)
	if !ok {
		p.at(n, "%s: expected a string, found a %s", path, p.kindName(n))
	}
	return s, ok
}

// text reads a string scalar that is not blank.
func (p *parser) text(n *yaml.Node, path string) (string, bool) {
	s, ok := p.str(n, path)
	if ok && strings.TrimSpace(s) == "" {
		p.at(n, "%s: must not be blank", path)
		return "", false
	}
	return s, ok
}

var (
	serverNameRE = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)
	toolNameRE   = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,128}$`)
	envNameRE    = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	tokenRE      = regexp.MustCompile("^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")
	timeoutRE    = regexp.MustCompile(`^[1-9][0-9]*[smhd]$`)
)

// reservedHeaders are set by Baton or MCP; credentials may not use them.
var reservedHeaders = []string{"content-type", "accept", "host", "content-length", "idempotency-key", "mcp-session-id", "mcp-protocol-version"}

// file reads the whole registration.
func (p *parser) file(root *yaml.Node) *File {
	top, ok := p.mapping(root, "", "servers")
	if !ok {
		return nil
	}
	sm, found := top["servers"]
	if !found {
		p.at(root, "servers: required")
		return nil
	}
	if sm.val.Kind != yaml.SequenceNode {
		p.at(sm.val, "servers: expected a list of servers, found a %s", p.kindName(sm.val))
		return nil
	}
	if len(sm.val.Content) == 0 {
		p.at(sm.val, "servers: at least one server")
		return nil
	}
	f := &File{}
	first := map[string]string{}
	for i, n := range sm.val.Content {
		path := fmt.Sprintf("servers[%d]", i)
		s, nameNode := p.server(n, path)
		if s == nil {
			continue
		}
		if s.Name != "" {
			if other, dup := first[s.Name]; dup {
				p.at(nameNode, "%s.name: %q is already the name of %s", path, s.Name, other)
			}
			first[s.Name] = path
		}
		f.Servers = append(f.Servers, *s)
	}
	return f
}

// server reads one server; it returns its name node for later messages.
func (p *parser) server(n *yaml.Node, path string) (*Server, *yaml.Node) {
	m, ok := p.mapping(n, path, "name", "url", "test_url", "credentials", "timeout", "tools")
	if !ok {
		return nil, nil
	}
	s := &Server{Timeout: DefaultTimeout}
	var nameNode *yaml.Node
	if nm, found := m["name"]; !found {
		p.at(n, "%s.name: required", path)
	} else if name, ok := p.text(nm.val, path+".name"); ok {
		nameNode = nm.val
		if len(name) > 64 || !serverNameRE.MatchString(name) {
			p.at(nm.val, "%s.name: must match %s and be at most 64 characters", path, serverNameRE)
		} else {
			s.Name = name
		}
	}
	var urlNode, testNode *yaml.Node
	if um, found := m["url"]; !found {
		p.at(n, "%s.url: required", path)
	} else {
		urlNode = um.val
		s.URL = p.endpoint(um.val, path+".url")
	}
	if tm, found := m["test_url"]; found {
		testNode = tm.val
		s.TestURL = p.endpoint(tm.val, path+".test_url")
	}
	if cm, found := m["credentials"]; found {
		s.Credentials = p.credentials(cm.val, path+".credentials")
		if s.Credentials != nil {
			for _, e := range []struct {
				node *yaml.Node
				u    string
			}{{urlNode, s.URL}, {testNode, s.TestURL}} {
				if e.u != "" && !secureFor(e.u) {
					p.at(cm.key, "%s: credentials travel only over https, or plain http to a loopback host; %s is neither", path+".credentials", e.u)
				}
			}
		}
	}
	if tm, found := m["timeout"]; found {
		if t, ok := p.str(tm.val, path+".timeout"); ok {
			d, err := parseTimeout(t)
			if err != nil {
				p.at(tm.val, "%s.timeout: %v", path, err)
			} else {
				s.Timeout = d
			}
		}
	}
	if tm, found := m["tools"]; !found {
		p.at(n, "%s.tools: required", path)
	} else {
		s.Tools = p.tools(tm.val, path+".tools")
	}
	return s, nameNode
}

// endpoint reads an MCP endpoint URL.
func (p *parser) endpoint(n *yaml.Node, path string) string {
	raw, ok := p.text(n, path)
	if !ok {
		return ""
	}
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		p.at(n, "%s: not a URL: %v", path, err)
	case u.Scheme != "http" && u.Scheme != "https":
		p.at(n, "%s: must be an http or https URL", path)
	case u.Host == "" || u.Hostname() == "":
		p.at(n, "%s: must name a host", path)
	case u.User != nil:
		p.at(n, "%s: must not carry a user or password; name the secret in credentials instead", path)
	case u.Fragment != "" || strings.Contains(raw, "#"):
		p.at(n, "%s: must not have a fragment", path)
	default:
		return raw
	}
	return ""
}

// secureFor reports whether credentials may be sent to endpoint: https,
// or http to a loopback host.
func secureFor(endpoint string) bool {
	u, err := url.Parse(endpoint)
	if err != nil {
		return false
	}
	if u.Scheme == "https" {
		return true
	}
	host := u.Hostname()
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// credentials reads a credentials reference.
func (p *parser) credentials(n *yaml.Node, path string) *Credentials {
	m, ok := p.mapping(n, path, "env", "file", "header", "scheme")
	if !ok {
		return nil
	}
	c := &Credentials{Header: DefaultHeader, Scheme: DefaultScheme}
	good := true
	env, hasEnv := m["env"]
	file, hasFile := m["file"]
	switch {
	case hasEnv && hasFile:
		p.at(file.key, "%s: env or file, not both", path)
		good = false
	case !hasEnv && !hasFile:
		p.at(n, "%s: needs env (an environment variable) or file (a file holding the secret)", path)
		good = false
	case hasEnv:
		if v, ok := p.text(env.val, path+".env"); ok {
			if !envNameRE.MatchString(v) {
				p.at(env.val, "%s.env: %q is not an environment variable name", path, v)
				good = false
			}
			c.Env = v
		} else {
			good = false
		}
	default:
		if v, ok := p.text(file.val, path+".file"); ok {
			if !filepath.IsAbs(v) {
				v = filepath.Join(p.dir, v)
			}
			c.File = filepath.Clean(v)
		} else {
			good = false
		}
	}
	if h, found := m["header"]; found {
		if v, ok := p.text(h.val, path+".header"); ok {
			switch {
			case !tokenRE.MatchString(v):
				p.at(h.val, "%s.header: %q is not an HTTP header name", path, v)
				good = false
			case contains(reservedHeaders, strings.ToLower(v)):
				p.at(h.val, "%s.header: %s is set by Baton or MCP; name another header", path, v)
				good = false
			default:
				c.Header = v
			}
		} else {
			good = false
		}
	}
	if sc, found := m["scheme"]; found {
		if v, ok := p.str(sc.val, path+".scheme"); ok {
			if v != "" && !tokenRE.MatchString(v) {
				p.at(sc.val, "%s.scheme: %q is not a scheme word such as Bearer; \"\" sends the secret alone", path, v)
				good = false
			}
			c.Scheme = v
		} else {
			good = false
		}
	}
	if !good {
		return nil
	}
	return c
}

// parseTimeout reads a server timeout: a whole number and s, m, h or d,
// from MinTimeout to MaxTimeout.
func parseTimeout(s string) (time.Duration, error) {
	if !timeoutRE.MatchString(s) {
		return 0, errors.New("must be a whole number followed by s, m, h or d, such as 30s")
	}
	n, err := strconv.ParseInt(s[:len(s)-1], 10, 64)
	if err != nil || n > int64(MaxTimeout/time.Second) {
		return 0, fmt.Errorf("must be from %s to %s", MinTimeout, MaxTimeout)
	}
	unit := map[byte]time.Duration{'s': time.Second, 'm': time.Minute, 'h': time.Hour, 'd': 24 * time.Hour}[s[len(s)-1]]
	d := time.Duration(n) * unit
	if d < MinTimeout || d > MaxTimeout {
		return 0, fmt.Errorf("must be from %s to %s", MinTimeout, MaxTimeout)
	}
	return d, nil
}

// tools reads a server's tools: name to a policy word or a mapping.
func (p *parser) tools(n *yaml.Node, path string) []Tool {
	if n.Kind != yaml.MappingNode {
		p.at(n, "%s: expected a mapping of tool name to policy, found a %s", path, p.kindName(n))
		return nil
	}
	if len(n.Content) == 0 {
		p.at(n, "%s: at least one tool", path)
		return nil
	}
	var out []Tool
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		tp := joinPath(path, k.Value)
		name, ok := p.str(k, tp)
		if !ok {
			continue
		}
		if !toolNameRE.MatchString(name) {
			p.at(k, "%s: a tool name must match %s", tp, toolNameRE)
			continue
		}
		if t, ok := p.tool(v, tp); ok {
			t.Name = name
			out = append(out, t)
		}
	}
	return out
}

// tool reads one tool's policy.
func (p *parser) tool(n *yaml.Node, path string) (Tool, bool) {
	t := Tool{Idempotency: interpreter.IdempotencyNone}
	if n.Kind == yaml.ScalarNode {
		pol, ok := p.policy(n, path)
		if !ok {
			return t, false
		}
		t.Policy = pol
		if pol != interpreter.PolicyRead {
			p.at(n, "%s: %s tool needs idempotency: key or none; write { policy: %s, idempotency: key }", path, aPolicy(pol), pol)
			return t, false
		}
		return t, true
	}
	m, ok := p.mapping(n, path, "policy", "idempotency", "approvers", "approval_sla")
	if !ok {
		return t, false
	}
	good := true
	pm, found := m["policy"]
	if !found {
		p.at(n, "%s.policy: required", path)
		return t, false
	}
	if t.Policy, ok = p.policy(pm.val, path+".policy"); !ok {
		return t, false
	}
	if im, found := m["idempotency"]; found {
		if v, ok := p.str(im.val, path+".idempotency"); ok {
			t.Idempotency = interpreter.Idempotency(v)
			if !t.Idempotency.Valid() {
				p.at(im.val, "%s.idempotency: unknown idempotency %q (key or none)", path, v)
				good = false
			}
		} else {
			good = false
		}
	} else if t.Policy != interpreter.PolicyRead {
		p.at(n, "%s.idempotency: required on %s tool: key when the server deduplicates by the idempotency key, none when it does not", path, aPolicy(t.Policy))
		good = false
	}
	approval := t.Policy == interpreter.PolicyApprovalRequired
	if am, found := m["approvers"]; found {
		if !approval {
			p.at(am.key, "%s.approvers: only on an approval_required tool", path)
			good = false
		} else if groups, ok := p.groups(am.val, path+".approvers"); ok {
			t.Approvers = groups
		} else {
			good = false
		}
	}
	if sm, found := m["approval_sla"]; found {
		if !approval {
			p.at(sm.key, "%s.approval_sla: only on an approval_required tool", path)
			good = false
		} else if v, ok := p.str(sm.val, path+".approval_sla"); ok {
			d, err := interpreter.ParseDuration(v)
			if err != nil {
				p.at(sm.val, "%s.approval_sla: %v", path, err)
				good = false
			} else {
				t.ApprovalSLA = d.D
			}
		} else {
			good = false
		}
	}
	return t, good
}

// aPolicy names a policy with its article: "a write", "an approval_required".
func aPolicy(p interpreter.Policy) string {
	if p == interpreter.PolicyApprovalRequired {
		return "an " + string(p)
	}
	return "a " + string(p)
}

// policy reads a policy word.
func (p *parser) policy(n *yaml.Node, path string) (interpreter.Policy, bool) {
	v, ok := p.str(n, path)
	if !ok {
		return "", false
	}
	pol := interpreter.Policy(v)
	if !pol.Valid() {
		p.at(n, "%s: unknown policy %q (read, write or approval_required)", path, v)
		return "", false
	}
	return pol, true
}

// groups reads a list of group ids, each once.
func (p *parser) groups(n *yaml.Node, path string) ([]string, bool) {
	if n.Kind != yaml.SequenceNode {
		p.at(n, "%s: expected a list of group ids, found a %s", path, p.kindName(n))
		return nil, false
	}
	if len(n.Content) == 0 {
		p.at(n, "%s: at least one group", path)
		return nil, false
	}
	var out []string
	good := true
	for i, e := range n.Content {
		ep := fmt.Sprintf("%s[%d]", path, i)
		g, ok := p.text(e, ep)
		if !ok {
			good = false
			continue
		}
		if contains(out, g) {
			p.at(e, "%s: %q is listed twice", ep, g)
			good = false
			continue
		}
		out = append(out, g)
	}
	return out, good
}
