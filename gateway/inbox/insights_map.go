package inbox

import (
	"fmt"
	"html/template"
	"sort"
	"strings"

	"github.com/baton-run/baton/internal/insights"
	"github.com/baton-run/baton/interpreter"
	"github.com/baton-run/baton/interpreter/mermaid"
)

// The process map of the insights page: the graph baton map draws
// (mermaid.Chart), laid out here in layers from the start down and drawn
// as inline SVG, so the page loads nothing and runs no script. Each step
// shows its open and overdue work now, each edge how many attempts took
// it in the window.

const (
	mapNodeWidth = 180
	mapLineH     = 16
	mapGapX      = 36
	mapGapY      = 56
	mapPad       = 24
	mapBackGap   = 22 // between the lanes of edges that go back up
)

// mapFills are the node colours, those of baton map's classes.
var mapFills = map[string][2]string{
	"start": {"#f3f4f6", "#6b7280"}, "agent": {"#dbeafe", "#1d4ed8"}, "task": {"#dcfce7", "#15803d"},
	"approve": {"#fef9c3", "#a16207"}, "wait": {"#f3e8ff", "#7e22ce"}, "wait_until": {"#f3e8ff", "#7e22ce"},
	"wait_for": {"#f3e8ff", "#7e22ce"}, "parallel": {"#e0f2fe", "#0369a1"}, "join": {"#e0f2fe", "#0369a1"},
	"finish": {"#e5e7eb", "#111827"}, "rejected": {"#fee2e2", "#b91c1c"}, "process": {"#fce7f3", "#be185d"},
}

type mapNode struct {
	mermaid.Node
	layer, order int
	x, y, w, h   int
	open, over   int
	hasFigures   bool
}

// processMap draws p's chart with the report's counts as SVG.
func processMap(p *interpreter.Process, r *insights.Report) template.HTML {
	g := mermaid.Chart(p, nil)
	nodes := make([]*mapNode, len(g.Nodes))
	byID := map[string]*mapNode{}
	for i, n := range g.Nodes {
		nodes[i] = &mapNode{Node: n, order: i}
		byID[n.ID] = nodes[i]
		if s := r.Step(n.Step); s != nil {
			nodes[i].open, nodes[i].over, nodes[i].hasFigures = s.Open.Total(), s.Open.Overdue, true
		}
	}
	back := backEdges(g, byID)
	layerNodes(g, nodes, byID, back)
	w, h := placeNodes(nodes)

	var b strings.Builder
	lanes := 0
	for i := range g.Edges {
		if back[i] {
			lanes++
		}
	}
	width := w + lanes*mapBackGap + mapPad
	fmt.Fprintf(&b, `<svg class="map" role="img" aria-label="Map of process %s" viewBox="0 0 %d %d" width="%d" height="%d" xmlns="http://www.w3.org/2000/svg">`,
		esc(p.Name), width, h, width, h)
	b.WriteString(`<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0,0L10,5L0,10z" fill="#555"/></marker></defs>`)
	lane := 0
	for i, e := range g.Edges {
		from, to := byID[e.From], byID[e.To]
		if from == nil || to == nil {
			continue
		}
		n := edgeCount(e, from, to, p, r)
		drawEdge(&b, e, from, to, n, back[i], w+lane*mapBackGap+mapBackGap/2)
		if back[i] {
			lane++
		}
	}
	for _, n := range nodes {
		drawNode(&b, n)
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String()) //nolint:gosec // every text in it went through esc
}

// backEdges marks the edges that go back to a node on the way to them
// from the start (rework, loops): they are drawn beside the chart.
func backEdges(g mermaid.Graph, byID map[string]*mapNode) map[int]bool {
	out := map[string][]int{}
	for i, e := range g.Edges {
		out[e.From] = append(out[e.From], i)
	}
	back := map[int]bool{}
	state := map[string]int{} // 1 on the path, 2 done
	var visit func(id string)
	visit = func(id string) {
		state[id] = 1
		for _, i := range out[id] {
			to := g.Edges[i].To
			switch state[to] {
			case 1:
				back[i] = true
			case 0:
				if byID[to] != nil {
					visit(to)
				}
			}
		}
		state[id] = 2
	}
	visit("start")
	for _, n := range g.Nodes {
		if state[n.ID] == 0 {
			visit(n.ID)
		}
	}
	return back
}

