package notify

import (
	"fmt"
	"io"
	"net"
	"net/mail"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/baton-run/baton/interpreter"
)

// The file is read as the tool registration is (internal/toolreg): by the
// rules of a process's frontmatter (interpreter.ParseYAML), every issue at
// once with its line and column, unknown keys refused.

// FileError refuses a channels file. It carries every issue found, ordered
// by position.
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
		b.WriteString("notification channels refused: ")
	} else {
		fmt.Fprintf(&b, "notification channels refused, %d issues:", len(e.Issues))
	}
	for _, is := range e.Issues {
		if len(e.Issues) > 1 {
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
	// Dir is the folder relative file references are resolved against.
	// Default "": the working directory at parse time.
	Dir string
}

// ReadFile reads and parses a channels file; relative file references
// are resolved against its folder.
func ReadFile(path string) (*File, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(abs)
	if err != nil {
		return nil, fmt.Errorf("notification channels: %w", err)
	}
	defer f.Close()
	src, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("notification channels %s: %w", path, err)
	}
	if len(src) > MaxFileBytes {
		return nil, fmt.Errorf("notification channels %s: over %d bytes", path, MaxFileBytes)
	}
	return Parse(src, &ParseOptions{Name: path, Dir: filepath.Dir(abs)})
}

// Parse validates a channels file (docs/notifications.md) and returns it,
// or a *FileError with every issue at once.
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
		p.issues = append(p.issues, interpreter.Issue{Line: max(line, 1), Message: msg})
	case doc == nil:
		p.issues = append(p.issues, interpreter.Issue{Line: 1, Column: 1, Message: "channels: required; the file is empty"})
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

type parser struct {
	dir    string
	doc    *interpreter.YAMLDocument
	issues []interpreter.Issue
}

func (p *parser) at(n *yaml.Node, format string, args ...any) {
	p.issues = append(p.issues, interpreter.Issue{Line: n.Line, Column: n.Column, Message: fmt.Sprintf(format, args...)})
}

func (p *parser) kindName(n *yaml.Node) string {
	if k := p.doc.Kind(n); k != "" {
		return k
	}
	return "value"
}

type member struct{ key, val *yaml.Node }

// mapping returns n's members by key, refusing anything but a mapping and
// keys not in allowed.
func (p *parser) mapping(n *yaml.Node, path string, allowed ...string) (map[string]member, bool) {
	if n.Kind != yaml.MappingNode {
		top := path
		if top == "" {
			top = "file"
		}
		p.at(n, "%s: expected a mapping, found a %s", top, p.kindName(n))
		return nil, false
	}
	out := map[string]member{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if !contains(allowed, k.Value) {
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

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// str reads a value that resolves to a string. A node ParseYAML refused
// was reported already.
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

// text reads a string that is not blank.
func (p *parser) text(n *yaml.Node, path string) (string, bool) {
	s, ok := p.str(n, path)
	if ok && strings.TrimSpace(s) == "" {
		p.at(n, "%s: must not be blank", path)
		return "", false
	}
	return s, ok
}

var (
	nameRE  = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)
	envRE   = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	inputRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
)

var channelKeys = []string{"kind", "name", "events", "url", "secret", "format", "smtp", "from", "groups", "include_inputs"}

// file reads the whole file.
func (p *parser) file(root *yaml.Node) *File {
	top, ok := p.mapping(root, "", "channels")
	if !ok {
		return nil
	}
	cm, found := top["channels"]
	if !found {
		p.at(root, "channels: required")
		return nil
	}
	if cm.val.Kind != yaml.SequenceNode {
		p.at(cm.val, "channels: expected a list of channels, found a %s", p.kindName(cm.val))
		return nil
	}
	if len(cm.val.Content) == 0 {
		p.at(cm.val, "channels: at least one channel")
		return nil
	}
	f := &File{}
	first := map[string]string{}
	for i, n := range cm.val.Content {
		path := fmt.Sprintf("channels[%d]", i)
		c, idNode := p.channel(n, path, i+1)
		if c == nil {
			continue
		}
		if other, dup := first[c.ID]; dup {
			p.at(idNode, "%s.name: %q is already the name of %s", path, c.ID, other)
		}
		first[c.ID] = path
		f.Channels = append(f.Channels, *c)
	}
	return f
}

// channel reads one channel, the nth of the file; it returns the node
// that gave it its id, for later messages.
func (p *parser) channel(n *yaml.Node, path string, nth int) (*Channel, *yaml.Node) {
	m, ok := p.mapping(n, path, channelKeys...)
	if !ok {
		return nil, nil
	}
	c := &Channel{}
	km, found := m["kind"]
	if !found {
		p.at(n, "%s.kind: required (webhook or email)", path)
		return nil, nil
	}
	kind, ok := p.str(km.val, path+".kind")
	if !ok {
		return nil, nil
	}
	if kind != KindWebhook && kind != KindEmail {
		p.at(km.val, "%s.kind: unknown kind %q (webhook or email)", path, kind)
		return nil, nil
	}
	c.Kind = kind
	c.ID = fmt.Sprintf("%s-%d", kind, nth)
	idNode := n
	if nm, found := m["name"]; found {
		if name, ok := p.text(nm.val, path+".name"); ok {
			if len(name) > 64 || !nameRE.MatchString(name) {
				p.at(nm.val, "%s.name: must match %s and be at most 64 characters", path, nameRE)
			} else {
				c.ID, idNode = name, nm.val
			}
		}
	}
	if em, found := m["events"]; found {
		c.Events = p.events(em.val, path+".events")
	}
	only := func(key, kind string) {
		if km, found := m[key]; found {
			p.at(km.key, "%s.%s: only on a %s channel", path, key, kind)
		}
	}
	switch kind {
	case KindWebhook:
		for _, k := range []string{"smtp", "from", "groups", "include_inputs"} {
			only(k, KindEmail)
		}
		p.webhook(n, m, path, c)
	case KindEmail:
		for _, k := range []string{"url", "secret", "format"} {
			only(k, KindWebhook)
		}
		p.email(n, m, path, c)
	}
	return c, idNode
}

// events reads an events filter: known types, each once, one or more.
func (p *parser) events(n *yaml.Node, path string) []interpreter.NoticeType {
	if n.Kind != yaml.SequenceNode {
		p.at(n, "%s: expected a list of event types, found a %s", path, p.kindName(n))
		return nil
	}
	if len(n.Content) == 0 {
		p.at(n, "%s: at least one event type; leave events out for every one", path)
		return nil
	}
	names := make([]string, len(interpreter.NoticeTypes))
	for i, t := range interpreter.NoticeTypes {
		names[i] = string(t)
	}
	out := []interpreter.NoticeType{}
	for i, e := range n.Content {
		ep := fmt.Sprintf("%s[%d]", path, i)
		v, ok := p.str(e, ep)
		if !ok {
			continue
		}
		switch {
		case !contains(names, v):
			p.at(e, "%s: unknown event type %q (%s)", ep, v, strings.Join(names, ", "))
		case contains(eventNames(out), v):
			p.at(e, "%s: %q is listed twice", ep, v)
		default:
			out = append(out, interpreter.NoticeType(v))
		}
	}
	return out
}

func eventNames(ts []interpreter.NoticeType) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = string(t)
	}
	return out
}

