package interpreter

import (
	"fmt"
	"strconv"
	"strings"
)

// This file checks process steps against the processes they name and binds
// each to a version (docs/profile-subprocess.md §1): unknown and unpublished
// children, inputs missing, undeclared or of the wrong type, on_outcome keys
// the child cannot end with, cycles of processes, nesting past the depth
// limit and children needing a profile or tool the server lacks.

// CatalogEntry is a process a process step may name: a published version,
// or for baton validate a process folder given beside (Version 0).
type CatalogEntry struct {
	Process  *Process
	Version  int
	Children Bindings
}

// Catalog holds the processes of one organization that process steps may
// name, as the caller loaded them: for each name its latest version and
// any other versions steps pin. It is filled before parsing and only read
// by it.
type Catalog struct {
	entries map[string]map[int]*CatalogEntry
	latest  map[string]int
	where   string
}

// NewCatalog returns an empty catalog. where names what it holds, for
// messages: "published in this organization", "among the folders given".
func NewCatalog(where string) *Catalog {
	return &Catalog{entries: map[string]map[int]*CatalogEntry{}, latest: map[string]int{}, where: where}
}

// Add adds e; latest marks it as its process's latest version.
func (c *Catalog) Add(e CatalogEntry, latest bool) {
	name := e.Process.Name
	if c.entries[name] == nil {
		c.entries[name] = map[int]*CatalogEntry{}
	}
	entry := e
	c.entries[name][e.Version] = &entry
	if latest {
		c.latest[name] = e.Version
	}
}

// Lookup returns a version of a process; version 0 asks for the latest.
func (c *Catalog) Lookup(name string, version int) (*CatalogEntry, bool) {
	if c == nil {
		return nil, false
	}
	if version == 0 {
		v, ok := c.latest[name]
		if !ok {
			return nil, false
		}
		version = v
	}
	e, ok := c.entries[name][version]
	return e, ok
}

// Has reports whether the catalog knows the process at all.
func (c *Catalog) Has(name string) bool { return c != nil && len(c.entries[name]) > 0 }

// ParseAndBind parses like Parse and binds every process step to the
// version of its child in opts.Offer.Processes, refusing what §1 of the
// profile refuses. Without a catalog, process steps are checked as far as
// the file goes and nothing is bound.
func ParseAndBind(src []byte, opts *ParseOptions) (*Process, Bindings, error) {
	var bound Bindings
	p, err := parse(src, opts, &bound)
	if err != nil {
		return nil, nil, err
	}
	return p, bound, nil
}

// bind checks every process step against its child and returns the
// bindings; called once the file's own rules are checked.
func (v *validator) bind() Bindings {
	cat := v.offer.Processes
	if cat == nil {
		return nil
	}
	var out Bindings
	for i, s := range v.p.Steps {
		if s.Kind != KindProcess || s.Call == nil || v.src[i].kind != jsonObject {
			continue
		}
		if b, ok := v.bindStep(i, s, cat); ok {
			out = append(out, b)
		}
	}
	return out
}

// maxDepth is the offer's depth limit.
func (v *validator) maxDepth() int {
	if v.offer.MaxDepth > 0 {
		return v.offer.MaxDepth
	}
	return DefaultMaxDepth
}

