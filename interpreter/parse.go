package interpreter

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Parsing rulings where spec §2 and the profiles leave the detail open. Tests
// assert each of them.
//
//   - The frontmatter starts at a first line that is exactly "---" (a UTF-8
//     byte order mark is refused) and ends at the next line that is exactly
//     "---"; a trailing CR on either line is allowed. YAML anchors and aliases
//     are refused; tags other than the core ones are refused; .inf and .nan
//     are refused (the frontmatter must be JSON).
//   - Mapping keys stand for their JSON text, so 17, 017 and "17" are the same
//     key and a duplicate. A null or collection key is refused.
//   - A role name is any non-blank value without a dot; field and answer
//     names are any non-empty string. A finish outcome is any non-blank text.
//   - Refused as meaningless: on_timeout without timeout, optional on list
//     items, one_of on list and object fields, an empty one_of, a value or
//     route or evidence kind listed twice, blank instructions or when texts.
//   - An empty evidence list is allowed and means none.
//   - Branch membership follows declared next and on_timeout from each entry
//     and stops at join and at steps reachable from the first step without a
//     parallel entry; routing to such a step is "outside its branch".
//   - Issues come ordered by line and column. YAML syntax errors carry a line
//     but no column (yaml.v3 reports none).

// Issue is one problem found in a PROCESS.md, at a 1-based line and column of
// the whole file. Line and Column are 0 when there is no position; Column
// alone is 0 when only the line is known (YAML syntax errors).
type Issue struct {
	Line    int    `json:"line"`
	Column  int    `json:"column"`
	Message string `json:"message"`
}

// String returns "LINE:COL: message", "LINE: message" or the message alone.
func (i Issue) String() string {
	switch {
	case i.Line > 0 && i.Column > 0:
		return fmt.Sprintf("%d:%d: %s", i.Line, i.Column, i.Message)
	case i.Line > 0:
		return fmt.Sprintf("%d: %s", i.Line, i.Message)
	}
	return i.Message
}

// ProcessError refuses a PROCESS.md. It carries every issue found, ordered by
// position.
type ProcessError struct {
	Issues []Issue
}

// Error returns the issues, one per line.
func (e *ProcessError) Error() string {
	if len(e.Issues) == 1 {
		return "process refused: " + e.Issues[0].String()
	}
	var b strings.Builder
	fmt.Fprintf(&b, "process refused, %d issues:", len(e.Issues))
	for _, i := range e.Issues {
		b.WriteString("\n")
		b.WriteString(i.String())
	}
	return b.String()
}

// Offer is what a server offers, as far as publication is concerned: the
// profiles it implements (ProfileParallel, ProfileCheck, ProfileTools), the
// names of the tools it serves ("upload", "send_event", ...), and with
// ProfileTools the downstream tools registered for agents to call.
type Offer struct {
	Profiles []string
	Tools    []string
	// ToolCatalog is the registered downstream tools a step's tools: key
	// may name. Nil: none are registered.
	ToolCatalog *ToolCatalog
	// Processes are the processes a process step may name
	// (baton-subprocess-1). Nil: process steps are checked as far as the
	// file goes, and ParseAndBind binds nothing.
	Processes *Catalog
	// MaxDepth is how many levels of processes may nest below a process.
	// Default 0: DefaultMaxDepth.
	MaxDepth int
}

// Tools lists the fourteen tools of spec §4, in its order: the required
// ones (§4.1), then the optional ones (§4.2).
var Tools = []Tool{
	ToolDescribe, ToolListProcesses, ToolStartRun, ToolGetRun, ToolGetWork, ToolClaim,
	ToolSubmit, ToolEscalate, ToolDecide, ToolCancel,
	ToolRenew, ToolUpload, ToolSendEvent, ToolListRuns,
}

// ToolNames are the names of tools, as the wire carries them.
func ToolNames(tools []Tool) []string {
	names := make([]string, len(tools))
	for i, t := range tools {
		names[i] = string(t)
	}
	return names
}

