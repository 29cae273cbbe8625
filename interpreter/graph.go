package interpreter

import (
	"fmt"
	"strings"
)

// This file checks the step graph: reachability and acyclicity (spec §2.2,
// SPEC-DECISIONS §20), the last step's next, and the branch rules of the
// parallel profile (profile-parallel §2).
//
// Edges are next (declared, or the following step by default), on_timeout,
// on_reject, parallel entries and on_outcome. Reachability follows all of
// them. Acyclicity follows next and on_timeout only; join is not a step and
// parallel entries are exempt. on_outcome routes are rework routes, ruled
// as on_reject is (docs/profile-subprocess.md §1.4). Inside a branch the
// following-step default does not apply.
//
// "Every step in a branch reaches join" follows from the other rules (every
// branch step names next, stays in its branch, reaches no finish, and no
// cycle exists), and is also checked directly so its message is clear.

type edgeKind uint8

const (
	edgeNext     edgeKind = iota // a declared next route
	edgeDefault                  // the following step, when next is absent
	edgeTimeout                  // on_timeout
	edgeReject                   // on_reject
	edgeParallel                 // a parallel step's branch entry
	edgeOutcome                  // a process step's on_outcome route
)

// joinNode is the target of a join edge.
const joinNode = -1

type edge struct {
	from, to int
	kind     edgeKind
	at       *fmValue // where to report; the step itself for edgeDefault
	path     string
}

// rework reports whether e is a rework route: on_reject or on_outcome.
func (e *edge) rework() bool { return e.kind == edgeReject || e.kind == edgeOutcome }

type branchInfo struct {
	parallel, entry int
}

type graph struct {
	v        *validator
	steps    []*Step
	out      [][]edge
	branch   []int // index into branches, -1 outside every branch
	branches []branchInfo
	bad      map[*edge]bool // edges already refused by a branch rule
	main     []bool         // see mainFlow
}

func newGraph(v *validator) *graph {
	n := len(v.p.Steps)
	g := &graph{v: v, steps: v.p.Steps, out: make([][]edge, n), branch: make([]int, n), bad: map[*edge]bool{}}
	for i := range g.branch {
		g.branch[i] = -1
	}
	for i, s := range g.steps {
		g.edges(i, s)
	}
	return g
}

// resolve returns the node a reference names, or false when it names none
// (the validator has reported it).
func (g *graph) resolve(id string, joinOK bool) (int, bool) {
	if id == Join && g.v.hasParallel {
		return joinNode, joinOK
	}
	j, ok := g.v.ids[id]
	return j, ok
}

// edges collects step i's edges from its source, for the keys its kind
// allows.
func (g *graph) edges(i int, s *Step) {
	sv := g.v.src[i]
	path := stepPath(i)
	if sv.kind != jsonObject {
		// Already refused; assume it continues at the following step so
		// that one mistake gives one message.
		if i+1 < len(g.steps) {
			g.out[i] = append(g.out[i], edge{from: i, to: i + 1, kind: edgeDefault, at: sv, path: path})
		}
		return
	}
	allowed := kindKeys[s.Kind]
	if s.Kind == "" {
		allowed = []string{"next"} // no kind: refused already, follow its next
	}
	add := func(at *fmValue, p, id string, kind edgeKind, joinOK bool) {
		if at == nil || at.kind != jsonString {
			return
		}
		if to, ok := g.resolve(id, joinOK); ok {
			g.out[i] = append(g.out[i], edge{from: i, to: to, kind: kind, at: at, path: p})
		}
	}
	if nv := sv.get("next"); nv != nil && contains(allowed, "next") {
		switch nv.kind {
		case jsonString:
			add(nv, path+".next", nv.str, edgeNext, true)
		case jsonArray:
			seen := map[string]bool{}
			for j, e := range nv.arr {
				p := indexPath(path+".next", j)
				if e.kind == jsonObject {
					e, p = e.get("to"), p+".to"
				}
				if e != nil && e.kind == jsonString && !seen[e.str] {
					seen[e.str] = true
					add(e, p, e.str, edgeNext, true)
				}
			}
		}
	} else if s.Kind != KindFinish && sv.get("next") == nil && i+1 < len(g.steps) {
		g.out[i] = append(g.out[i], edge{from: i, to: i + 1, kind: edgeDefault, at: sv, path: path})
	}
	if contains(allowed, "on_timeout") {
		if tv := sv.get("on_timeout"); tv != nil {
			add(tv, path+".on_timeout", s.OnTimeout, edgeTimeout, true)
		}
	}
	if contains(allowed, "on_reject") {
		if rv := sv.get("on_reject"); rv != nil {
			add(rv, path+".on_reject", s.OnReject, edgeReject, false)
		}
	}
	if ov := sv.get("on_outcome"); ov != nil && ov.kind == jsonObject && contains(allowed, "on_outcome") {
		for _, m := range ov.members {
			if m.val.kind == jsonString && m.val.str != s.ID {
				add(m.val, path+".on_outcome."+quoteKey(m.key), m.val.str, edgeOutcome, false)
			}
		}
	}
	if s.Kind == KindParallel {
		if pv := sv.get("parallel"); pv != nil && pv.kind == jsonArray {
			seen := map[string]bool{}
			for j, e := range pv.arr {
				if e.kind != jsonString || seen[e.str] || e.str == s.ID {
					continue
				}
				seen[e.str] = true
				add(e, indexPath(path+".parallel", j), e.str, edgeParallel, false)
			}
		}
	}
}