// bindStep checks one process step against its child; it returns the
// binding, or false when the child was refused.
func (v *validator) bindStep(i int, s *Step, cat *Catalog) (ChildBinding, bool) {
	sv := v.src[i]
	path := stepPath(i)
	c := s.Call
	at := sv.get("process")
	if at == nil || at.kind != jsonString || !validName(c.Process) {
		return ChildBinding{}, false
	}
	if c.Process == v.p.Name {
		v.is.at(at, "%s.process: %s runs itself: a cycle of processes", path, c.Process)
		return ChildBinding{}, false
	}
	child, ok := cat.Lookup(c.Process, c.Version)
	if !ok {
		vv := sv.get("version")
		switch {
		case !cat.Has(c.Process):
			v.is.at(at, "%s.process: unknown process %q: none of that name is %s", path, c.Process, cat.where)
		case c.Version > 0 && vv != nil:
			latest, _ := cat.Lookup(c.Process, 0)
			if latest != nil {
				v.is.at(vv, "%s.version: %s has no published version %d (its latest is %d)", path, c.Process, c.Version, latest.Version)
			} else {
				v.is.at(vv, "%s.version: %s has no published version %d", path, c.Process, c.Version)
			}
		default:
			v.is.at(at, "%s.process: %s is not published: publish it before the processes that name it", path, c.Process)
		}
		return ChildBinding{}, false
	}
	name := childName(child)
	ok = true
	if cyc := v.cycle(child, cat, []string{v.p.Name, child.Process.Name}); cyc != nil {
		v.is.at(at, "%s.process: %s leads back to %s: a cycle of processes %s", path, name, v.p.Name, strings.Join(cyc, " → "))
		ok = false
	}
	depth, needs := v.descend(child, cat, 0)
	if depth+1 > v.maxDepth() {
		v.is.at(at, "%s.process: %s nests %d levels of processes below it; this step makes %d, over this server's limit of %d (--subprocess-depth)",
			path, name, depth, depth+1, v.maxDepth())
		ok = false
	}
	for _, n := range needs {
		v.is.at(at, "%s.process: %s", path, n)
		ok = false
	}
	if !v.childInputs(i, s, child) {
		ok = false
	}
	if !v.childOutcomes(i, s, child) {
		ok = false
	}
	b := ChildBinding{Step: s.ID, Process: child.Process.Name, Version: child.Version, Hash: child.Process.Hash,
		Initiator: child.Process.UsesInitiator() || child.Children.NeedsInitiator()}
	return b, ok
}

// childName names a catalog entry in messages: name vN, or the name alone
// for a folder beside.
func childName(e *CatalogEntry) string {
	if e.Version == 0 {
		return e.Process.Name
	}
	return fmt.Sprintf("%s v%d", e.Process.Name, e.Version)
}

// cycle returns the chain of process names from the parent through child's
// bindings back to the parent, or nil when there is none. trail holds the
// names walked so far.
func (v *validator) cycle(e *CatalogEntry, cat *Catalog, trail []string) []string {
	if len(trail) > v.maxDepth()+2 {
		return nil // deeper than any process may nest: refused as such
	}
	for _, b := range e.Children {
		next := append(append([]string(nil), trail...), b.Process)
		if b.Process == v.p.Name {
			return next
		}
		if c, ok := cat.Lookup(b.Process, b.Version); ok {
			if cyc := v.cycle(c, cat, next); cyc != nil {
				return cyc
			}
		}
	}
	return nil
}

// descend returns how many levels of processes nest below e, and what e
// or a process below it needs that this server does not offer.
func (v *validator) descend(e *CatalogEntry, cat *Catalog, level int) (int, []string) {
	var needs []string
	for _, p := range e.Process.Profiles() {
		if !v.offer.HasProfile(p) {
			needs = append(needs, fmt.Sprintf("%s needs the %s profile, which this server does not offer", childName(e), p))
		}
	}
	for _, t := range e.Process.NeedsTools() {
		if !v.offer.HasTool(t) {
			needs = append(needs, fmt.Sprintf("%s needs the %s tool, which this server does not offer", childName(e), t))
		}
	}
	if level > v.maxDepth() {
		return 0, needs
	}
	depth := 0
	for _, b := range e.Children {
		d := 0
		if c, ok := cat.Lookup(b.Process, b.Version); ok {
			var below []string
			d, below = v.descend(c, cat, level+1)
			needs = append(needs, below...)
		}
		if d+1 > depth {
			depth = d + 1
		}
	}
	return depth, needs
}