// DefaultOffer is what Baton offers without an evaluator: the parallel-1
// profile and all fourteen tools. check-1 is offered only by a server with an
// evaluator configured (profile-check), so the caller adds it.
func DefaultOffer() Offer {
	return Offer{
		Profiles: []string{ProfileParallel},
		Tools:    ToolNames(Tools),
	}
}

// HasProfile reports whether the offer includes profile p.
func (o Offer) HasProfile(p string) bool { return contains(o.Profiles, p) }

// HasTool reports whether the offer includes tool t.
func (o Offer) HasTool(t Tool) bool { return contains(o.Tools, string(t)) }

func contains(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}

// ParseOptions adjusts Parse.
type ParseOptions struct {
	// Folder is the name of the folder the file came in; the process name
	// must equal it (spec §2.1). Default "": no folder check.
	Folder string
	// Offer is what the server offers; a process needing more is refused.
	// Default nil: DefaultOffer().
	Offer *Offer
}

// Parse reads, validates and hashes a PROCESS.md. It refuses a file that
// breaks any rule of spec §2 or of the offered profiles, or that needs a
// profile or tool the offer lacks, with a *ProcessError listing every issue
// at once. Parse does no I/O and is deterministic.
func Parse(src []byte, opts *ParseOptions) (*Process, error) {
	return parse(src, opts, nil)
}

// parse is Parse; with bound not nil it also binds process steps
// (ParseAndBind).
func parse(src []byte, opts *ParseOptions, bound *Bindings) (*Process, error) {
	if opts == nil {
		opts = &ParseOptions{}
	}
	offer := DefaultOffer()
	if opts.Offer != nil {
		offer = *opts.Offer
	}
	doc, issue := splitDocument(src)
	if issue != nil {
		return nil, &ProcessError{Issues: []Issue{*issue}}
	}
	is := &issueList{}
	root := parseFrontmatter(doc, is)
	if root == nil {
		return nil, is.err()
	}
	b := &processBuilder{is: is}
	p := b.process(root)
	if p != nil {
		v := &validator{p: p, src: b.steps, root: root, is: is, offer: offer, folder: opts.Folder}
		v.validate()
		children := v.bind()
		if bound != nil {
			*bound = children
		}
	}
	if !utf8.Valid(doc.body) {
		bad := len(src) - len(doc.body)
		for off := 0; off < len(doc.body); {
			r, size := utf8.DecodeRune(doc.body[off:])
			if r == utf8.RuneError && size <= 1 {
				bad += off
				break
			}
			off += size
		}
		line := 1 + bytes.Count(src[:bad], []byte("\n"))
		col := bad - bytes.LastIndexByte(src[:bad], '\n')
		is.add(line, col, "body: not valid UTF-8 text")
	}
	if len(is.list) > 0 || p == nil {
		return nil, is.err()
	}
	p.Body = string(doc.body)
	canonical, err := canonicalJSON(root)
	if err != nil {
		is.add(1, 1, "frontmatter: cannot be canonicalized as JSON: %v", err)
		return nil, is.err()
	}
	p.Frontmatter = canonical
	p.Hash = ContentHash(canonical, doc.body)
	return p, nil
}

// issueList collects issues.
type issueList struct {
	list []Issue
}

func (l *issueList) add(line, col int, format string, args ...any) {
	l.list = append(l.list, Issue{Line: line, Column: col, Message: fmt.Sprintf(format, args...)})
}

// at adds an issue at the position of v.
func (l *issueList) at(v *fmValue, format string, args ...any) {
	l.add(v.line, v.col, format, args...)
}

// err returns the issues, ordered by position, as a *ProcessError.
func (l *issueList) err() *ProcessError {
	list := append([]Issue(nil), l.list...)
	sort.SliceStable(list, func(i, j int) bool {
		if list[i].Line != list[j].Line {
			return list[i].Line < list[j].Line
		}
		return list[i].Column < list[j].Column
	})
	return &ProcessError{Issues: list}
}

