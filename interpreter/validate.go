package interpreter

import (
	"regexp"
	"strconv"
	"strings"
	"time"
)

// This file holds the publication rules of spec §2 that span more than one
// value, the profiles' key rules, and what the server must offer. The step
// graph's rules are in graph.go.

const (
	namePattern   = `^[a-z0-9]+(-[a-z0-9]+)*$`
	stepIDPattern = `^[a-z][a-z0-9_-]{0,63}$`
	// MaxDurationDays bounds every duration (SPEC-DECISIONS §19).
	MaxDurationDays = 3650
)

var (
	nameRE   = regexp.MustCompile(namePattern)
	stepIDRE = regexp.MustCompile(stepIDPattern)
)

// validName reports whether s is a valid process or system name.
func validName(s string) bool { return len(s) <= 64 && nameRE.MatchString(s) }

// ValidStepID reports whether s is a valid step id; event names follow the
// same pattern (spec §2.2, §3.6).
func ValidStepID(s string) bool { return stepIDRE.MatchString(s) }

// ParseDuration reads a spec §2.4 duration: a whole number and m, h or d,
// such as 30m, 4h or 3d, at most 3650 days (SPEC-DECISIONS §19).
func ParseDuration(s string) (Duration, error) {
	if len(s) < 2 || s[0] < '1' || s[0] > '9' {
		return Duration{}, errBadDuration
	}
	digits, unit := s[:len(s)-1], s[len(s)-1]
	for i := 0; i < len(digits); i++ {
		if digits[i] < '0' || digits[i] > '9' {
			return Duration{}, errBadDuration
		}
	}
	var per time.Duration
	switch unit {
	case 'm':
		per = time.Minute
	case 'h':
		per = time.Hour
	case 'd':
		per = 24 * time.Hour
	default:
		return Duration{}, errBadDuration
	}
	const max = MaxDurationDays * 24 * time.Hour
	n, err := strconv.ParseInt(digits, 10, 64)
	if err != nil || n > int64(max/per) {
		return Duration{}, errLongDuration
	}
	return Duration{Text: s, D: time.Duration(n) * per}, nil
}

type durationError string

func (e durationError) Error() string { return string(e) }

const (
	errBadDuration  = durationError("must be a whole number followed by m, h or d, such as 30m, 4h or 3d")
	errLongDuration = durationError("must be at most 3650 days")
)

// duration reads a duration value for the builder.
func (b *processBuilder) duration(v *fmValue, text, path string) *Duration {
	d, err := ParseDuration(text)
	if err != nil {
		b.is.at(v, "%s: %v", path, err)
		return nil
	}
	return &d
}

// aKind names a kind with its article: "an agent", "a task".
func aKind(k Kind) string {
	if k == KindAgent || k == KindApprove {
		return "an " + string(k)
	}
	return "a " + string(k)
}

// kindKeys lists the optional keys each kind allows (spec §2.2, the
// profiles).
var kindKeys = map[Kind][]string{
	KindAgent:     {"output", "evidence", "next", "due", "check", "advisory", "tools"},
	KindTask:      {"output", "evidence", "next", "person", "due", "check", "advisory"},
	KindApprove:   {"next", "person", "on_reject", "due"},
	KindWait:      {"next"},
	KindWaitUntil: {"next"},
	KindWaitFor:   {"next", "timeout", "on_timeout"},
	KindFinish:    {},
	KindParallel:  {"next"},
	KindProcess:   {"next", "version", "for_each", "inputs", "concurrency", "on_outcome"},
}

// keyHome says where a key belongs, for "not allowed" messages.
var keyHome = map[string]string{
	"output":      "agent and task steps",
	"evidence":    "agent and task steps",
	"next":        "every step but finish",
	"person":      "task and approve steps",
	"on_reject":   "approve steps",
	"due":         "agent, task and approve steps",
	"timeout":     "wait_for steps",
	"on_timeout":  "wait_for steps",
	"check":       "agent and task steps",
	"advisory":    "agent and task steps, beside check",
	"tools":       "agent steps",
	"version":     "process steps",
	"for_each":    "process steps",
	"inputs":      "process steps",
	"concurrency": "process steps, beside for_each",
	"on_outcome":  "process steps",
}

// validator checks a built Process against the rules that span values.
type validator struct {
	p      *Process
	src    []*fmValue // src[i] is the source of p.Steps[i]
	root   *fmValue
	is     *issueList
	offer  Offer
	folder string

	ids         map[string]int // step id to its first index
	hasParallel bool
}

func (v *validator) validate() {
	v.name()
	v.ids = map[string]int{}
	for _, s := range v.p.Steps {
		if s.Kind == KindParallel {
			v.hasParallel = true
		}
	}
	for i, s := range v.p.Steps {
		v.stepID(i, s)
	}
	for i, s := range v.p.Steps {
		v.step(i, s)
	}
	g := newGraph(v)
	g.check()
}