// hasNext reports whether step i declares next.
func (g *graph) hasNext(i int) bool { return g.v.src[i].get("next") != nil }

// idOf names step i for messages.
func (g *graph) idOf(i int) string {
	if g.steps[i].ID == "" {
		return stepPath(i)
	}
	return g.steps[i].ID
}

// check runs every graph rule.
func (g *graph) check() {
	if len(g.steps) == 0 {
		return
	}
	if g.v.hasParallel {
		g.findBranches()
		g.branchRules()
	}
	g.lastStep()
	g.reachable()
	g.acyclic()
}

// inBranch reports whether step i is inside a branch.
func (g *graph) inBranch(i int) bool { return i >= 0 && g.branch[i] >= 0 }

// follows reports whether edge e counts for next/on_timeout walks: the
// default edge is dropped inside a branch.
func (g *graph) follows(e *edge) bool {
	switch e.kind {
	case edgeNext, edgeTimeout:
		return true
	case edgeDefault:
		return !g.inBranch(e.from)
	}
	return false
}

// mainFlow marks the steps reachable from the first step along next and
// on_timeout edges without entering a branch through a parallel step: the
// steps outside every branch, as far as routes from inside one can tell.
func (g *graph) mainFlow() []bool {
	main := make([]bool, len(g.steps))
	main[0] = true
	queue := []int{0}
	for len(queue) > 0 {
		u := queue[0]
		queue = queue[1:]
		for k := range g.out[u] {
			e := &g.out[u][k]
			if e.rework() || e.kind == edgeParallel || e.to == joinNode || main[e.to] {
				continue
			}
			main[e.to] = true
			queue = append(queue, e.to)
		}
	}
	return main
}

// findBranches computes each branch: its entry and every step reachable
// from it along declared next and on_timeout edges, stopping at join and at
// steps of the main flow.
func (g *graph) findBranches() {
	g.main = g.mainFlow()
	twice := map[int]bool{}
	for p, s := range g.steps {
		if s.Kind != KindParallel {
			continue
		}
		for k := range g.out[p] {
			e := &g.out[p][k]
			if e.kind != edgeParallel {
				continue
			}
			if !g.mayJoinBranch(e, p) {
				continue
			}
			b := len(g.branches)
			g.branches = append(g.branches, branchInfo{parallel: p, entry: e.to})
			if g.branch[e.to] >= 0 {
				twice[e.to] = true
				continue
			}
			g.branch[e.to] = b
			queue := []int{e.to}
			for len(queue) > 0 {
				u := queue[0]
				queue = queue[1:]
				for k := range g.out[u] {
					f := &g.out[u][k]
					if (f.kind != edgeNext && f.kind != edgeTimeout) || f.to == joinNode {
						continue
					}
					if !g.mayJoinBranch(f, p) {
						continue
					}
					if g.main[f.to] && g.branch[f.to] != b {
						g.bad[f] = true
						g.v.is.at(f.at, "%s: a branch step cannot route to %q, which is outside its branch", f.path, g.idOf(f.to))
						continue
					}
					switch {
					case g.branch[f.to] < 0:
						g.branch[f.to] = b
						queue = append(queue, f.to)
					case g.branch[f.to] != b:
						twice[f.to] = true
					}
				}
			}
		}
	}
	for i := range g.steps {
		if twice[i] {
			g.v.is.at(g.v.src[i], "%s: step %q is in two branches; a step belongs to one branch", stepPath(i), g.idOf(i))
		}
	}
}

