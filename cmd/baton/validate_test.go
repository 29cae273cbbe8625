package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fixturesDir is ../shared/conformance/fixtures beside the repository root.
func fixturesDir(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(dir, "..", "shared", "conformance", "fixtures")
		}
		if filepath.Dir(dir) == dir {
			t.Fatal("no go.mod above the working folder")
		}
		dir = filepath.Dir(dir)
	}
}

const demo = `---
name: demo
description: A demo.
steps:
  - id: a
    agent: Do it.
  - id: done
    finish: ok
---
# Demo
`

// writeProcess writes src as dir/name under a fresh temporary folder and
// returns the file's path.
func writeProcess(t *testing.T, dir, name, src string) string {
	t.Helper()
	full := filepath.Join(t.TempDir(), dir)
	if err := os.MkdirAll(full, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(full, name)
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func runBaton(args ...string) (int, string, string) {
	var out, errOut bytes.Buffer
	code := run(args, &out, &errOut)
	return code, out.String(), errOut.String()
}

func TestValidateCommand(t *testing.T) {
	t.Parallel()
	fx := fixturesDir(t)
	good := writeProcess(t, "demo", "PROCESS.md", demo)
	misnamed := writeProcess(t, "other", "PROCESS.md", demo)
	draft := writeProcess(t, "drafts", "demo-draft.md", demo)
	broken := writeProcess(t, "broken", "PROCESS.md", strings.Replace(demo, "name: demo", "name: broken\ncolour: red", 1))

	tests := []struct {
		name     string
		args     []string
		wantCode int
		wantOut  []string // lines, in order; "*" matches any hash
		wantErr  string   // substring of stderr
	}{
		{
			name:     "a folder",
			args:     []string{"validate", filepath.Dir(good)},
			wantCode: 0,
			wantOut:  []string{filepath.Dir(good) + ": ok demo sha256:*"},
		},
		{
			name:     "a PROCESS.md file checks its folder's name",
			args:     []string{"validate", misnamed},
			wantCode: 1,
			wantOut:  []string{misnamed + `:2:7: name: must equal its folder's name "other"`},
		},
		{
			name:     "a folder checks its name",
			args:     []string{"validate", filepath.Dir(misnamed)},
			wantCode: 1,
			wantOut:  []string{filepath.Dir(misnamed) + `:2:7: name: must equal its folder's name "other"`},
		},
		{
			name:     "a file with another name has no folder check",
			args:     []string{"validate", draft},
			wantCode: 0,
			wantOut:  []string{draft + ": ok demo sha256:*"},
		},
		{
			name:     "one line per issue, and every path",
			args:     []string{"validate", broken, good},
			wantCode: 1,
			wantOut: []string{
				broken + ":3:1: colour: unknown field",
				good + ": ok demo sha256:*",
			},
		},
		{
			name:     "vendor-check needs an evaluator",
			args:     []string{"validate", filepath.Join(fx, "vendor-check")},
			wantCode: 1,
			wantOut:  []string{filepath.Join(fx, "vendor-check") + ":20:5: steps[0].check: needs the check-1 profile, which this server does not offer (it needs an evaluator)"},
		},
		{
			name:     "vendor-check with an evaluator",
			args:     []string{"validate", "--evaluator", filepath.Join(fx, "vendor-check")},
			wantCode: 0,
			wantOut:  []string{filepath.Join(fx, "vendor-check") + ": ok vendor-check sha256:b459ee93e2a2b77e3f5d88819fbb8c1394c4833eeaa4f179dcc62eadcd53e266"},
		},
		{
			name:     "profiles choose what is offered",
			args:     []string{"validate", "--profiles", "check-1", "--evaluator", filepath.Join(fx, "major-incident")},
			wantCode: 1,
			wantOut:  []string{filepath.Join(fx, "major-incident") + ":13:15: steps[1].parallel: needs the parallel-1 profile, which this server does not offer"},
		},
		{
			name:     "an empty profile list offers the core alone",
			args:     []string{"validate", "--profiles=", filepath.Join(fx, "major-incident")},
			wantCode: 1,
			wantOut:  []string{filepath.Join(fx, "major-incident") + ":13:15: steps[1].parallel: needs the parallel-1 profile, which this server does not offer"},
		},
		{
			name:     "a missing path",
			args:     []string{"validate", filepath.Join(t.TempDir(), "nope")},
			wantCode: 1,
			wantOut:  []string{"*: cannot read: no such file or folder"},
		},
		{
			name:     "a folder without PROCESS.md",
			args:     []string{"validate", t.TempDir()},
			wantCode: 1,
			wantOut:  []string{"*: not a process folder: it has no PROCESS.md"},
		},
		{name: "no paths", args: []string{"validate"}, wantCode: 2, wantErr: "name at least one PROCESS.md file or process folder"},
		{name: "unknown flag", args: []string{"validate", "--strict", good}, wantCode: 2, wantErr: "flag provided but not defined: -strict"},
		{name: "unknown profile", args: []string{"validate", "--profiles", "parallel-2", good}, wantCode: 2, wantErr: `unknown profile "parallel-2"`},
		{name: "check-1 without an evaluator", args: []string{"validate", "--profiles", "parallel-1,check-1", good}, wantCode: 2, wantErr: "--profiles check-1 needs --evaluator"},
		{name: "help", args: []string{"validate", "-h"}, wantCode: 0, wantErr: "usage: baton validate"},
		{name: "no command", args: nil, wantCode: 2, wantErr: "usage: baton <command>"},
		{name: "unknown command", args: []string{"frobnicate"}, wantCode: 2, wantErr: `unknown command "frobnicate"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			code, out, errOut := runBaton(tc.args...)
			if code != tc.wantCode {
				t.Errorf("exit %d, want %d\nstdout: %s\nstderr: %s", code, tc.wantCode, out, errOut)
			}
			if tc.wantOut != nil {
				lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
				if len(lines) != len(tc.wantOut) {
					t.Fatalf("stdout:\n%s\nwant %d lines: %q", out, len(tc.wantOut), tc.wantOut)
				}
				for i, want := range tc.wantOut {
					if !matchLine(lines[i], want) {
						t.Errorf("line %d: %q, want %q", i, lines[i], want)
					}
				}
			}
			if !strings.Contains(errOut, tc.wantErr) {
				t.Errorf("stderr %q does not contain %q", errOut, tc.wantErr)
			}
		})
	}
}

// matchLine compares a line with a pattern where "*" stands for any text.
func matchLine(line, pattern string) bool {
	parts := strings.Split(pattern, "*")
	if !strings.HasPrefix(line, parts[0]) {
		return false
	}
	rest := line[len(parts[0]):]
	for i, p := range parts[1:] {
		if i == len(parts)-2 {
			return strings.HasSuffix(rest, p)
		}
		j := strings.Index(rest, p)
		if j < 0 {
			return false
		}
		rest = rest[j+len(p):]
	}
	return rest == ""
}

func TestValidateCommandFixtures(t *testing.T) {
	t.Parallel()
	fx := fixturesDir(t)
	dirs, err := filepath.Glob(filepath.Join(fx, "*"))
	if err != nil || len(dirs) != 12 {
		t.Fatalf("fixtures: %v, %d", err, len(dirs))
	}
	code, out, errOut := runBaton(append([]string{"validate", "--evaluator"}, dirs...)...)
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	for _, d := range dirs {
		if !strings.Contains(out, d+": ok "+filepath.Base(d)+" sha256:") {
			t.Errorf("no ok line for %s in\n%s", d, out)
		}
	}
}

func TestValidateCommandJSON(t *testing.T) {
	t.Parallel()
	good := writeProcess(t, "demo", "PROCESS.md", demo)
	bad := writeProcess(t, "bad", "PROCESS.md", "---\nname: bad\n")
	code, out, errOut := runBaton("validate", "--json", good, bad)
	if code != 1 {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	type issue struct {
		Line    int    `json:"line"`
		Column  int    `json:"column"`
		Message string `json:"message"`
	}
	var got []struct {
		Path   string   `json:"path"`
		Name   string   `json:"name"`
		Hash   string   `json:"hash"`
		Issues []*issue `json:"issues"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if len(got) != 2 {
		t.Fatalf("%d results:\n%s", len(got), out)
	}
	if got[0].Path != good || got[0].Name != "demo" || len(got[0].Hash) != 64 || got[0].Issues == nil || len(got[0].Issues) != 0 {
		t.Errorf("first result %+v", got[0])
	}
	want := issue{Line: 1, Column: 1, Message: `frontmatter: no closing "---" line`}
	if got[1].Path != bad || got[1].Name != "" || got[1].Hash != "" || len(got[1].Issues) != 1 || *got[1].Issues[0] != want {
		t.Errorf("second result %+v", got[1])
	}
	if !strings.Contains(out, `"issues": []`) {
		t.Errorf("a valid process should print an empty issues list:\n%s", out)
	}
}

func TestBatonHelp(t *testing.T) {
	t.Parallel()
	code, out, _ := runBaton("help")
	if code != 0 || !strings.HasPrefix(out, "usage: baton <command> [flags] [arguments]\n") {
		t.Errorf("exit %d, stdout:\n%s", code, out)
	}
	if !strings.Contains(out, "\n  validate   check PROCESS.md files and print their content hashes\n") {
		t.Errorf("help does not list validate:\n%s", out)
	}
}

// --tools offers baton-tools-1 with the file's tools: the example refund
// process is valid with the example registration and refused without it.
func TestValidateTools(t *testing.T) {
	examples := filepath.Join(repoRoot(t), "examples")
	refund := filepath.Join(examples, "refund")
	code, out, _ := runBaton("validate", "--tools", filepath.Join(examples, "tools.yaml"), refund)
	if code != 0 || !strings.HasPrefix(out, refund+": ok refund sha256:") {
		t.Fatalf("with --tools: %d %q", code, out)
	}
	code, out, _ = runBaton("validate", refund)
	if code != 1 || !strings.Contains(out, refund+":19:5: steps[0].tools: needs the baton-tools-1 profile") {
		t.Fatalf("without --tools: %d %q", code, out)
	}
	bad := writeProcess(t, "reg", "tools.yaml", "servers: []\n")
	code, out, _ = runBaton("validate", "--tools", bad, refund)
	if code != 1 || !strings.Contains(out, bad+":1:10: servers: at least one server") {
		t.Fatalf("a bad registration: %d %q", code, out)
	}
}

// repoRoot returns the repository root, the folder holding go.mod.
func repoRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		if filepath.Dir(dir) == dir {
			t.Fatal("no go.mod above the working folder")
		}
		dir = filepath.Dir(dir)
	}
}