// layerNodes puts each node one layer below the lowest node with a
// forward edge into it, and orders each layer by where its nodes'
// predecessors are.
func layerNodes(g mermaid.Graph, nodes []*mapNode, byID map[string]*mapNode, back map[int]bool) {
	for changed, rounds := true, 0; changed && rounds <= len(nodes); rounds++ {
		changed = false
		for i, e := range g.Edges {
			from, to := byID[e.From], byID[e.To]
			if back[i] || from == nil || to == nil {
				continue
			}
			if to.layer < from.layer+1 {
				to.layer, changed = from.layer+1, true
			}
		}
	}
	pred := map[string][]string{}
	for i, e := range g.Edges {
		if !back[i] {
			pred[e.To] = append(pred[e.To], e.From)
		}
	}
	layers := map[int][]*mapNode{}
	maxLayer := 0
	for _, n := range nodes {
		layers[n.layer] = append(layers[n.layer], n)
		maxLayer = max(maxLayer, n.layer)
	}
	for l := 0; l <= maxLayer; l++ {
		row := layers[l]
		center := map[*mapNode]float64{}
		for _, n := range row {
			sum, k := 0.0, 0
			for _, p := range pred[n.ID] {
				if pn := byID[p]; pn != nil && pn.layer < l {
					sum += float64(pn.order)
					k++
				}
			}
			center[n] = float64(n.order)
			if k > 0 {
				center[n] = sum / float64(k)
			}
		}
		sort.SliceStable(row, func(i, j int) bool { return center[row[i]] < center[row[j]] })
		for i, n := range row {
			n.order = i
		}
	}
}

// placeNodes sets each node's box, layers from the top, each layer
// centred; it returns the chart's width and height.
func placeNodes(nodes []*mapNode) (width, height int) {
	rows := map[int][]*mapNode{}
	maxLayer := 0
	for _, n := range nodes {
		n.w = mapNodeWidth
		n.h = mapLineH*len(n.Label) + 14
		if n.hasFigures {
			n.h += mapLineH + 2
		}
		rows[n.layer] = append(rows[n.layer], n)
		maxLayer = max(maxLayer, n.layer)
	}
	for _, row := range rows {
		sort.Slice(row, func(i, j int) bool { return row[i].order < row[j].order })
		width = max(width, len(row)*(mapNodeWidth+mapGapX)-mapGapX+2*mapPad)
	}
	y := mapPad
	for l := 0; l <= maxLayer; l++ {
		row := rows[l]
		rowH := 0
		for _, n := range row {
			rowH = max(rowH, n.h)
		}
		x := (width - (len(row)*(mapNodeWidth+mapGapX) - mapGapX)) / 2
		for _, n := range row {
			n.x, n.y = x, y+(rowH-n.h)/2
			x += mapNodeWidth + mapGapX
		}
		y += rowH + mapGapY
	}
	return width, y - mapGapY + mapPad
}

// edgeCount is how many attempts took edge e in the window: the routes
// the step at its start recorded to the step at its end (a rework or a
// rejection for a reject edge), the parallel step's attempts for an edge
// into a branch, the runs started for the edge from the start.
func edgeCount(e mermaid.Edge, from, to *mapNode, p *interpreter.Process, r *insights.Report) int {
	if from.ID == "start" {
		return r.Runs.Started
	}
	step := from.Step
	if from.Class == "join" {
		step = from.Parallel
	}
	if from.Class == "parallel" && to.Branch != "" {
		if s := r.Step(from.Step); s != nil {
			return s.Attempts
		}
		return 0
	}
	next := to.Step
	if to.Class == "join" {
		next = interpreter.Join
	}
	outcomes := []string{string(interpreter.AttemptDone)}
	if e.Kind == mermaid.EdgeOutcome {
		outcomes = append(outcomes, string(interpreter.AttemptRework))
	}
	if e.Kind == mermaid.EdgeReject {
		outcomes = []string{string(interpreter.AttemptRework)}
		if to.Class == "rejected" {
			outcomes, next = []string{string(interpreter.AttemptRejected)}, ""
		}
	}
	n := 0
	for _, rt := range r.Routes {
		if rt.Step == step && rt.Next == next && contains(outcomes, rt.Outcome) {
			n += rt.Count
		}
	}
	return n
}

