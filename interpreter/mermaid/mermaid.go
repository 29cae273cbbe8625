// Package mermaid draws a process as a Mermaid flowchart, for reviews and
// docs (`baton map`).
//
// It is a pure function of a parsed *interpreter.Process, like the
// interpreter itself: no I/O, so the workflow could embed a map in a run's
// details too. It lives beside the interpreter rather than in it because it
// is presentation, not semantics.
//
// The chart shows:
//
//   - every step as one node, its shape and class by kind: agent a
//     rectangle, task a rounded box, approve a rhombus, wait and wait_until a
//     hexagon, wait_for a flag, finish a stadium naming the outcome, parallel
//     a trapezoid, process a subroutine box; the label gives the step id, who or what it waits for,
//     due, timeout, check questions and tools;
//   - next routes as solid arrows, labelled with their when text, an
//     approval's next labelled "approved";
//   - on_reject as dashed arrows labelled "rejected", and an approval
//     without on_reject dashed to an end node with outcome rejected;
//   - on_timeout as dashed arrows labelled with the timeout (a wait_for
//     with a timeout and no on_timeout labels its next "event or timeout");
//   - each parallel branch as a subgraph, its join edges to a join node
//     from which the parallel step's next leaves;
//   - a process step (baton-subprocess-1) as a sub-process node naming
//     the child, its bound version when known, and for_each and
//     concurrency; its on_outcome routes as dashed arrows labelled with
//     the outcome.
//
// Step ids are not used as Mermaid node ids (a step may be called "end",
// which Mermaid reserves): nodes are "st_" and the id with dashes as
// underscores.
package mermaid

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/baton-run/baton/interpreter"
)

// The classes, one per kind plus the chart's own nodes, in the order they
// are defined.
var classDefs = []struct{ name, style string }{
	{"start", "fill:#f3f4f6,stroke:#6b7280"},
	{"agent", "fill:#dbeafe,stroke:#1d4ed8"},
	{"task", "fill:#dcfce7,stroke:#15803d"},
	{"approve", "fill:#fef9c3,stroke:#a16207"},
	{"wait", "fill:#f3e8ff,stroke:#7e22ce"},
	{"wait_until", "fill:#f3e8ff,stroke:#7e22ce"},
	{"wait_for", "fill:#f3e8ff,stroke:#7e22ce"},
	{"parallel", "fill:#e0f2fe,stroke:#0369a1"},
	{"process", "fill:#fce7f3,stroke:#be185d"},
	{"join", "fill:#e0f2fe,stroke:#0369a1"},
	{"finish", "fill:#e5e7eb,stroke:#111827,stroke-width:2px"},
	{"rejected", "fill:#fee2e2,stroke:#b91c1c,stroke-width:2px"},
}

// Edge colours by what the edge is; next edges keep Mermaid's default.
const (
	rejectStyle  = "stroke:#b91c1c"
	timeoutStyle = "stroke:#c2410c"
	outcomeStyle = "stroke:#be185d"
)

type edgeKind int

const (
	edgeNext edgeKind = iota
	edgeReject
	edgeTimeout
	edgeOutcome
)

type edge struct {
	from, to, label string
	kind            edgeKind
}

// Options adjusts Flowchart.
type Options struct {
	// Children are the process steps' bindings of a published version;
	// a process node then names the bound version. Default nil: the
	// version as written, or none.
	Children interpreter.Bindings
}

type chart struct {
	p      *interpreter.Process
	opts   Options
	ids    map[string]string // step id -> node id
	branch map[string]string // branch step id -> its parallel step id
	b      strings.Builder
	edges  []edge
	used   map[string]bool // classes given to a node
}

// rejectedEnd is the node an approval without on_reject goes to.
const rejectedEnd = "rejected_end"

