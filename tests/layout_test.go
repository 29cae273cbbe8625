package tests

import (
	"bytes"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
)

const module = "github.com/baton-run/baton"

// The Layout table's rules of import (docs/design.md, "Layout";
// layoutRows) hold for the module as it is: every package is in one row,
// imports only what its row allows, and no production package depends on
// test support.
func TestLayoutImports(t *testing.T) {
	t.Parallel()
	graph := moduleGraph(t)
	for _, b := range checkLayout(module, layoutRows, graph) {
		t.Error(b)
	}
	for _, r := range layoutRows {
		for _, pat := range r.pkgs {
			if !slices.ContainsFunc(graph, func(p goPackage) bool { return matchAny([]string{pat}, strings.TrimPrefix(p.ImportPath, module+"/")) }) {
				t.Errorf("layoutRows names %s, which is no package of the module: remove or rename it, here and in docs/design.md", pat)
			}
		}
	}
}

// Every rule of every row fails when it breaks: a package of the row fed
// one forbidden import breaks that rule, and the same package without it
// breaks none.
func TestLayoutCheckFindsEveryBreak(t *testing.T) {
	t.Parallel()
	graph := moduleGraph(t)
	var all []string
	for _, p := range graph {
		all = append(all, strings.TrimPrefix(p.ImportPath, module+"/"))
	}
	checked := 0
	for _, r := range layoutRows {
		for _, pkg := range all {
			if !matchAny(r.pkgs, pkg) {
				continue
			}
			type breaking struct{ rule, dep string }
			var cases []breaking
			// The first of the module's packages the row may not import.
			for _, other := range all {
				if !matchAny(r.pkgs, other) && !matchAny(r.may, other) {
					cases = append(cases, breaking{"may", other})
					break
				}
			}
			for _, n := range r.never {
				cases = append(cases, breaking{"never", concrete(n)})
			}
			for _, e := range r.external {
				cases = append(cases, breaking{"external", concrete(e)})
			}
			if r.only != nil {
				cases = append(cases, breaking{"only", "example.com/elsewhere"})
			}
			if r.kind == production {
				for _, other := range all {
					if kindOf(layoutRows, other) == testSupport {
						cases = append(cases, breaking{"test support", other})
					}
				}
			}
			if got := checkLayout(module, layoutRows, []goPackage{{ImportPath: module + "/" + pkg}}); len(got) != 0 {
				t.Errorf("%s alone: %v, want no break", pkg, got)
			}
			for _, c := range cases {
				dep := c.dep
				if c.rule != "external" && c.rule != "only" {
					dep = module + "/" + dep
				}
				g := []goPackage{{ImportPath: module + "/" + pkg, Imports: []string{dep}, Deps: []string{dep}}}
				got := checkLayout(module, layoutRows, g)
				if !slices.ContainsFunc(got, func(b layoutBreak) bool { return b.rule == c.rule && b.pkg == pkg && b.dep == c.dep }) {
					t.Errorf("%s importing %s: %v, want a break of %q", pkg, c.dep, got, c.rule)
				}
				checked++
			}
		}
	}
	if got := checkLayout(module, layoutRows, []goPackage{{ImportPath: module + "/nowhere"}}); len(got) != 1 || got[0].rule != "listed" {
		t.Errorf("a package in no row: %v, want one break of \"listed\"", got)
	}
	if checked < 100 {
		t.Fatalf("checked %d breaks; is layoutRows empty?", checked)
	}
}

// concrete returns a path pattern matches.
func concrete(pattern string) string {
	if base, ok := strings.CutSuffix(pattern, "/..."); ok {
		return base + "/x"
	}
	return pattern
}

