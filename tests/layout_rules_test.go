package tests

import (
	"fmt"
	"slices"
	"strings"
)

// The Layout table of docs/design.md as rules: which packages may import
// which. Every package of the module is in exactly one row; a new package
// needs a row here and one in the table.
var layoutRows = []layoutRow{
	{
		pkgs:     []string{"interpreter"},
		kind:     production,
		external: impure,
		only:     []string{"gopkg.in/yaml.v3", "github.com/gowebpki/jcs"},
	},
	{
		pkgs:     []string{"interpreter/mermaid", "interpreter/proctest"},
		kind:     production,
		may:      []string{"interpreter"},
		external: impure,
		only:     []string{"gopkg.in/yaml.v3", "github.com/gowebpki/jcs"},
	},
	{
		pkgs:     []string{"workflows"},
		kind:     production,
		may:      []string{"interpreter"},
		never:    []string{"internal/store", "gateway/...", "activities/..."},
		external: []string{"github.com/jackc/...", "github.com/modelcontextprotocol/..."},
	},
	{
		pkgs:  []string{"activities/..."},
		kind:  production,
		may:   append([]string{"interpreter", "workflows", "internal/notify"}, sharedBelow...),
		never: []string{"gateway/..."},
	},
	{
		pkgs:  []string{"gateway/..."},
		kind:  production,
		may:   append([]string{"interpreter", "interpreter/mermaid", "workflows"}, sharedBelow...),
		never: []string{"activities/..."},
	},
	{
		pkgs:     []string{"internal/store"},
		kind:     production,
		may:      []string{"interpreter", "internal/toolreg", "internal/insights"},
		never:    []string{"workflows", "activities/...", "gateway/..."},
		external: []string{"go.temporal.io/..."},
	},
	{pkgs: []string{"internal/toolreg"}, kind: production, may: []string{"interpreter"}},
	{pkgs: []string{"internal/insights"}, kind: production, may: []string{"interpreter"}, external: impure},
	{pkgs: []string{"internal/notify"}, kind: production, may: []string{"interpreter"}},
	{pkgs: []string{"internal/telemetry"}, kind: production},
	{
		pkgs:  []string{"internal/drive"},
		kind:  production,
		may:   []string{"interpreter", "workflows"},
		never: []string{"internal/store", "activities/...", "gateway/..."},
	},
	{pkgs: []string{"internal/load"}, kind: production, may: []string{"internal/drive", "interpreter", "workflows"}},
	{pkgs: []string{"internal/runs"}, kind: production, may: []string{"internal/drive", "interpreter"}},
	{pkgs: []string{"internal/pgserver"}, kind: production},
	{pkgs: []string{"internal/soak"}, kind: production, may: []string{"activities/downstream", "gateway/auth", "internal/drive", "internal/pgserver", "interpreter"}},
	{pkgs: []string{"internal/devpg"}, kind: production, may: []string{"internal/pgserver"}},
	{pkgs: []string{"temporal-dev"}, kind: production},
	{pkgs: []string{"cmd/baton"}, kind: production, may: []string{"..."}},

	{pkgs: []string{"internal/testing/pgtest"}, kind: testSupport, may: []string{"internal/pgserver"}},
	{pkgs: []string{"internal/testing/spectest", "internal/testing/memtest", "internal/testing/crmtest"}, kind: testSupport},
	{pkgs: []string{"internal/testing/notifytest"}, kind: testSupport, may: []string{"internal/notify"}},
	{
		pkgs: []string{"internal/testing/drivetest"},
		kind: testSupport,
		may:  []string{"internal/drive", "internal/testing/spectest", "interpreter"},
	},
	{
		pkgs: []string{"internal/testing/workertest"},
		kind: testSupport,
		may:  []string{"activities/...", "workflows", "internal/store", "internal/telemetry", "internal/drive", "interpreter", "internal/testing/drivetest"},
	},

	{pkgs: []string{"examples/crm"}, kind: testsAndTools, may: []string{"internal/testing/crmtest"}},
	{pkgs: []string{"tests", "tests/faults", "tests/binary", "tests/soak", "tests/upgrade", "tests/upgrade/fixture", "tests/upgrade/generate"}, kind: testsAndTools, may: []string{"..."}},
	{pkgs: []string{"internal/slowtests"}, kind: testsAndTools},
}

// sharedBelow is what the worker's activities and the gateway share, below
// both.
var sharedBelow = []string{"internal/store", "internal/toolreg", "internal/telemetry", "internal/insights"}

// impure is what the interpreter and its sub-packages never depend on:
// Temporal, SQL, HTTP, PostgreSQL's driver and MCP.
var impure = []string{"go.temporal.io/...", "database/sql", "net/http", "github.com/jackc/...", "github.com/modelcontextprotocol/..."}