// Flowchart returns the Mermaid flowchart of p, which must have been
// parsed and validated (interpreter.Parse), ending with a newline.
func Flowchart(p *interpreter.Process, opts *Options) string {
	if opts == nil {
		opts = &Options{}
	}
	c := &chart{p: p, opts: *opts, ids: nodeIDs(p), branch: branches(p), used: map[string]bool{}}
	fmt.Fprintf(&c.b, "---\ntitle: %s\n---\nflowchart TD\n", p.Name)
	c.def(1, "start", "((", quote("start"), "))", "start")
	c.nodes()
	c.collectEdges()
	c.writeEdges()
	for _, cd := range classDefs {
		if c.used[cd.name] {
			c.line(1, "classDef "+cd.name+" "+cd.style)
		}
	}
	return c.b.String()
}

// def writes a node definition: id, shape around the label, class.
func (c *chart) def(indent int, id, left, label, right, class string) {
	c.used[class] = true
	c.line(indent, id+left+label+right+":::"+class)
}

func (c *chart) line(indent int, s string) {
	c.b.WriteString(strings.Repeat("  ", indent))
	c.b.WriteString(s)
	c.b.WriteByte('\n')
}

// nodeIDs gives every step a Mermaid node id.
func nodeIDs(p *interpreter.Process) map[string]string {
	ids := map[string]string{}
	used := map[string]bool{"start": true, rejectedEnd: true}
	for i, s := range p.Steps {
		id := "st_" + strings.ReplaceAll(s.ID, "-", "_")
		if used[id] {
			id += "_" + strconv.Itoa(i)
		}
		used[id] = true
		ids[s.ID] = id
	}
	return ids
}

// branches maps every step inside a parallel branch to its parallel step:
// the entries and what they reach along next and on_timeout, up to join.
func branches(p *interpreter.Process) map[string]string {
	in := map[string]string{}
	for _, s := range p.Steps {
		if s.Kind != interpreter.KindParallel {
			continue
		}
		todo := append([]string(nil), s.Branches...)
		for len(todo) > 0 {
			id := todo[0]
			todo = todo[1:]
			st := p.Step(id)
			if id == interpreter.Join || st == nil || in[id] != "" {
				continue
			}
			in[id] = s.ID
			for _, r := range p.NextOf(st) {
				todo = append(todo, r.To)
			}
			if st.OnTimeout != "" {
				todo = append(todo, st.OnTimeout)
			}
		}
	}
	return in
}

func (c *chart) joinID(parallel string) string {
	return "join_" + strings.TrimPrefix(c.ids[parallel], "st_")
}

