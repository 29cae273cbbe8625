package tests

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The layout's rules of import (docs/design.md, "Layout"): the worker's
// activities and the gateway share what they both use through internal/
// and never import each other, and the interpreter stays pure.
func TestLayoutImports(t *testing.T) {
	t.Parallel()
	const module = "github.com/baton-run/baton/"
	for _, tc := range []struct {
		pkgs      string
		forbidden []string
	}{
		{"./activities/...", []string{module + "gateway"}},
		{"./gateway/...", []string{module + "activities"}},
		{"./interpreter", []string{module, "go.temporal.io/", "database/sql", "net/http", "github.com/jackc/"}},
	} {
		t.Run(tc.pkgs, func(t *testing.T) {
			t.Parallel()
			cmd := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", tc.pkgs)
			cmd.Dir = ".."
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("go list -deps %s: %v", tc.pkgs, err)
			}
			deps := strings.Fields(string(out))
			if len(deps) == 0 {
				t.Fatalf("go list -deps %s listed nothing", tc.pkgs)
			}
			for _, dep := range deps {
				if dep == module+strings.TrimPrefix(tc.pkgs, "./") {
					continue // the package itself
				}
				for _, f := range tc.forbidden {
					if under(dep, f) {
						t.Errorf("%s depends on %s", tc.pkgs, dep)
					}
				}
			}
		})
	}
}

// under reports whether the import path dep is prefix or below it; a
// prefix ending in "/" is a path's beginning alone.
func under(dep, prefix string) bool {
	if strings.HasSuffix(prefix, "/") {
		return strings.HasPrefix(dep, prefix)
	}
	return dep == prefix || strings.HasPrefix(dep, prefix+"/")
}

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
