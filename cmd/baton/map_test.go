package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func mapGolden(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "interpreter", "mermaid", "testdata", name+".mmd"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// baton map prints the chart interpreter/mermaid draws, for a folder or
// a file, with --tools for a process that lists tools.
func TestMap(t *testing.T) {
	fixtures := fixturesDir(t)
	tests := []struct {
		name   string
		args   []string
		golden string
	}{
		{"folder", []string{filepath.Join(fixtures, "major-incident")}, "major-incident"},
		{"file", []string{filepath.Join(fixtures, "vendor-check", "PROCESS.md")}, "vendor-check"},
		{"tools", []string{"--tools", "../../examples/tools.yaml", "../../examples/refund"}, "refund"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := batonOK(t, append([]string{"map"}, tt.args...)...)
			if want := mapGolden(t, tt.golden); out != want {
				t.Fatalf("baton map printed:\n%s\nwant:\n%s", out, want)
			}
		})
	}
}

func TestMapRefuses(t *testing.T) {
	code, out, errOut := baton("map", "../../examples/refund")
	if code != 1 || out != "" || !strings.Contains(errOut, "../../examples/refund:") || !strings.Contains(errOut, "--tools") {
		t.Fatalf("map of a process with tools, without --tools: exit %d, stdout %q, stderr:\n%s", code, out, errOut)
	}
	bad := filepath.Join(t.TempDir(), "draft.md")
	if err := os.WriteFile(bad, []byte("---\nname: x\ndescription: y\nsteps:\n  - id: a\n    agent: Do.\n    next: nowhere\n---\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = baton("map", bad)
	if code != 1 || out != "" || !strings.Contains(errOut, bad+":7:") || !strings.Contains(errOut, "nowhere") {
		t.Fatalf("map of an invalid process: exit %d, stdout %q, stderr:\n%s", code, out, errOut)
	}
	if code, _, _ := baton("map"); code != 2 {
		t.Fatalf("map without a path: exit %d, want 2", code)
	}
}
