package mermaid_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/baton-run/baton/interpreter/mermaid"
)

// Chart is the graph Flowchart draws: the same node ids, every edge of the
// chart's text once and in its order, and no other.
func TestChartIsTheFlowchartsGraph(t *testing.T) {
	arrow := regexp.MustCompile(`^\s*(\S+) (-->|-\.->)(\|"[^"]*"\|)? (\S+)$`)
	for name, p := range processes(t) {
		t.Run(name, func(t *testing.T) {
			text := mermaid.Flowchart(p, nil)
			g := mermaid.Chart(p, nil)
			for _, n := range g.Nodes {
				if !regexp.MustCompile(`(?m)^\s*` + regexp.QuoteMeta(n.ID) + `[\[({>/\\]`).MatchString(text) {
					t.Errorf("node %s (%s) is not drawn:\n%s", n.ID, n.Class, text)
				}
			}
			var drawn []string
			for _, line := range strings.Split(text, "\n") {
				if m := arrow.FindStringSubmatch(line); m != nil {
					kind := "next"
					if m[2] == "-.->" {
						kind = "dashed"
					}
					drawn = append(drawn, m[1]+" "+kind+" "+m[4])
				}
			}
			var got []string
			for _, e := range g.Edges {
				kind := "next"
				if e.Kind != mermaid.EdgeNext {
					kind = "dashed"
				}
				got = append(got, e.From+" "+kind+" "+e.To)
			}
			if strings.Join(got, "\n") != strings.Join(drawn, "\n") {
				t.Errorf("edges\n got %q\nwant %q", got, drawn)
			}
			steps := 0
			for _, n := range g.Nodes {
				if n.Step != "" {
					steps++
				}
			}
			if steps != len(p.Steps) {
				t.Errorf("%d step nodes, the process has %d steps", steps, len(p.Steps))
			}
		})
	}
}