// webhook reads a webhook channel's keys.
func (p *parser) webhook(n *yaml.Node, m map[string]member, path string, c *Channel) {
	if fm, found := m["format"]; found {
		if v, ok := p.str(fm.val, path+".format"); ok {
			if v != FormatSlack {
				p.at(fm.val, "%s.format: unknown format %q (slack; leave format out for the event's JSON)", path, v)
			} else {
				c.Format = v
			}
		}
	}
	um, found := m["url"]
	if !found {
		p.at(n, "%s.url: required", path)
	} else if um.val.Kind == yaml.MappingNode {
		if r := p.ref(um.val, path+".url"); r != nil {
			c.URL = *r
		}
	} else if raw, ok := p.text(um.val, path+".url"); ok {
		if err := CheckURL(raw); err != nil {
			p.at(um.val, "%s.url: %v", path, err)
		} else {
			c.URL = Ref{Value: raw}
		}
	}
	sm, found := m["secret"]
	switch {
	case found:
		if sm.val.Kind != yaml.MappingNode {
			p.at(sm.val, "%s.secret: expected a reference { env: VAR } or { file: PATH }, found a %s: the secret is never written in the file", path, p.kindName(sm.val))
		} else {
			c.Secret = p.ref(sm.val, path+".secret")
		}
	case c.Format != FormatSlack:
		p.at(n, "%s.secret: required: a reference { env: VAR } or { file: PATH } to the secret the receiver checks the signature with", path)
	}
}