// mayJoinBranch reports whether the target of e (an entry or a route out of
// a branch step of parallel step p) can be a branch step, refusing a route
// to the parallel step, to a finish or to another parallel step.
func (g *graph) mayJoinBranch(e *edge, p int) bool {
	t := g.steps[e.to]
	var why string
	switch {
	case e.to == p:
		why = fmt.Sprintf("a branch step cannot route to its parallel step %q", t.ID)
	case t.Kind == KindFinish && e.kind == edgeParallel:
		why = fmt.Sprintf("a branch cannot start at a finish (%q); a branch ends with join", t.ID)
	case t.Kind == KindFinish:
		why = fmt.Sprintf("a branch step cannot route to a finish (%q); end the branch with join", t.ID)
	case t.Kind == KindParallel:
		why = fmt.Sprintf("a branch cannot contain a parallel step (%q); parallel-1 has no nesting", t.ID)
	default:
		return true
	}
	if !g.bad[e] {
		g.bad[e] = true
		g.v.is.at(e.at, "%s: %s", e.path, why)
	}
	return false
}

// branchRules checks what goes in and out of branches.
func (g *graph) branchRules() {
	if g.inBranch(0) {
		g.v.is.at(g.v.src[0], "steps[0]: the first step cannot be inside a branch")
	}
	last := len(g.steps) - 1
	for i := range g.steps {
		if g.inBranch(i) {
			if !g.hasNext(i) && i != last {
				g.v.is.at(g.v.src[i], "%s: a step inside a branch must name next: a step of its branch, or join", stepPath(i))
			}
			for k := range g.out[i] {
				e := &g.out[i][k]
				if e.rework() && g.branch[e.to] != g.branch[i] {
					g.v.is.at(e.at, "%s: must name a step in the same branch", e.path)
				}
			}
			if g.hasNext(i) && !g.reachesJoin(i, map[int]int{}) {
				g.v.is.at(g.v.src[i], "%s: step %q never reaches join", stepPath(i), g.idOf(i))
			}
			continue
		}
		for k := range g.out[i] {
			e := &g.out[i][k]
			switch {
			case e.kind == edgeParallel || g.bad[e]:
			case e.to == joinNode:
				g.v.is.at(e.at, "%s: join is allowed only inside a parallel branch", e.path)
			case !g.inBranch(e.to) && e.kind == edgeReject && g.afterJoin(i) && !g.forward(e.to)[i]:
				g.v.is.at(e.at, "%s: %q does not come before %q; after a parallel step, on_reject returns to the parallel step or a step before the rejecting one",
					e.path, g.idOf(e.to), g.idOf(i))
			case !g.inBranch(e.to):
			case e.rework():
				g.v.is.at(e.at, "%s: %q is inside a branch of %q; return to the parallel step to run every branch again",
					e.path, g.idOf(e.to), g.idOf(g.branches[g.branch[e.to]].parallel))
			case e.kind == edgeDefault:
				g.v.is.at(e.at, "%s: without next it continues at %q, which is inside a branch of %q; name next",
					e.path, g.idOf(e.to), g.idOf(g.branches[g.branch[e.to]].parallel))
			default:
				g.v.is.at(e.at, "%s: %q is inside a branch of %q; only the parallel step starts a branch",
					e.path, g.idOf(e.to), g.idOf(g.branches[g.branch[e.to]].parallel))
			}
		}
	}
}

// forward marks the steps that a walk from step i reaches along next and
// on_timeout edges outside every branch, a parallel step continuing at its
// own next: the steps that come after i (SPEC-DECISIONS §34).
func (g *graph) forward(i int) []bool {
	seen := make([]bool, len(g.steps))
	queue := []int{i}
	for len(queue) > 0 {
		u := queue[0]
		queue = queue[1:]
		for k := range g.out[u] {
			e := &g.out[u][k]
			if !g.follows(e) || e.to == joinNode || g.inBranch(e.to) || seen[e.to] {
				continue
			}
			seen[e.to] = true
			queue = append(queue, e.to)
		}
	}
	return seen
}