// childInputs checks a step's inputs against the child's declared inputs:
// every required one given, none undeclared, paths of a type the input can
// hold, literals as start_run checks them.
func (v *validator) childInputs(i int, s *Step, child *CatalogEntry) bool {
	sv := v.src[i]
	path := stepPath(i)
	name := childName(child)
	declared := child.Process.Inputs
	ok := true
	iv := sv.get("inputs")
	given := map[string]bool{}
	if iv != nil && iv.kind == jsonObject {
		var items *Field
		if fv := sv.get("for_each"); fv != nil && fv.kind == jsonString {
			if f := v.quietPathField(s.Call.ForEach); f != nil {
				items = f.Items
			}
		}
		for _, m := range iv.members {
			given[m.key] = true
			p := path + ".inputs." + quoteKey(m.key)
			f := declared.Lookup(m.key)
			if f == nil {
				v.is.add(m.keyLine, m.keyCol, "%s: %s has no input %s%s", p, name, quoteKey(m.key), inputList(declared))
				ok = false
				continue
			}
			in := s.Call.input(m.key)
			if in == nil {
				continue
			}
			if in.Path == "" {
				val, err := DecodeJSON(in.Value)
				if err != nil {
					continue
				}
				for _, problem := range CheckValue(p, f, val) {
					v.is.at(m.val, "%s (%s's input %s is %s)", problem, child.Process.Name, f.Name, fieldText(f))
					ok = false
				}
				continue
			}
			from := v.callPathField(in.Path, items)
			if from != nil && !typesMeet(from, f) {
				v.is.at(m.val, "%s: %s is %s; %s's input %s is %s", p, in.Path, fieldText(from), child.Process.Name, f.Name, fieldText(f))
				ok = false
			}
		}
	}
	var missing []string
	for _, f := range declared {
		if !f.Optional && !given[f.Name] {
			missing = append(missing, fmt.Sprintf("%s (%s)", f.Name, fieldText(f)))
		}
	}
	if len(missing) > 0 {
		at, key := iv, path+".inputs"
		if at == nil {
			at = sv.get("process")
		}
		v.is.at(at, "%s: %s needs %s, which inputs does not give", key, name, strings.Join(missing, ", "))
		ok = false
	}
	return ok
}

// input returns the call's input named name.
func (c *ProcessCall) input(name string) *CallInput {
	for k := range c.Inputs {
		if c.Inputs[k].Name == name {
			return &c.Inputs[k]
		}
	}
	return nil
}

// inputList says which inputs a child declares, for messages.
func inputList(fs Fields) string {
	if len(fs) == 0 {
		return " (it declares no inputs)"
	}
	names := make([]string, len(fs))
	for k, f := range fs {
		names[k] = f.Name
	}
	return " (its inputs: " + strings.Join(names, ", ") + ")"
}

// fieldText names a field's type for messages: "a number field", "a list
// of string field".
func fieldText(f *Field) string {
	t := string(f.Type)
	if f.Type == TypeList && f.Items != nil {
		t = "list of " + string(f.Items.Type)
	}
	return aOrAn(t) + " field"
}

func aOrAn(word string) string {
	if word != "" && strings.ContainsRune("aeiou", rune(word[0])) {
		return "an " + word
	}
	return "a " + word
}

// quietPathField resolves a run-data path without reporting anything.
func (v *validator) quietPathField(path string) *Field {
	switch {
	case strings.HasPrefix(path, "inputs."):
		return v.p.Inputs.Lookup(path[len("inputs."):])
	case strings.HasPrefix(path, "steps."):
		id, field, ok := strings.Cut(path[len("steps."):], ".output.")
		if j, known := v.ids[id]; ok && known {
			return v.p.Steps[j].Output.Lookup(field)
		}
	}
	return nil
}

// callPathField resolves a path of a process step's inputs to its declared
// field, nil when its type is not declared (item.<field>, or item of a list
// without items) or the path was refused.
func (v *validator) callPathField(path string, items *Field) *Field {
	switch {
	case path == "item":
		return items
	case strings.HasPrefix(path, "item."):
		return nil
	}
	return v.quietPathField(path)
}

// typesMeet reports whether a value of field from can be a value of field
// to: the same type, or string beside date, datetime or person (each such
// value is a string); lists whose declared item types meet. one_of is
// checked when the child starts.
func typesMeet(from, to *Field) bool {
	if from.Type == to.Type {
		if from.Type == TypeList && from.Items != nil && to.Items != nil {
			return typesMeet(from.Items, to.Items)
		}
		return true
	}
	stringy := func(t Type) bool { return t == TypeDate || t == TypeDatetime || t == TypePerson }
	return (from.Type == TypeString && stringy(to.Type)) || (to.Type == TypeString && stringy(from.Type))
}

