package mermaid

import "github.com/baton-run/baton/interpreter"

// Graph is the chart Flowchart draws, as nodes and edges, for a rendering
// other than Mermaid's (the inbox draws it as SVG).
type Graph struct {
	Nodes []Node
	Edges []Edge
}

// Node is one node of the chart: the start, a step, a parallel step's
// join, or the end a rejection leads to.
type Node struct {
	// ID is the node's id in the chart.
	ID string
	// Step is the step it stands for ("" for start, a join or the
	// rejected end); Parallel, for a join, the parallel step it joins.
	Step     string
	Parallel string
	// Class is the node's class: the step's kind, or start, join,
	// rejected.
	Class string
	// Label is the node's text, one entry a line.
	Label []string
	// Branch is the entry step of the parallel branch the node is in, or
	// "".
	Branch string
}

// EdgeKind says what an edge stands for.
type EdgeKind string

// The edge kinds.
const (
	EdgeNext    EdgeKind = "next"
	EdgeReject  EdgeKind = "reject"
	EdgeTimeout EdgeKind = "timeout"
	// EdgeOutcome is a process step's on_outcome route.
	EdgeOutcome EdgeKind = "outcome"
)

// Edge is one edge of the chart, between node ids.
type Edge struct {
	From, To string
	Label    string
	Kind     EdgeKind
}

// Chart returns the graph Flowchart draws for p with opts (nil for the
// defaults): the same nodes, labels and edges, in the same order.
func Chart(p *interpreter.Process, opts *Options) Graph {
	if opts == nil {
		opts = &Options{}
	}
	c := &chart{p: p, opts: *opts, ids: nodeIDs(p), branch: branches(p), used: map[string]bool{}}
	g := Graph{Nodes: []Node{{ID: "start", Class: "start", Label: []string{"start"}}}}
	entry := map[string]string{}
	for _, s := range p.Steps {
		if s.Kind != interpreter.KindParallel {
			continue
		}
		for _, e := range s.Branches {
			for _, m := range c.members(s.ID, e) {
				entry[m] = e
			}
		}
	}
	rejected := false
	for _, s := range p.Steps {
		g.Nodes = append(g.Nodes, Node{ID: c.ids[s.ID], Step: s.ID, Class: string(s.Kind), Label: c.label(s), Branch: entry[s.ID]})
		if s.Kind == interpreter.KindParallel {
			g.Nodes = append(g.Nodes, Node{ID: c.joinID(s.ID), Parallel: s.ID, Class: "join", Label: []string{"join"}})
		}
		if s.Kind == interpreter.KindApprove && s.OnReject == "" {
			rejected = true
		}
	}
	if rejected {
		g.Nodes = append(g.Nodes, Node{ID: rejectedEnd, Class: "rejected", Label: []string{"outcome: rejected"}})
	}
	c.collectEdges()
	for _, e := range c.edges {
		k := EdgeNext
		switch e.kind {
		case edgeReject:
			k = EdgeReject
		case edgeTimeout:
			k = EdgeTimeout
		case edgeOutcome:
			k = EdgeOutcome
		}
		g.Edges = append(g.Edges, Edge{From: e.from, To: e.to, Label: e.label, Kind: k})
	}
	return g
}
