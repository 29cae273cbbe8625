package tests

import (
	"os/exec"
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