// afterJoin reports whether step i comes after some parallel step's join.
func (g *graph) afterJoin(i int) bool {
	for p, s := range g.steps {
		if s.Kind == KindParallel && g.forward(p)[i] {
			return true
		}
	}
	return false
}

// reachesJoin reports whether some walk from branch step i along next and
// on_timeout reaches join. A route already refused counts as reaching it,
// so one mistake gives one message.
func (g *graph) reachesJoin(i int, memo map[int]int) bool {
	switch memo[i] {
	case 1:
		return false // on the current walk: a cycle
	case 2:
		return true
	case 3:
		return false
	}
	memo[i] = 1
	ok := false
	for k := range g.out[i] {
		e := &g.out[i][k]
		if e.kind != edgeNext && e.kind != edgeTimeout {
			continue
		}
		if e.to == joinNode || g.bad[e] || g.branch[e.to] != g.branch[i] || g.reachesJoin(e.to, memo) {
			ok = true
			break
		}
	}
	if ok {
		memo[i] = 2
	} else {
		memo[i] = 3
	}
	return ok
}

// lastStep refuses a last step that is neither a finish nor names next.
func (g *graph) lastStep() {
	i := len(g.steps) - 1
	s := g.steps[i]
	if s.Kind != "" && s.Kind != KindFinish && g.v.src[i].kind == jsonObject && !g.hasNext(i) {
		g.v.is.at(g.v.src[i], "%s: the last step must name next, or be a finish", stepPath(i))
	}
}

// reachable refuses steps that no walk from the first step reaches.
func (g *graph) reachable() {
	seen := make([]bool, len(g.steps))
	seen[0] = true
	queue := []int{0}
	for len(queue) > 0 {
		u := queue[0]
		queue = queue[1:]
		for k := range g.out[u] {
			e := &g.out[u][k]
			if e.to == joinNode || seen[e.to] || (e.kind == edgeDefault && g.inBranch(u)) {
				continue
			}
			seen[e.to] = true
			queue = append(queue, e.to)
		}
	}
	for i, s := range g.steps {
		if seen[i] || g.v.src[i].kind != jsonObject {
			continue
		}
		if j, ok := g.v.ids[s.ID]; !ok || j != i {
			continue // a bad or duplicate id is reported already
		}
		g.v.is.at(g.v.src[i], "%s: step %q is not reachable from the first step", stepPath(i), s.ID)
	}
}

// acyclic refuses every next or on_timeout edge that closes a cycle.
func (g *graph) acyclic() {
	const (
		white = iota
		grey
		black
	)
	color := make([]int, len(g.steps))
	at := make([]int, len(g.steps)) // a grey step's place on the stack
	var stack []int
	var visit func(u int)
	visit = func(u int) {
		color[u] = grey
		at[u] = len(stack)
		stack = append(stack, u)
		for k := range g.out[u] {
			e := &g.out[u][k]
			if !g.follows(e) || e.to == joinNode {
				continue
			}
			switch color[e.to] {
			case white:
				visit(e.to)
			case grey:
				g.cycle(e, stack[at[e.to]:])
			}
		}
		stack = stack[:len(stack)-1]
		color[u] = black
	}
	for i := range g.steps {
		if color[i] == white {
			visit(i)
		}
	}
}

// maxCycleShown bounds how many steps a cycle message names.
const maxCycleShown = 8

// cycle reports edge e, which goes back to the first step of loop, the walk
// from there to e's step.
func (g *graph) cycle(e *edge, loop []int) {
	var ids []string
	add := func(steps []int) {
		for _, s := range steps {
			ids = append(ids, g.idOf(s))
		}
	}
	if len(loop) > maxCycleShown {
		add(loop[:maxCycleShown/2])
		ids = append(ids, "…")
		add(loop[len(loop)-maxCycleShown/2:])
	} else {
		add(loop)
	}
	ids = append(ids, g.idOf(e.to))
	cyc := strings.Join(ids, " → ")
	if e.kind == edgeDefault {
		g.v.is.at(e.at, "%s: without next it continues at %q, which closes a cycle %s; only on_reject may go back", e.path, g.idOf(e.to), cyc)
		return
	}
	g.v.is.at(e.at, "%s: %q closes a cycle %s; only on_reject may go back", e.path, g.idOf(e.to), cyc)
}