// email reads an email channel's keys.
func (p *parser) email(n *yaml.Node, m map[string]member, path string, c *Channel) {
	if sm, found := m["smtp"]; !found {
		p.at(n, "%s.smtp: required", path)
	} else {
		c.SMTP = p.smtp(sm.val, path+".smtp")
	}
	if fm, found := m["from"]; !found {
		p.at(n, "%s.from: required", path)
	} else if v, ok := p.text(fm.val, path+".from"); ok {
		if a, err := mail.ParseAddress(v); err != nil {
			p.at(fm.val, "%s.from: not an email address: %v", path, err)
		} else {
			c.From = a.Address
		}
	}
	c.Groups = map[string]string{}
	if gm, found := m["groups"]; found {
		if gm.val.Kind != yaml.MappingNode {
			p.at(gm.val, "%s.groups: expected a mapping of group id to address, found a %s", path, p.kindName(gm.val))
		} else {
			for i := 0; i+1 < len(gm.val.Content); i += 2 {
				k, v := gm.val.Content[i], gm.val.Content[i+1]
				gp := joinPath(path+".groups", k.Value)
				g, ok := p.text(k, gp)
				if !ok {
					continue
				}
				if addr, ok := p.text(v, gp); ok {
					a, err := mail.ParseAddress(addr)
					if err != nil {
						p.at(v, "%s: not an email address: %v", gp, err)
						continue
					}
					c.Groups[g] = a.Address
				}
			}
		}
	}
	if im, found := m["include_inputs"]; found {
		if im.val.Kind != yaml.SequenceNode {
			p.at(im.val, "%s.include_inputs: expected a list of input names, found a %s", path, p.kindName(im.val))
			return
		}
		for i, e := range im.val.Content {
			ep := fmt.Sprintf("%s.include_inputs[%d]", path, i)
			v, ok := p.text(e, ep)
			switch {
			case !ok:
			case !inputRE.MatchString(v):
				p.at(e, "%s: %q is not an input name", ep, v)
			case contains(c.IncludeInputs, v):
				p.at(e, "%s: %q is listed twice", ep, v)
			default:
				c.IncludeInputs = append(c.IncludeInputs, v)
			}
		}
	}
}

// smtp reads an email channel's server.
func (p *parser) smtp(n *yaml.Node, path string) *SMTP {
	m, ok := p.mapping(n, path, "host", "port", "username", "password", "ca")
	if !ok {
		return nil
	}
	s := &SMTP{Port: DefaultSMTPPort}
	if hm, found := m["host"]; !found {
		p.at(n, "%s.host: required", path)
	} else if v, ok := p.text(hm.val, path+".host"); ok {
		if strings.ContainsAny(v, ":/ ") {
			p.at(hm.val, "%s.host: a host name or address alone (the port goes in port)", path)
		} else {
			s.Host = v
		}
	}
	if pm, found := m["port"]; found {
		port, err := strconv.Atoi(pm.val.Value)
		if p.doc.Kind(pm.val) != "number" || err != nil || port < 1 || port > 65535 {
			p.at(pm.val, "%s.port: expected a port number from 1 to 65535", path)
		} else {
			s.Port = port
		}
	}
	if um, found := m["username"]; found {
		if v, ok := p.text(um.val, path+".username"); ok {
			s.Username = v
		}
	}
	if pm, found := m["password"]; found {
		if pm.val.Kind != yaml.MappingNode {
			p.at(pm.val, "%s.password: expected a reference { env: VAR } or { file: PATH }, found a %s: the password is never written in the file", path, p.kindName(pm.val))
		} else {
			s.Password = p.ref(pm.val, path+".password")
		}
		if s.Username == "" {
			p.at(pm.key, "%s.password: needs username", path)
		}
	} else if s.Username != "" {
		p.at(n, "%s.password: required with username", path)
	}
	if cm, found := m["ca"]; found {
		if v, ok := p.text(cm.val, path+".ca"); ok {
			if !filepath.IsAbs(v) {
				v = filepath.Join(p.dir, v)
			}
			s.CA = filepath.Clean(v)
		}
	}
	return s
}

// ref reads a reference { env: VAR } or { file: PATH }.
func (p *parser) ref(n *yaml.Node, path string) *Ref {
	m, ok := p.mapping(n, path, "env", "file")
	if !ok {
		return nil
	}
	env, hasEnv := m["env"]
	file, hasFile := m["file"]
	switch {
	case hasEnv && hasFile:
		p.at(file.key, "%s: env or file, not both", path)
	case !hasEnv && !hasFile:
		p.at(n, "%s: needs env (an environment variable) or file (a file holding the value)", path)
	case hasEnv:
		if v, ok := p.text(env.val, path+".env"); ok {
			if !envRE.MatchString(v) {
				p.at(env.val, "%s.env: %q is not an environment variable name", path, v)
				return nil
			}
			return &Ref{Env: v}
		}
	default:
		if v, ok := p.text(file.val, path+".file"); ok {
			if !filepath.IsAbs(v) {
				v = filepath.Join(p.dir, v)
			}
			return &Ref{File: filepath.Clean(v)}
		}
	}
	return nil
}

// CheckURL refuses a webhook URL that is not https, or plain http to a
// loopback host: an event and its signature do not travel in clear text
// beyond this machine. A URL read from a reference is checked when it is
// read.
func CheckURL(raw string) error {
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		return fmt.Errorf("not a URL")
	case u.Scheme != "http" && u.Scheme != "https":
		return fmt.Errorf("must be an https URL")
	case u.Hostname() == "":
		return fmt.Errorf("must name a host")
	case u.User != nil:
		return fmt.Errorf("must not carry a user or password")
	case u.Scheme == "http" && !loopback(u.Hostname()):
		return fmt.Errorf("plain http only to a loopback host (127.0.0.1, ::1, localhost); use https")
	}
	return nil
}

func loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