// The rules the architecture names, each broken in the module's own graph
// by one import (with everything that import brings): the package that
// breaks it, the importer or one that depends on it, breaks that rule.
func TestLayoutNamedRulesBreak(t *testing.T) {
	t.Parallel()
	graph := moduleGraph(t)
	if before := checkLayout(module, layoutRows, graph); len(before) != 0 {
		t.Fatalf("the module already breaks the layout: %v", before)
	}
	for _, tc := range []struct {
		name     string
		pkg, imp string // imp: a package of the module (relative) or an import path outside it
		rule     string
		breaker  string // the package that breaks the rule; default pkg
	}{
		{"workflows ↛ store", "workflows", "internal/store", "never", ""},
		{"workflows ↛ store, through a package it may import", "interpreter", "internal/store", "never", "workflows"},
		{"workflows ↛ gateway", "workflows", "gateway/inbox", "never", ""},
		{"gateway ↛ activities", "gateway", "activities", "never", ""},
		{"gateway ↛ activities, from below", "gateway/oauth", "activities/evaluator", "never", ""},
		{"activities ↛ gateway", "activities", "gateway", "never", ""},
		{"activities ↛ gateway, from below", "activities/downstream", "gateway/auth", "never", ""},
		{"production ↛ test support: devpg", "internal/devpg", "internal/testing/pgtest", "test support", ""},
		{"production ↛ test support: the binary", "cmd/baton", "internal/testing/workertest", "test support", ""},
		{"production ↛ test support, through a package", "internal/drive", "internal/testing/spectest", "test support", "cmd/baton"},
		{"the suite ↛ the worker", "internal/testing/drivetest", "activities", "may", ""},
		{"the suite ↛ workflows", "internal/testing/drivetest", "workflows", "may", ""},
		{"the suite ↛ the store", "internal/testing/drivetest", "internal/store", "may", ""},
		{"interpreter ↛ Temporal", "interpreter", "go.temporal.io/sdk/workflow", "external", ""},
		{"interpreter ↛ SQL", "interpreter", "database/sql", "external", ""},
		{"interpreter ↛ HTTP", "interpreter", "net/http", "external", ""},
		{"interpreter ↛ pgx", "interpreter", "github.com/jackc/pgx/v5", "external", ""},
		{"interpreter ↛ another module", "interpreter", "golang.org/x/text/language", "only", ""},
		{"interpreter ↛ Baton", "interpreter", "workflows", "may", ""},
		{"interpreter ↛ its own sub-packages", "interpreter", "interpreter/mermaid", "may", ""},
		{"interpreter/proctest ↛ Temporal", "interpreter/proctest", "go.temporal.io/sdk/client", "external", ""},
		{"interpreter/mermaid ↛ Baton", "interpreter/mermaid", "internal/toolreg", "may", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			imp := tc.imp
			if slices.ContainsFunc(graph, func(p goPackage) bool { return p.ImportPath == module+"/"+imp }) {
				imp = module + "/" + imp
			}
			want := layoutBreak{rule: tc.rule, pkg: tc.pkg, dep: tc.imp}
			if tc.breaker != "" {
				want.pkg = tc.breaker
			}
			got := checkLayout(module, layoutRows, withImport(graph, module+"/"+tc.pkg, imp))
			if !slices.Contains(got, want) {
				t.Fatalf("breaks %v, want %v among them", got, want)
			}
		})
	}
}