// The keys the frontmatter may hold, by place.
var (
	topKeys      = []string{"name", "description", "inputs", "requires", "steps"}
	requiresKeys = []string{"systems"}
	fieldKeys    = []string{"type", "description", "optional", "one_of", "items"}
	stepKeys     = []string{
		"id", "agent", "task", "approve", "wait", "wait_until", "wait_for", "finish", "parallel", "process",
		"output", "evidence", "next", "person", "on_reject", "due", "timeout", "on_timeout",
		"check", "advisory", "tools",
		"version", "for_each", "inputs", "concurrency", "on_outcome",
	}
	routeKeys = []string{"to", "when"}
)

// processBuilder turns the frontmatter tree into the typed model, refusing
// unknown fields and values of the wrong JSON type. It keeps each step's
// source value so the validator can point at it.
type processBuilder struct {
	is    *issueList
	steps []*fmValue // steps[i] is the source of Process.Steps[i]
}

// process builds the Process; nil when the frontmatter is not a mapping.
func (b *processBuilder) process(root *fmValue) *Process {
	if root.kind == jsonInvalid {
		return nil
	}
	if root.kind != jsonObject {
		b.is.at(root, "frontmatter: expected a mapping, found a %s", root.kind)
		return nil
	}
	b.known(root, "", topKeys)
	p := &Process{}
	p.Name, _ = b.requiredString(root, "", "name")
	p.Description, _ = b.requiredString(root, "", "description")
	if v := root.get("inputs"); v != nil {
		p.Inputs = b.fields(v, "inputs")
	}
	if v := root.get("requires"); v != nil {
		p.Requires = b.requires(v)
	}
	steps := root.get("steps")
	switch {
	case steps == nil:
		b.is.at(root, "steps: required")
	case steps.kind == jsonInvalid:
	case steps.kind != jsonArray:
		b.is.at(steps, "steps: expected a list of steps, found a %s", steps.kind)
	case len(steps.arr) == 0:
		b.is.at(steps, "steps: at least one step")
	default:
		for i, sv := range steps.arr {
			p.Steps = append(p.Steps, b.step(sv, stepPath(i)))
			b.steps = append(b.steps, sv)
		}
	}
	return p
}

// known refuses every key of obj not in keys.
func (b *processBuilder) known(obj *fmValue, path string, keys []string) {
	for _, m := range obj.members {
		if !contains(keys, m.key) {
			b.is.add(m.keyLine, m.keyCol, "%s: unknown field", fmJoinPath(path, quoteKey(m.key)))
		}
	}
}

// quoteKey shows an odd key quoted so the message stays readable.
func quoteKey(k string) string {
	if k == "" || strings.ContainsAny(k, " .[]:\"\t\n") {
		return strconv.Quote(k)
	}
	return k
}

// isObject reports whether v is a mapping, refusing anything else.
func (b *processBuilder) isObject(v *fmValue, path string) bool {
	if v.kind == jsonInvalid {
		return false
	}
	if v.kind != jsonObject {
		b.is.at(v, "%s: expected a mapping, found a %s", path, v.kind)
		return false
	}
	return true
}

// isList reports whether v is a list, refusing anything else.
func (b *processBuilder) isList(v *fmValue, path string) bool {
	if v.kind == jsonInvalid {
		return false
	}
	if v.kind != jsonArray {
		b.is.at(v, "%s: expected a list, found a %s", path, v.kind)
		return false
	}
	return true
}

// str returns v as a string, refusing anything else.
func (b *processBuilder) str(v *fmValue, path string) (string, bool) {
	if v.kind == jsonInvalid {
		return "", false
	}
	if v.kind != jsonString {
		b.is.at(v, "%s: expected a string, found a %s", path, v.kind)
		return "", false
	}
	return v.str, true
}

// text returns v as a string that is not blank.
func (b *processBuilder) text(v *fmValue, path string) (string, bool) {
	s, ok := b.str(v, path)
	if ok && strings.TrimSpace(s) == "" {
		b.is.at(v, "%s: must not be blank", path)
		return s, false
	}
	return s, ok
}