// nodes writes every node: steps in order, each parallel step followed by
// one subgraph per branch and its join node.
func (c *chart) nodes() {
	rejected := false
	for _, s := range c.p.Steps {
		if s.Kind == interpreter.KindApprove && s.OnReject == "" {
			rejected = true
		}
		if c.branch[s.ID] != "" {
			continue // written inside its branch's subgraph
		}
		c.node(1, s)
		if s.Kind != interpreter.KindParallel {
			continue
		}
		for _, entry := range s.Branches {
			c.line(1, fmt.Sprintf(`subgraph %s ["branch %s"]`, "br_"+strings.TrimPrefix(c.ids[entry], "st_"), entry))
			members := c.members(s.ID, entry)
			for _, m := range members {
				c.node(2, c.p.Step(m))
			}
			c.line(1, "end")
		}
		c.def(1, c.joinID(s.ID), `[\`, quote("join"), "/]", "join")
	}
	if rejected {
		c.def(1, rejectedEnd, "([", quote("outcome: rejected"), "])", "rejected")
	}
}

// members returns the steps of the branch entered at entry, in step order.
func (c *chart) members(parallel, entry string) []string {
	seen := map[string]bool{}
	todo := []string{entry}
	for len(todo) > 0 {
		id := todo[0]
		todo = todo[1:]
		st := c.p.Step(id)
		if st == nil || seen[id] || c.branch[id] != parallel {
			continue
		}
		seen[id] = true
		for _, r := range c.p.NextOf(st) {
			todo = append(todo, r.To)
		}
		if st.OnTimeout != "" {
			todo = append(todo, st.OnTimeout)
		}
	}
	var out []string
	for _, s := range c.p.Steps {
		if seen[s.ID] {
			out = append(out, s.ID)
		}
	}
	return out
}

// node writes one step's node.
func (c *chart) node(indent int, s *interpreter.Step) {
	left, right := "[", "]"
	switch s.Kind {
	case interpreter.KindTask:
		left, right = "(", ")"
	case interpreter.KindApprove:
		left, right = "{", "}"
	case interpreter.KindWait, interpreter.KindWaitUntil:
		left, right = "{{", "}}"
	case interpreter.KindWaitFor:
		left = ">"
	case interpreter.KindFinish:
		left, right = "([", "])"
	case interpreter.KindParallel:
		left, right = "[/", `\]`
	case interpreter.KindProcess:
		left, right = "[[", "]]"
	}
	c.def(indent, c.ids[s.ID], left, quote(c.label(s)...), right, string(s.Kind))
}

// label returns the lines of a step's label, unescaped.
func (c *chart) label(s *interpreter.Step) []string {
	lines := []string{s.ID}
	switch s.Kind {
	case interpreter.KindAgent, interpreter.KindParallel:
		lines = append(lines, string(s.Kind))
	case interpreter.KindTask, interpreter.KindApprove:
		lines = append(lines, string(s.Kind)+" · "+s.Person)
	case interpreter.KindWait:
		lines = append(lines, "wait "+s.Text)
	case interpreter.KindWaitUntil:
		lines = append(lines, "wait until "+s.Text)
	case interpreter.KindWaitFor:
		lines = append(lines, "wait for "+s.Text)
		if s.Timeout != nil {
			lines = append(lines, "timeout "+s.Timeout.Text)
		}
	case interpreter.KindFinish:
		lines = append(lines, "outcome: "+s.Text)
	case interpreter.KindProcess:
		lines = append(lines, c.processLines(s)...)
	}
	if s.Due != nil {
		lines = append(lines, "due "+s.Due.Text)
	}
	if s.Check != nil {
		n := len(s.Check.Questions)
		lines = append(lines, fmt.Sprintf("check: %d question%s", n, plural(n)))
	}
	if len(s.Tools) > 0 {
		refs := make([]string, len(s.Tools))
		for i, u := range s.Tools {
			refs[i] = u.Ref
		}
		lines = append(lines, "tools: "+strings.Join(refs, ", "))
	}
	return lines
}

// processLines are a process step's label lines: the child and its
// version, for_each and concurrency.
func (c *chart) processLines(s *interpreter.Step) []string {
	child := "process · " + s.Text
	if b, ok := c.opts.Children.For(s.ID); ok && b.Version > 0 {
		child += " v" + strconv.Itoa(b.Version)
	} else if s.Call != nil && s.Call.Version > 0 {
		child += " v" + strconv.Itoa(s.Call.Version)
	}
	lines := []string{child}
	if s.Call != nil && s.Call.ForEach != "" {
		lines = append(lines, "for each "+s.Call.ForEach)
		if s.Call.Concurrency > 0 {
			lines = append(lines, fmt.Sprintf("at most %d at once", s.Call.Concurrency))
		}
	}
	return lines
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// collectEdges gathers the edges in step order: start, then each step's
// next routes, on_timeout, on_outcome and on_reject.
func (c *chart) collectEdges() {
	if len(c.p.Steps) > 0 {
		c.edges = append(c.edges, edge{from: "start", to: c.ids[c.p.Steps[0].ID]})
	}
	for _, s := range c.p.Steps {
		from := c.ids[s.ID]
		if s.Kind == interpreter.KindParallel {
			for _, entry := range s.Branches {
				c.edges = append(c.edges, edge{from: from, to: c.ids[entry]})
			}
			from = c.joinID(s.ID) // the parallel step continues once all joined
		}
		for _, r := range c.p.NextOf(s) {
			c.edges = append(c.edges, edge{from: from, to: c.target(s, r.To), label: c.nextLabel(s, r)})
		}
		if s.OnTimeout != "" {
			c.edges = append(c.edges, edge{from: from, to: c.target(s, s.OnTimeout), label: "timeout " + s.Timeout.Text, kind: edgeTimeout})
		}
		if s.Call != nil {
			for _, r := range s.Call.OnOutcome {
				c.edges = append(c.edges, edge{from: from, to: c.ids[r.To], label: r.Outcome, kind: edgeOutcome})
			}
		}
		if s.Kind == interpreter.KindApprove {
			to := rejectedEnd
			if s.OnReject != "" {
				to = c.ids[s.OnReject]
			}
			c.edges = append(c.edges, edge{from: from, to: to, label: "rejected", kind: edgeReject})
		}
	}
}

// target is the node a route of step s names: a step, or the join of the
// branch s is in.
func (c *chart) target(s *interpreter.Step, to string) string {
	if to == interpreter.Join {
		return c.joinID(c.branch[s.ID])
	}
	return c.ids[to]
}

func (c *chart) nextLabel(s *interpreter.Step, r interpreter.Route) string {
	switch {
	case r.When != "":
		return r.When
	case s.Kind == interpreter.KindApprove:
		return "approved"
	case s.Kind == interpreter.KindWaitFor && s.Timeout != nil && s.OnTimeout == "":
		return "event or timeout " + s.Timeout.Text
	case s.Kind == interpreter.KindWaitFor && s.Timeout != nil:
		return "event"
	}
	return ""
}

// writeEdges writes the edges, then colours the reject and timeout ones
// (linkStyle counts edges in the order written).
func (c *chart) writeEdges() {
	var rejects, timeouts, outcomes []string
	for i, e := range c.edges {
		arrow := "-->"
		if e.kind != edgeNext {
			arrow = "-.->"
		}
		if e.label != "" {
			arrow += "|" + quote(wrap(e.label, 32)...) + "|"
		}
		c.line(1, e.from+" "+arrow+" "+e.to)
		switch e.kind {
		case edgeReject:
			rejects = append(rejects, strconv.Itoa(i))
		case edgeTimeout:
			timeouts = append(timeouts, strconv.Itoa(i))
		case edgeOutcome:
			outcomes = append(outcomes, strconv.Itoa(i))
		}
	}
	if len(rejects) > 0 {
		c.line(1, "linkStyle "+strings.Join(rejects, ",")+" "+rejectStyle)
	}
	if len(timeouts) > 0 {
		c.line(1, "linkStyle "+strings.Join(timeouts, ",")+" "+timeoutStyle)
	}
	if len(outcomes) > 0 {
		c.line(1, "linkStyle "+strings.Join(outcomes, ",")+" "+outcomeStyle)
	}
}

// quote returns a Mermaid quoted label of lines joined with <br/>. Within
// a line, every character Mermaid or HTML would read (quote, #, <, >, &, |,
// backquote) is written as an entity code (#NN;), and each run of white
// space becomes one space.
func quote(lines ...string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i, l := range lines {
		if i > 0 {
			b.WriteString("<br/>")
		}
		for j, w := range strings.Fields(l) {
			if j > 0 {
				b.WriteByte(' ')
			}
			for k := 0; k < len(w); k++ {
				switch ch := w[k]; ch {
				case '"', '#', '<', '>', '&', '|', '`':
					fmt.Fprintf(&b, "#%d;", ch)
				default:
					b.WriteByte(ch)
				}
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}

// wrap breaks text into lines of about width characters at spaces, so a
// long when text does not stretch the chart.
func wrap(text string, width int) []string {
	var lines []string
	cur := ""
	for _, w := range strings.Fields(text) {
		if cur != "" && len(cur)+1+len(w) > width {
			lines = append(lines, cur)
			cur = w
			continue
		}
		if cur != "" {
			cur += " "
		}
		cur += w
	}
	if cur != "" {
		lines = append(lines, cur)
	}
	return lines
}