// The Layout table of docs/design.md names every package of the module,
// each in the first column as `path/`, and no folder that is not one.
func TestLayoutTableListsEveryPackage(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(filepath.Join("..", "docs", "design.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(b), "\n## Layout\n")
	if !ok {
		t.Fatal(`docs/design.md has no "## Layout" section`)
	}
	if end := strings.Index(section, "\n## "); end >= 0 {
		section = section[:end]
	}
	named := map[string]bool{}
	for line := range strings.Lines(section) {
		cells := strings.Split(line, "|")
		if !strings.HasPrefix(line, "|") || len(cells) < 3 {
			continue
		}
		for _, m := range regexp.MustCompile("`([a-z0-9./-]+)/`").FindAllStringSubmatch(cells[1], -1) {
			named[m[1]] = true
		}
	}
	for _, p := range moduleGraph(t) {
		pkg := strings.TrimPrefix(p.ImportPath, module+"/")
		if !named[pkg] {
			t.Errorf("the Layout table of docs/design.md does not name %s: give it a row, or add `%s/` to one", pkg, pkg)
		}
		delete(named, pkg)
	}
	for pkg := range named {
		t.Errorf("the Layout table of docs/design.md names `%s/`, which is no package of the module", pkg)
	}
}

// withImport returns a copy of graph in which pkg imports imp: pkg and
// every package depending on it depend on imp and what imp depends on.
func withImport(graph []goPackage, pkg, imp string) []goPackage {
	var brought []string
	for _, p := range graph {
		if p.ImportPath == imp {
			brought = p.Deps
		}
	}
	out := make([]goPackage, len(graph))
	for i, p := range graph {
		p.Imports, p.Deps = slices.Clone(p.Imports), slices.Clone(p.Deps)
		if p.ImportPath == pkg {
			p.Imports = append(p.Imports, imp)
		}
		if p.ImportPath == pkg || slices.Contains(p.Deps, pkg) {
			p.Deps = union(p.Deps, append([]string{imp}, brought...))
		}
		out[i] = p
	}
	return out
}

// moduleGraph lists the module's packages with their imports and
// dependencies, tests left out.
func moduleGraph(t *testing.T) []goPackage {
	t.Helper()
	graph, err := listModule()
	if err != nil {
		t.Fatal(err)
	}
	return graph
}

// listModule runs go list once for every test that reads the graph.
var listModule = sync.OnceValues(func() ([]goPackage, error) {
	cmd := exec.Command("go", "list", "-e", "-json=ImportPath,Imports,Deps,Error", "./...")
	cmd.Dir = ".."
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list ./...: %w", err)
	}
	var graph []goPackage
	for dec := json.NewDecoder(bytes.NewReader(out)); dec.More(); {
		var p goPackage
		if err := dec.Decode(&p); err != nil {
			return nil, fmt.Errorf("go list ./...: %w", err)
		}
		if p.Error != nil {
			return nil, fmt.Errorf("go list %s: %s", p.ImportPath, p.Error.Err)
		}
		graph = append(graph, p)
	}
	if len(graph) < 20 {
		return nil, fmt.Errorf("go list ./... listed %d packages; is the repository root beside tests/?", len(graph))
	}
	return graph, nil
})

// Every refusal is made by interpreter.Refuse or a named refusal, which keep
// a refusal's bounds: no package but the interpreter writes an
// interpreter.Error literal, tests included.
func TestRefusalsAreMadeByTheInterpreter(t *testing.T) {
	t.Parallel()
	const path = "github.com/baton-run/baton/interpreter"
	fset := token.NewFileSet()
	files := 0
	err := filepath.WalkDir("..", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p == filepath.Join("..", "interpreter") || strings.HasPrefix(d.Name(), ".") && p != ".." || d.Name() == "testdata" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		files++
		name := ""
		for _, im := range f.Imports {
			if v, _ := strconv.Unquote(im.Path.Value); v == path {
				name = "interpreter"
				if im.Name != nil {
					name = im.Name.Name
				}
			}
		}
		if name == "" {
			return nil
		}
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.CompositeLit)
			if !ok {
				return true
			}
			if sel, ok := lit.Type.(*ast.SelectorExpr); ok && sel.Sel.Name == "Error" {
				if x, ok := sel.X.(*ast.Ident); ok && x.Name == name {
					t.Errorf("%s: an interpreter.Error literal; use interpreter.Refuse or a named refusal", fset.Position(lit.Pos()))
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 100 {
		t.Fatalf("read %d Go files; is the repository root beside tests/?", files)
	}
}

// The default organization and baton dev's data folder are each one
// constant (auth.DefaultOrg, cmd/baton's defaultData): a second spelling
// drifts when the first changes. Tests may spell them, as a client would.
func TestDefaultsAreSpelledOnce(t *testing.T) {
	t.Parallel()
	owners := map[string]string{
		`"o_default"`: filepath.Join("..", "gateway", "auth", "auth.go"),
		`".baton"`:    filepath.Join("..", "cmd", "baton", "config.go"),
	}
	fset := token.NewFileSet()
	found := map[string]int{}
	err := filepath.WalkDir("..", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if strings.HasPrefix(d.Name(), ".") && p != ".." || d.Name() == "testdata" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			owner, ok := owners[lit.Value]
			if !ok {
				return true
			}
			found[lit.Value]++
			if p != owner {
				t.Errorf("%s: %s spelled again; use the constant in %s", fset.Position(lit.Pos()), lit.Value, owner)
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for lit, owner := range owners {
		if found[lit] == 0 {
			t.Errorf("%s is not in %s any more; update this test", lit, owner)
		}
	}
}