// boolean returns v as a boolean, refusing anything else.
func (b *processBuilder) boolean(v *fmValue, path string) (bool, bool) {
	if v.kind == jsonInvalid {
		return false, false
	}
	if v.kind != jsonBool {
		b.is.at(v, "%s: expected true or false, found a %s", path, v.kind)
		return false, false
	}
	return v.b, true
}

// number returns v as a float64, refusing anything else.
func (b *processBuilder) number(v *fmValue, path string) (float64, bool) {
	if v.kind == jsonInvalid {
		return 0, false
	}
	if v.kind != jsonNumber {
		b.is.at(v, "%s: expected a number, found a %s", path, v.kind)
		return 0, false
	}
	f, err := strconv.ParseFloat(v.str, 64)
	if err != nil {
		b.is.at(v, "%s: number out of range", path)
		return 0, false
	}
	return f, true
}

// strings returns v as a list of strings; ok is false when anything was
// refused.
func (b *processBuilder) strings(v *fmValue, path string) ([]string, bool) {
	if !b.isList(v, path) {
		return nil, false
	}
	out := make([]string, 0, len(v.arr))
	ok := true
	for i, e := range v.arr {
		if e.kind == jsonString {
			out = append(out, e.str)
			continue
		}
		s, good := b.str(e, indexPath(path, i))
		ok = ok && good
		out = append(out, s)
	}
	return out, ok
}

// requiredString reads obj.key as a non-blank string.
func (b *processBuilder) requiredString(obj *fmValue, path, key string) (string, bool) {
	v := obj.get(key)
	if v == nil {
		b.is.at(obj, "%s: required", fmJoinPath(path, key))
		return "", false
	}
	return b.text(v, fmJoinPath(path, key))
}

// requires reads requires: { systems: [names] }.
func (b *processBuilder) requires(v *fmValue) *Requires {
	if !b.isObject(v, "requires") {
		return nil
	}
	b.known(v, "requires", requiresKeys)
	r := &Requires{}
	sys := v.get("systems")
	if sys == nil {
		b.is.at(v, "requires.systems: required")
		return r
	}
	names, _ := b.strings(sys, "requires.systems")
	if sys.kind == jsonArray && len(sys.arr) == 0 {
		b.is.at(sys, "requires.systems: at least one name")
	}
	seen := map[string]bool{}
	for i, n := range names {
		if sys.arr[i].kind != jsonString {
			continue
		}
		p := fmt.Sprintf("requires.systems[%d]", i)
		switch {
		case !validName(n):
			b.is.at(sys.arr[i], "%s: must match %s and be at most 64 characters", p, namePattern)
		case seen[n]:
			b.is.at(sys.arr[i], "%s: %q is listed twice", p, n)
		}
		seen[n] = true
	}
	r.Systems = names
	return r
}

// fields reads a map of field name to field (spec §2.3).
func (b *processBuilder) fields(v *fmValue, path string) Fields {
	if !b.isObject(v, path) {
		return nil
	}
	fs := Fields{}
	for _, m := range v.members {
		if m.key == "" {
			b.is.add(m.keyLine, m.keyCol, "%s: a field name must not be empty", path)
			continue
		}
		f := b.field(m.val, path+"."+quoteKey(m.key), false)
		if f != nil {
			f.Name = m.key
			fs = append(fs, f)
		}
	}
	return fs
}