// A layoutRow is one row of the Layout table: packages, what they are, and
// what they may import. Patterns are import paths; "x/..." is x and every
// package below it, "..." every package.
type layoutRow struct {
	// pkgs are the row's packages, relative to the module ("gateway/auth").
	pkgs []string
	// kind says whether they are production code, test support, or tests
	// and tools beside them.
	kind layoutKind
	// may are the module's packages (relative patterns) that the row's
	// packages may import besides each other. Default none.
	may []string
	// never are the module's packages (relative patterns) that the row's
	// packages may not depend on, directly or through another package.
	never []string
	// external are import paths outside the module (patterns, the
	// standard library's included) that the row's packages may not depend
	// on, directly or not.
	external []string
	// only, when not nil, are the only modules outside the standard
	// library (patterns) that the row's packages may depend on, directly
	// or not.
	only []string
}

// layoutKind is what a row's packages are.
type layoutKind int

const (
	// production is what the baton binary is built from: no production
	// package depends on test support.
	production layoutKind = iota
	// testSupport is internal/testing/...: packages only tests import.
	testSupport
	// testsAndTools may import test support: tests/, the examples and
	// the CI's own tools.
	testsAndTools
)

// goPackage is one package of the module as `go list -json` shows it:
// Imports are its files' own imports and Deps everything it depends on,
// directly or not, tests left out.
type goPackage struct {
	ImportPath string
	Imports    []string
	Deps       []string
	Error      *struct{ Err string }
}

// A layoutBreak is one import a row forbids.
type layoutBreak struct {
	// rule is which rule it breaks: "listed" (the package is in no row, or
	// in two), "may", "never", "external", "only" or "test support".
	rule string
	// pkg is the package that imports (relative), dep what it imports.
	pkg, dep string
}

func (b layoutBreak) String() string {
	switch b.rule {
	case "listed":
		return fmt.Sprintf("%s is in %s of the layout rules: give it one row in layoutRows (tests/layout_rules_test.go) and in the Layout table of docs/design.md", b.pkg, b.dep)
	case "may":
		return fmt.Sprintf("%s imports %s, which its row's \"may import\" does not list", b.pkg, b.dep)
	case "test support":
		return fmt.Sprintf("%s is production code and depends on the test support %s", b.pkg, b.dep)
	default:
		return fmt.Sprintf("%s depends on %s, which its row forbids (%s)", b.pkg, b.dep, b.rule)
	}
}

// checkLayout returns every import of graph that rows forbid. graph holds
// the module's packages; module is its path.
func checkLayout(module string, rows []layoutRow, graph []goPackage) []layoutBreak {
	rel := func(path string) (string, bool) {
		if path == module {
			return ".", true
		}
		r, ok := strings.CutPrefix(path, module+"/")
		return r, ok
	}
	rowOf := func(pkg string) []int {
		var in []int
		for i, r := range rows {
			if matchAny(r.pkgs, pkg) {
				in = append(in, i)
			}
		}
		return in
	}
	var breaks []layoutBreak
	for _, p := range graph {
		pkg, _ := rel(p.ImportPath)
		in := rowOf(pkg)
		if len(in) != 1 {
			breaks = append(breaks, layoutBreak{rule: "listed", pkg: pkg, dep: fmt.Sprintf("%d rows", len(in))})
			continue
		}
		r := rows[in[0]]
		for _, imp := range p.Imports {
			dep, ok := rel(imp)
			if ok && !matchAny(r.pkgs, dep) && !matchAny(r.may, dep) {
				breaks = append(breaks, layoutBreak{rule: "may", pkg: pkg, dep: dep})
			}
		}
		for _, d := range union(p.Imports, p.Deps) {
			dep, ok := rel(d)
			switch {
			case ok && matchAny(r.never, dep):
				breaks = append(breaks, layoutBreak{rule: "never", pkg: pkg, dep: dep})
			case ok && r.kind == production && kindOf(rows, dep) == testSupport:
				breaks = append(breaks, layoutBreak{rule: "test support", pkg: pkg, dep: dep})
			case ok:
			case matchAny(r.external, d):
				breaks = append(breaks, layoutBreak{rule: "external", pkg: pkg, dep: d})
			case r.only != nil && !standard(d) && !matchAny(r.only, d):
				breaks = append(breaks, layoutBreak{rule: "only", pkg: pkg, dep: d})
			}
		}
	}
	return breaks
}

// kindOf returns the kind of the row pkg is in, or -1.
func kindOf(rows []layoutRow, pkg string) layoutKind {
	for _, r := range rows {
		if matchAny(r.pkgs, pkg) {
			return r.kind
		}
	}
	return -1
}

// matchAny reports whether path matches one of patterns: "..." matches
// every path, "x/..." x and every path below it, anything else itself.
func matchAny(patterns []string, path string) bool {
	for _, p := range patterns {
		if p == "..." || p == path {
			return true
		}
		if base, ok := strings.CutSuffix(p, "/..."); ok && (path == base || strings.HasPrefix(path, base+"/")) {
			return true
		}
	}
	return false
}

// standard reports whether path is in the standard library: its first
// element has no dot.
func standard(path string) bool {
	first, _, _ := strings.Cut(path, "/")
	return !strings.Contains(first, ".")
}

func union(a, b []string) []string {
	out := slices.Concat(a, b)
	slices.Sort(out)
	return slices.Compact(out)
}