func drawNode(b *strings.Builder, n *mapNode) {
	fill := mapFills[n.Class]
	if fill[0] == "" {
		fill = [2]string{"#f3f4f6", "#6b7280"}
	}
	rx := 6
	if n.Class == "start" || n.Class == "finish" || n.Class == "rejected" {
		rx = n.h / 2
	}
	fmt.Fprintf(b, `<g class="node" data-node="%s"`, esc(n.ID))
	if n.Step != "" {
		fmt.Fprintf(b, ` data-step="%s"`, esc(n.Step))
	}
	fmt.Fprintf(b, `><rect x="%d" y="%d" width="%d" height="%d" rx="%d" fill="%s" stroke="%s"/>`, n.x, n.y, n.w, n.h, rx, fill[0], fill[1])
	cx := n.x + n.w/2
	for i, line := range n.Label {
		weight := ""
		if i == 0 {
			weight = ` font-weight="600"`
		}
		fmt.Fprintf(b, `<text x="%d" y="%d" text-anchor="middle" font-size="12"%s>%s</text>`, cx, n.y+18+i*mapLineH, weight, esc(clip(line, 28)))
	}
	if n.hasFigures {
		y := n.y + 18 + len(n.Label)*mapLineH + 2
		color := "#1a1a1a"
		if n.over > 0 {
			color = "#8a0000"
		}
		fmt.Fprintf(b, `<text x="%d" y="%d" text-anchor="middle" font-size="12" fill="%s"><tspan class="open">open %d</tspan> · <tspan class="overdue">overdue %d</tspan></text>`,
			cx, y, color, n.open, n.over)
	}
	b.WriteString(`</g>`)
}

// drawEdge draws an edge with its label and count: down from the bottom
// of one node to the top of the next, or, going back up, through a lane
// at laneX right of the chart.
func drawEdge(b *strings.Builder, e mermaid.Edge, from, to *mapNode, count int, back bool, laneX int) {
	color, dash := "#555", ""
	switch e.Kind {
	case mermaid.EdgeReject:
		color, dash = "#b91c1c", ` stroke-dasharray="5 4"`
	case mermaid.EdgeTimeout:
		color, dash = "#c2410c", ` stroke-dasharray="5 4"`
	case mermaid.EdgeOutcome:
		color, dash = "#be185d", ` stroke-dasharray="5 4"`
	}
	var path string
	var lx, ly int
	if back {
		x1, y1 := from.x+from.w, from.y+from.h/2
		x2, y2 := to.x+to.w, to.y+to.h/2
		path = fmt.Sprintf("M%d,%d C%d,%d %d,%d %d,%d L%d,%d C%d,%d %d,%d %d,%d", x1, y1, laneX, y1, laneX, y1, laneX, y1-10,
			laneX, y2+10, laneX, y2, laneX, y2, x2, y2)
		lx, ly = laneX-4, (y1+y2)/2
	} else {
		x1, y1 := from.x+from.w/2, from.y+from.h
		x2, y2 := to.x+to.w/2, to.y
		mid := (y1 + y2) / 2
		path = fmt.Sprintf("M%d,%d C%d,%d %d,%d %d,%d", x1, y1, x1, mid, x2, mid, x2, y2)
		lx, ly = (x1+x2)/2+4, mid+4
	}
	fmt.Fprintf(b, `<g class="edge" data-from="%s" data-to="%s" data-count="%d"><path d="%s" fill="none" stroke="%s" stroke-width="1.4"%s marker-end="url(#arrow)"/>`,
		esc(e.From), esc(e.To), count, path, color, dash)
	label := clip(e.Label, 24)
	anchor := "start"
	if back {
		anchor = "end"
	}
	fmt.Fprintf(b, `<text x="%d" y="%d" font-size="11" text-anchor="%s" fill="%s">`, lx, ly, anchor, color)
	if label != "" {
		fmt.Fprintf(b, `%s · `, esc(label))
	}
	fmt.Fprintf(b, `<tspan class="count" font-weight="700">%d</tspan></text></g>`, count)
}

func esc(s string) string { return template.HTMLEscapeString(s) }

// clip shortens a line to n characters.
func clip(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