// field reads one field: a type name, or an object with type, description,
// optional, one_of and items. item is true for a list's items, where
// optional means nothing and is refused.
func (b *processBuilder) field(v *fmValue, path string, item bool) *Field {
	switch v.kind {
	case jsonInvalid:
		return nil
	case jsonString:
		t := Type(v.str)
		if !t.Valid() {
			b.is.at(v, "%s: unknown type %q", path, v.str)
			return nil
		}
		return &Field{Type: t, Short: true}
	case jsonObject:
	default:
		b.is.at(v, "%s: expected a type name or a field mapping, found a %s", path, v.kind)
		return nil
	}
	b.known(v, path, fieldKeys)
	f := &Field{}
	tv := v.get("type")
	if tv == nil {
		b.is.at(v, "%s.type: required", path)
		return nil
	}
	ts, ok := b.str(tv, path+".type")
	if !ok {
		return nil
	}
	f.Type = Type(ts)
	if !f.Type.Valid() {
		b.is.at(tv, "%s.type: unknown type %q", path, ts)
		return nil
	}
	if d := v.get("description"); d != nil {
		f.Description, _ = b.str(d, path+".description")
	}
	if m := v.member("optional"); m != nil {
		if item {
			b.is.add(m.keyLine, m.keyCol, "%s.optional: not allowed on list items", path)
		} else {
			f.Optional, _ = b.boolean(m.val, path+".optional")
		}
	}
	if m := v.member("one_of"); m != nil {
		f.OneOf = b.oneOf(m, f.Type, path+".one_of")
	}
	if m := v.member("items"); m != nil {
		if f.Type != TypeList {
			b.is.add(m.keyLine, m.keyCol, "%s.items: allowed only on type list", path)
		} else {
			f.Items = b.field(m.val, path+".items", true)
		}
	}
	return f
}

// oneOf reads a field's allowed values, each of the field's type.
func (b *processBuilder) oneOf(m *fmMember, t Type, path string) []any {
	if t == TypeList || t == TypeObject {
		b.is.add(m.keyLine, m.keyCol, "%s: not allowed on type %s", path, t)
		return nil
	}
	v := m.val
	if !b.isList(v, path) {
		return nil
	}
	if len(v.arr) == 0 {
		b.is.at(v, "%s: at least one value", path)
		return nil
	}
	var out []any
	seen := map[string]bool{}
	for i, e := range v.arr {
		var val any
		switch e.kind {
		case jsonInvalid:
			continue
		case jsonString:
			val = e.str
		case jsonBool:
			val = e.b
		case jsonNumber:
			val = json.Number(e.str)
		default:
			b.is.at(e, "%s: expected %s, found a %s", indexPath(path, i), t, e.kind)
			continue
		}
		if problems := CheckValue("", &Field{Type: t}, val); len(problems) > 0 {
			b.is.at(e, "%s", CheckValue(indexPath(path, i), &Field{Type: t}, val)[0])
			continue
		}
		key := e.kind.String() + ":" + e.str
		switch e.kind {
		case jsonBool:
			key = strconv.FormatBool(e.b)
		case jsonNumber:
			key = decimalKey(e.str)
		}
		if seen[key] {
			b.is.at(e, "%s: listed twice", indexPath(path, i))
			continue
		}
		seen[key] = true
		out = append(out, val)
	}
	return out
}

// decimalKey returns a key equal for JSON number texts of equal decimal
// value: 2.5, 2.50 and 25e-1 alike.
func decimalKey(s string) string {
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	mant, exp := s, 0
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		e, err := strconv.Atoi(s[i+1:])
		if err != nil {
			return s // an exponent beyond int: compare as written
		}
		mant, exp = s[:i], e
	}
	whole, frac, _ := strings.Cut(mant, ".")
	digits := strings.TrimLeft(whole+frac, "0")
	exp -= len(frac)
	if digits == "" {
		return "0"
	}
	trimmed := strings.TrimRight(digits, "0")
	exp += len(digits) - len(trimmed)
	sign := ""
	if neg {
		sign = "-"
	}
	return sign + trimmed + "e" + strconv.Itoa(exp)
}

