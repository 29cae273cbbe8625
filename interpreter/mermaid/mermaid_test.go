package mermaid_test

import (
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/baton-run/baton/internal/testing/spectest"
	"github.com/baton-run/baton/interpreter"
	"github.com/baton-run/baton/interpreter/mermaid"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/ from the current output")

// offer is every profile Baton implements, with the tools the refund
// example uses registered as examples/tools.yaml registers them.
func offer() *interpreter.Offer {
	o := interpreter.DefaultOffer()
	o.Profiles = append(o.Profiles, interpreter.ProfileCheck, interpreter.ProfileTools, interpreter.ProfileSubprocess)
	o.ToolCatalog = &interpreter.ToolCatalog{Tools: []interpreter.CatalogTool{
		{Server: "crm", Tool: "get_customer", Policy: interpreter.PolicyRead, Idempotency: interpreter.IdempotencyByKey},
		{Server: "crm", Tool: "create_ticket", Policy: interpreter.PolicyWrite, Idempotency: interpreter.IdempotencyByKey},
		{Server: "crm", Tool: "refund", Policy: interpreter.PolicyApprovalRequired, Idempotency: interpreter.IdempotencyByKey, Approvers: []string{"finance"}},
	}}
	return &o
}

func parse(t *testing.T, src []byte) *interpreter.Process {
	t.Helper()
	p, err := interpreter.Parse(src, &interpreter.ParseOptions{Offer: offer()})
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	return p
}

// processes are the twelve conformance fixtures, the refund example and
// testdata/all-kinds, by name.
func processes(t *testing.T) map[string]*interpreter.Process {
	t.Helper()
	out := map[string]*interpreter.Process{}
	for _, name := range spectest.Fixtures(t) {
		out[name] = parse(t, spectest.Fixture(t, name))
	}
	src, err := os.ReadFile(filepath.Join("..", "..", "examples", "refund", "PROCESS.md"))
	if err != nil {
		t.Fatal(err)
	}
	out["refund"] = parse(t, src)
	// What the fixtures leave out: when labels, a plain wait, a wait_for
	// whose timeout goes to its next.
	src, err = os.ReadFile(filepath.Join("testdata", "all-kinds.PROCESS.md"))
	if err != nil {
		t.Fatal(err)
	}
	out["all-kinds"] = parse(t, src)
	// The RFP example's three processes (baton-subprocess-1).
	for _, name := range []string{"rfp", "supplier-screening", "contract-review"} {
		src, err := os.ReadFile(filepath.Join("..", "..", "examples", "rfp", name, "PROCESS.md"))
		if err != nil {
			t.Fatal(err)
		}
		out["rfp-"+name] = parse(t, src)
	}
	if len(out) != 17 {
		t.Fatalf("%d processes, want the twelve fixtures, refund, all-kinds and the RFP example's three", len(out))
	}
	return out
}

// The chart of every process of processes is its golden file
// in testdata/ (go test -update rewrites them; review the diff).
func TestFlowchartGolden(t *testing.T) {
	for name, p := range processes(t) {
		t.Run(name, func(t *testing.T) {
			got := mermaid.Flowchart(p, nil)
			golden := filepath.Join("testdata", name+".mmd")
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -update to create it)", err)
			}
			if got != string(want) {
				t.Errorf("chart differs from %s (go test -update rewrites it):\n%s", golden, got)
			}
		})
	}
}

var (
	nodeDef  = regexp.MustCompile(`^\s*(\w+)(\[\[|\[/|\[\\|\(\[|\(\(|\{\{|[\[({>])"`)
	edgeLine = regexp.MustCompile(`^\s*(\w+) (-->|-\.->)(?:\|"([^"]*)"\|)? (\w+)$`)
)

// chart is a Flowchart output read back: its node definitions (with the
// subgraph each is in) and its edges.
type chart struct {
	nodes map[string]string // node id -> subgraph id, "" at top level
	count map[string]int    // node id -> times defined
	edges []chartEdge
}

type chartEdge struct{ from, arrow, label, to string }

func read(t *testing.T, text string) chart {
	t.Helper()
	c := chart{nodes: map[string]string{}, count: map[string]int{}}
	sub := ""
	for _, l := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		switch {
		case strings.HasPrefix(strings.TrimSpace(l), "subgraph "):
			sub = strings.Fields(l)[1]
		case strings.TrimSpace(l) == "end":
			sub = ""
		case edgeLine.MatchString(l):
			m := edgeLine.FindStringSubmatch(l)
			c.edges = append(c.edges, chartEdge{m[1], m[2], m[3], m[4]})
		case nodeDef.MatchString(l):
			id := nodeDef.FindStringSubmatch(l)[1]
			c.nodes[id] = sub
			c.count[id]++
		}
	}
	return c
}

func (c chart) has(from, arrow, label, to string) bool {
	for _, e := range c.edges {
		if e == (chartEdge{from, arrow, label, to}) {
			return true
		}
	}
	return false
}

func node(id string) string { return "st_" + strings.ReplaceAll(id, "-", "_") }