// name checks the name's pattern, length and folder.
func (v *validator) name() {
	nv := v.root.get("name")
	if nv == nil || nv.kind != jsonString || strings.TrimSpace(nv.str) == "" {
		return
	}
	n := nv.str
	switch {
	case len(n) > 64:
		v.is.at(nv, "name: must be at most 64 characters")
	case !nameRE.MatchString(n):
		v.is.at(nv, "name: must match %s", namePattern)
	case v.folder != "" && n != v.folder:
		v.is.at(nv, "name: must equal its folder's name %q", v.folder)
	}
}

// stepPath names step i in messages.
func stepPath(i int) string { return indexPath("steps", i) }

// indexPath names element i of the list at path.
func indexPath(path string, i int) string { return path + "[" + strconv.Itoa(i) + "]" }

// stepID checks the id's pattern, uniqueness and the reserved join.
func (v *validator) stepID(i int, s *Step) {
	idv := v.src[i].get("id")
	if idv == nil || idv.kind != jsonString {
		return
	}
	p := stepPath(i) + ".id"
	switch {
	case !ValidStepID(s.ID):
		v.is.at(idv, "%s: must match %s", p, stepIDPattern)
		return
	case s.ID == Join && v.hasParallel:
		v.is.at(idv, `%s: "join" is reserved in a process with a parallel step`, p)
		return
	}
	if j, dup := v.ids[s.ID]; dup {
		v.is.at(idv, "%s: %q is already the id of %s", p, s.ID, stepPath(j))
		return
	}
	v.ids[s.ID] = i
}

// step checks one step's keys against its kind and its references.
func (v *validator) step(i int, s *Step) {
	sv := v.src[i]
	if sv.kind != jsonObject || s.Kind == "" {
		return
	}
	path := stepPath(i)
	allowed := kindKeys[s.Kind]
	// A step with two kind keys is refused already; a key that either kind
	// allows is not refused again.
	var either []string
	for _, m := range sv.members {
		if isKindKey(m.key) {
			either = append(either, kindKeys[Kind(m.key)]...)
		}
	}
	for _, m := range sv.members {
		if m.key == "id" || isKindKey(m.key) || !contains(stepKeys, m.key) || contains(either, m.key) {
			continue
		}
		switch {
		case m.key == "next" && s.Kind == KindFinish:
			v.is.add(m.keyLine, m.keyCol, "%s.next: a finish has no next", path)
		default:
			v.is.add(m.keyLine, m.keyCol, "%s.%s: not allowed on %s step (only on %s)", path, m.key, aKind(s.Kind), keyHome[m.key])
		}
	}
	kindVal := sv.get(string(s.Kind))

	switch s.Kind {
	case KindTask, KindApprove:
		if sv.get("person") == nil {
			v.is.at(sv, "%s.person: required on %s step", path, aKind(s.Kind))
		}
	case KindWaitUntil:
		if kindVal.kind == jsonString && s.Text != "" {
			v.path(kindVal, path+".wait_until", s.Text, TypeDatetime)
		}
	case KindWaitFor:
		if kindVal.kind == jsonString && s.Text != "" && !ValidStepID(s.Text) {
			v.is.at(kindVal, "%s.wait_for: an event name must match %s", path, stepIDPattern)
		}
		if s.OnTimeout != "" && s.Timeout == nil && sv.get("timeout") == nil {
			m := sv.member("on_timeout")
			v.is.add(m.keyLine, m.keyCol, "%s.on_timeout: needs timeout", path)
		}
		if !v.offer.HasTool(ToolSendEvent) {
			v.is.at(kindVal, "%s.wait_for: needs the send_event tool, which this server does not offer", path)
		}
	case KindParallel:
		v.branches(i, s, kindVal)
	case KindProcess:
		v.processStep(i, s, kindVal)
	}

	if pv := sv.get("person"); pv != nil && pv.kind == jsonString && s.Person != "" && contains(allowed, "person") {
		v.person(pv, path+".person", s.Person)
	}
	if ev := sv.get("evidence"); ev != nil && ev.kind == jsonArray && contains(allowed, "evidence") {
		v.evidence(ev, path+".evidence")
	}
	if nv := sv.get("next"); nv != nil && contains(allowed, "next") {
		v.next(i, s, nv, path+".next")
	}
	if rv := sv.get("on_reject"); rv != nil && rv.kind == jsonString && contains(allowed, "on_reject") {
		v.target(rv, path+".on_reject", s.OnReject, false)
	}
	if tv := sv.get("on_timeout"); tv != nil && tv.kind == jsonString && contains(allowed, "on_timeout") {
		v.target(tv, path+".on_timeout", s.OnTimeout, true)
	}
	if cm := sv.member("check"); cm != nil && contains(allowed, "check") && !v.offer.HasProfile(ProfileCheck) {
		v.is.add(cm.keyLine, cm.keyCol, "%s.check: needs the check-1 profile, which this server does not offer (it needs an evaluator)", path)
	}
	if am := sv.member("advisory"); am != nil && contains(allowed, "advisory") && sv.get("check") == nil {
		v.is.add(am.keyLine, am.keyCol, "%s.advisory: allowed only beside check", path)
	}
	if tm := sv.member("tools"); tm != nil && contains(allowed, "tools") {
		v.tools(i, s, tm)
	}
}