// step reads one step. Kind rules that span keys are the validator's.
func (b *processBuilder) step(v *fmValue, path string) *Step {
	s := &Step{}
	if !b.isObject(v, path) {
		return s
	}
	b.known(v, path, stepKeys)
	if id := v.get("id"); id == nil {
		b.is.at(v, "%s.id: required", path)
	} else {
		s.ID, _ = b.str(id, path+".id")
	}

	// Exactly one kind key.
	var first *fmMember
	for i := range v.members {
		m := &v.members[i]
		if !isKindKey(m.key) {
			continue
		}
		if first != nil {
			b.is.add(m.keyLine, m.keyCol, "%s.%s: a step has exactly one kind key; this one already has %s", path, m.key, first.key)
			continue
		}
		first = m
	}
	if first == nil {
		b.is.at(v, "%s: needs a kind key: one of agent, task, approve, wait, wait_until, wait_for, finish, parallel, process", path)
	} else {
		s.Kind = Kind(first.key)
		kp := path + "." + first.key
		switch s.Kind {
		case KindParallel:
			s.Branches, _ = b.strings(first.val, kp)
		case KindWait:
			if t, ok := b.str(first.val, kp); ok {
				s.Text = t
				s.Wait = b.duration(first.val, t, kp)
			}
		default:
			s.Text, _ = b.text(first.val, kp)
		}
	}

	if o := v.get("output"); o != nil {
		s.Output = b.fields(o, path+".output")
	}
	if e := v.get("evidence"); e != nil {
		s.Evidence, _ = b.strings(e, path+".evidence")
	}
	if n := v.get("next"); n != nil {
		s.Next, s.NextList = b.next(n, path+".next")
	}
	if pv := v.get("person"); pv != nil {
		s.Person, _ = b.text(pv, path+".person")
	}
	if r := v.get("on_reject"); r != nil {
		s.OnReject, _ = b.str(r, path+".on_reject")
	}
	if r := v.get("on_timeout"); r != nil {
		s.OnTimeout, _ = b.str(r, path+".on_timeout")
	}
	if d := v.get("due"); d != nil {
		if t, ok := b.str(d, path+".due"); ok {
			s.Due = b.duration(d, t, path+".due")
		}
	}
	if d := v.get("timeout"); d != nil {
		if t, ok := b.str(d, path+".timeout"); ok {
			s.Timeout = b.duration(d, t, path+".timeout")
		}
	}
	if c := v.get("check"); c != nil {
		s.Check = b.check(c, path+".check")
	}
	if a := v.get("advisory"); a != nil {
		s.Advisory, _ = b.boolean(a, path+".advisory")
	}
	if t := v.get("tools"); t != nil {
		s.Tools = b.tools(t, path+".tools")
	}
	if s.Kind == KindProcess {
		s.Call = b.processCall(v, s.Text, path)
	}
	return s
}

func isKindKey(k string) bool {
	for _, kind := range Kinds {
		if string(kind) == k {
			return true
		}
	}
	return false
}

// next reads a step's next: a step id, or a list of routes, each a step id
// or { to, when }.
func (b *processBuilder) next(v *fmValue, path string) ([]Route, bool) {
	switch v.kind {
	case jsonInvalid:
		return nil, false
	case jsonString:
		return []Route{{To: v.str}}, false
	case jsonArray:
	default:
		b.is.at(v, "%s: expected a step id or a list of routes, found a %s", path, v.kind)
		return nil, false
	}
	routes := []Route{}
	for i, e := range v.arr {
		p := indexPath(path, i)
		switch e.kind {
		case jsonInvalid:
			routes = append(routes, Route{})
		case jsonString:
			routes = append(routes, Route{To: e.str})
		case jsonObject:
			b.known(e, p, routeKeys)
			r := Route{}
			if to := e.get("to"); to == nil {
				b.is.at(e, "%s.to: required", p)
			} else {
				r.To, _ = b.str(to, p+".to")
			}
			if w := e.get("when"); w != nil {
				r.When, _ = b.text(w, p+".when")
			}
			routes = append(routes, r)
		default:
			b.is.at(e, "%s: expected a step id or { to, when }, found a %s", p, e.kind)
			routes = append(routes, Route{})
		}
	}
	return routes, true
}