// childOutcomes checks on_outcome's keys against what the child can end
// with.
func (v *validator) childOutcomes(i int, s *Step, child *CatalogEntry) bool {
	ov := v.src[i].get("on_outcome")
	if ov == nil || ov.kind != jsonObject {
		return true
	}
	outcomes := child.Process.Outcomes()
	ok := true
	for _, m := range ov.members {
		if strings.TrimSpace(m.key) == "" || contains(outcomes, m.key) {
			continue
		}
		v.is.add(m.keyLine, m.keyCol, "%s.on_outcome.%s: %s cannot end %s (it ends %s)",
			stepPath(i), quoteKey(m.key), childName(child), m.key, orList(outcomes))
		ok = false
	}
	return ok
}

// orList joins words as "a, b or c".
func orList(words []string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " or " + words[len(words)-1]
}

// ProcessRef names a version of a process; Version 0 is the latest.
type ProcessRef struct {
	Name    string
	Version int
}

// Dependency is a process's name and what its process steps run, once
// each, in step order.
type Dependency struct {
	Name string
	Refs []ProcessRef
}

// add adds ref once.
func (d *Dependency) add(ref ProcessRef) {
	for _, r := range d.Refs {
		if r == ref {
			return
		}
	}
	d.Refs = append(d.Refs, ref)
}

// Children returns the names d runs, once each.
func (d Dependency) Children() []string {
	var out []string
	for _, r := range d.Refs {
		if !contains(out, r.Name) {
			out = append(out, r.Name)
		}
	}
	return out
}

// Dependency returns p's name and what its process steps run.
func (p *Process) Dependency() Dependency {
	d := Dependency{Name: p.Name}
	for _, s := range p.Steps {
		if s.Kind == KindProcess && s.Call != nil {
			d.add(ProcessRef{Name: s.Call.Process, Version: s.Call.Version})
		}
	}
	return d
}

// ReadDependency reads a PROCESS.md's name and the process: and version:
// values of its steps without validating anything else, so processes can
// be ordered, and their children loaded, before each is checked. false
// when it has no readable name.
func ReadDependency(src []byte) (Dependency, bool) {
	doc, issue := splitDocument(src)
	if issue != nil {
		return Dependency{}, false
	}
	root := parseFrontmatter(doc, &issueList{})
	nv := root.get("name")
	if nv == nil || nv.kind != jsonString {
		return Dependency{}, false
	}
	d := Dependency{Name: nv.str}
	if steps := root.get("steps"); steps != nil && steps.kind == jsonArray {
		for _, sv := range steps.arr {
			pv := sv.get("process")
			if pv == nil || pv.kind != jsonString {
				continue
			}
			ref := ProcessRef{Name: pv.str}
			if vv := sv.get("version"); vv != nil && vv.kind == jsonNumber {
				if n, err := strconv.Atoi(vv.str); err == nil && n > 0 {
					ref.Version = n
				}
			}
			d.add(ref)
		}
	}
	return d, true
}

// PublishOrder orders processes so that every child comes before the
// processes that name it: each in the given order, after the children it
// names (in the order its steps name them). It returns indexes into ds.
// Names not among ds are ignored. A cycle among them is returned as the
// names on it; the order is then the given one.
func PublishOrder(ds []Dependency) ([]int, []string) {
	index := map[string]int{}
	for k, d := range ds {
		if _, dup := index[d.Name]; !dup {
			index[d.Name] = k
		}
	}
	const (
		white = iota
		grey
		black
	)
	color := make([]int, len(ds))
	var out []int
	var stack []string
	var cycle []string
	var visit func(k int)
	visit = func(k int) {
		color[k] = grey
		stack = append(stack, ds[k].Name)
		for _, name := range ds[k].Children() {
			j, ok := index[name]
			if !ok || cycle != nil {
				continue
			}
			switch color[j] {
			case white:
				visit(j)
			case grey:
				for s := range stack {
					if stack[s] == name {
						cycle = append(append([]string(nil), stack[s:]...), name)
						break
					}
				}
			}
		}
		stack = stack[:len(stack)-1]
		color[k] = black
		out = append(out, k)
	}
	for k := range ds {
		if color[k] == white {
			visit(k)
		}
	}
	if cycle != nil {
		out = out[:0]
		for k := range ds {
			out = append(out, k)
		}
		return out, cycle
	}
	return out, nil
}