// branches checks a parallel step's entries; the branch rules are graph.go's.
func (v *validator) branches(i int, s *Step, pv *fmValue) {
	path := stepPath(i) + ".parallel"
	if !v.offer.HasProfile(ProfileParallel) {
		v.is.at(pv, "%s: needs the parallel-1 profile, which this server does not offer", path)
	}
	if pv.kind != jsonArray {
		return
	}
	if len(pv.arr) < 2 {
		v.is.at(pv, "%s: needs two or more branch entries", path)
	}
	seen := map[string]bool{}
	for j, e := range pv.arr {
		if e.kind != jsonString {
			continue
		}
		p := indexPath(path, j)
		switch {
		case seen[e.str]:
			v.is.at(e, "%s: %q is listed twice", p, e.str)
		case e.str == s.ID:
			v.is.at(e, "%s: a parallel step cannot be its own branch", p)
		default:
			v.target(e, p, e.str, false)
		}
		seen[e.str] = true
	}
}

// target checks that a reference names a step; join is accepted where
// joinOK (next and on_timeout) and the process has a parallel step, and the
// graph then checks it is inside a branch.
func (v *validator) target(at *fmValue, path, id string, joinOK bool) bool {
	if id == Join && v.hasParallel {
		if !joinOK {
			v.is.at(at, "%s: join is allowed only in next and on_timeout", path)
			return false
		}
		return true
	}
	if _, ok := v.ids[id]; ok {
		return true
	}
	if id == Join && joinOK {
		v.is.at(at, "%s: unknown step %q (join ends a branch, and this process has no parallel step)", path, id)
		return false
	}
	v.is.at(at, "%s: unknown step %q", path, id)
	return false
}

// next checks a step's next: targets exist, a list has two or more routes,
// only agent and task choose from a list, and no route is listed twice.
func (v *validator) next(i int, s *Step, nv *fmValue, path string) {
	switch nv.kind {
	case jsonString:
		v.target(nv, path, s.Next[0].To, true)
		return
	case jsonArray:
	default:
		return
	}
	if s.Kind != KindAgent && s.Kind != KindTask {
		v.is.at(nv, "%s: a list of routes is allowed only on agent and task steps; %s step names one next", path, aKind(s.Kind))
	}
	if len(nv.arr) < 2 {
		v.is.at(nv, "%s: a list needs two or more routes; name a single next as a step id", path)
	}
	seen := map[string]bool{}
	for j, e := range nv.arr {
		p := indexPath(path, j)
		at := e
		if e.kind == jsonObject {
			at = e.get("to")
			p += ".to"
		}
		if at == nil || at.kind != jsonString {
			continue
		}
		if seen[at.str] {
			v.is.at(at, "%s: %q is listed twice", p, at.str)
			continue
		}
		seen[at.str] = true
		v.target(at, p, at.str, true)
	}
}

// evidence checks evidence kinds and that file evidence can be uploaded.
func (v *validator) evidence(ev *fmValue, path string) {
	seen := map[string]bool{}
	for j, e := range ev.arr {
		if e.kind != jsonString {
			continue
		}
		p := indexPath(path, j)
		switch {
		case e.str != "file" && e.str != "link":
			v.is.at(e, "%s: unknown evidence kind %q (file or link)", p, e.str)
		case seen[e.str]:
			v.is.at(e, "%s: %q is listed twice", p, e.str)
		case e.str == "file" && !v.offer.HasTool(ToolUpload):
			v.is.at(e, "%s: file evidence needs the upload tool, which this server does not offer", p)
		}
		seen[e.str] = true
	}
}

// person checks a person value: a role name, initiator, or a path naming a
// declared person field.
func (v *validator) person(at *fmValue, path, who string) {
	if who == "initiator" || !IsPath(who) {
		return
	}
	v.path(at, path, who, TypePerson)
}

// path checks a run-data path, inputs.<field> or steps.<id>.output.<field>,
// naming a declared field of type want.
func (v *validator) path(at *fmValue, key, path string, want Type) {
	if f := v.pathField(at, key, path); f != nil && f.Type != want {
		v.is.at(at, "%s: %s is a %s field; it must be a %s field", key, path, f.Type, want)
	}
}