// Beyond the golden files: every step is one node, every way out of a
// step is one edge of the right style and label, and every edge ends at a
// node of the chart.
func TestFlowchartCoversTheProcess(t *testing.T) {
	for name, p := range processes(t) {
		t.Run(name, func(t *testing.T) {
			c := read(t, mermaid.Flowchart(p, nil))
			want := 1 // start
			for _, s := range p.Steps {
				if n := c.count[node(s.ID)]; n != 1 {
					t.Errorf("step %s is defined %d times", s.ID, n)
				}
				from := node(s.ID)
				if s.Kind == interpreter.KindParallel {
					for _, b := range s.Branches {
						want++
						if !c.has(from, "-->", "", node(b)) {
							t.Errorf("no edge from parallel %s to branch %s", s.ID, b)
						}
					}
					from = "join_" + strings.TrimPrefix(node(s.ID), "st_")
				}
				for _, r := range p.NextOf(s) {
					want++
					to := node(r.To)
					if r.To == interpreter.Join {
						to = "" // checked through the branch test below
					}
					found := false
					for _, e := range c.edges {
						found = found || (e.from == from && e.arrow == "-->" && (to == "" || e.to == to) &&
							(r.When == "" || strings.ReplaceAll(e.label, "<br/>", " ") == r.When))
					}
					if !found {
						t.Errorf("no next edge %s -> %s (when %q)", s.ID, r.To, r.When)
					}
				}
				if s.OnTimeout != "" {
					want++
					if !c.has(from, "-.->", "timeout "+s.Timeout.Text, node(s.OnTimeout)) {
						t.Errorf("no on_timeout edge from %s", s.ID)
					}
				}
				if s.Call != nil {
					for _, r := range s.Call.OnOutcome {
						want++
						if !c.has(from, "-.->", r.Outcome, node(r.To)) {
							t.Errorf("no on_outcome edge %s from %s to %s", r.Outcome, s.ID, r.To)
						}
					}
				}
				if s.Kind == interpreter.KindApprove {
					want++
					to := "rejected_end"
					if s.OnReject != "" {
						to = node(s.OnReject)
					}
					if !c.has(from, "-.->", "rejected", to) {
						t.Errorf("no rejection edge from %s to %s", s.ID, to)
					}
				}
			}
			if len(c.edges) != want {
				t.Errorf("%d edges, want %d", len(c.edges), want)
			}
			for _, e := range c.edges {
				if c.count[e.from] != 1 || c.count[e.to] != 1 {
					t.Errorf("edge %s -> %s names a node the chart does not define once", e.from, e.to)
				}
			}
		})
	}
}

// Each branch of major-incident is a subgraph holding its steps, and each
// joins the join node, from which the parallel step continues.
func TestFlowchartBranches(t *testing.T) {
	c := read(t, mermaid.Flowchart(processes(t)["major-incident"], nil))
	for _, b := range []string{"operations", "security", "communications"} {
		if got := c.nodes[node(b)]; got != "br_"+b {
			t.Errorf("step %s is in subgraph %q, want br_%s", b, got, b)
		}
		if !c.has(node(b), "-->", "", "join_respond") {
			t.Errorf("branch %s does not join", b)
		}
	}
	if !c.has("join_respond", "-->", "", node("close_review")) {
		t.Error("the parallel step's next does not leave from its join")
	}
	if !c.has(node("close_review"), "-.->", "rejected", node("respond")) {
		t.Error("close_review's on_reject to the parallel step is missing")
	}
	for _, s := range []string{"activate", "respond", "close_review", "done"} {
		if got := c.nodes[node(s)]; got != "" {
			t.Errorf("step %s is inside subgraph %s, want top level", s, got)
		}
	}
}

// Text a process author wrote is escaped, and step ids never become
// Mermaid keywords or collide as node ids.
func TestFlowchartEscapes(t *testing.T) {
	p := parse(t, []byte(`---
name: edge-cases
description: Step ids and when texts that Mermaid would misread.
steps:
  - id: end
    agent: Choose.
    next:
      - { to: a-b, when: 'Total > 10 & "urgent" | see #1 <b>now</b>' }
      - { to: a_b, when: "Otherwise,
          after checking" }
  - id: a-b
    finish: done
  - id: a_b
    finish: other
---
`))
	out := mermaid.Flowchart(p, nil)
	for _, want := range []string{
		`st_end["end<br/>agent"]:::agent`,
		`st_a_b(["a-b<br/>outcome: done"]):::finish`,
		`st_a_b_2(["a_b<br/>outcome: other"]):::finish`,
		`st_end -->|"Total #62; 10 #38; #34;urgent#34; #124; see #35;1<br/>#60;b#62;now#60;/b#62;"| st_a_b`,
		`st_end -->|"Otherwise, after checking"| st_a_b_2`,
	} {
		if !strings.Contains(out, want+"\n") {
			t.Errorf("missing line %s in:\n%s", want, out)
		}
	}
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Fields(l); len(f) > 0 && f[0] == "end" && strings.TrimSpace(l) != "end" {
			t.Errorf("a line starts with the keyword end: %q", l)
		}
	}
}

// A published version's bindings name the child's version on its node; a
// version written in the step shows without them.
func TestFlowchartProcessVersion(t *testing.T) {
	p := processes(t)["rfp-rfp"]
	bound := interpreter.Bindings{{Step: "screen_each", Process: "supplier-screening", Version: 3}, {Step: "legal", Process: "contract-review", Version: 12}}
	out := mermaid.Flowchart(p, &mermaid.Options{Children: bound})
	for _, want := range []string{`[["screen_each<br/>process · supplier-screening v3<br/>`, `[["legal<br/>process · contract-review v12"]]`} {
		if !strings.Contains(out, want) {
			t.Errorf("chart lacks %s:\n%s", want, out)
		}
	}
	pinned := parse(t, []byte(`---
name: pinned
description: Pins its child.
steps:
  - id: run
    process: contract-review
    version: 2
  - id: done
    finish: done
---
`))
	if out := mermaid.Flowchart(pinned, nil); !strings.Contains(out, `process · contract-review v2"]]`) {
		t.Errorf("a written version is not shown:\n%s", out)
	}
}
