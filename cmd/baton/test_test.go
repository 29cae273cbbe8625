package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The process tests shipped beside the examples and for the conformance
// fixtures (read from the shared folder, never copied) pass: go test runs
// baton test on them.
func TestShippedProcessTests(t *testing.T) {
	var out, errb bytes.Buffer
	code := run([]string{"test", "../../examples"}, &out, &errb)
	if code != 0 {
		t.Fatalf("baton test: exit %d\n%s%s", code, out.String(), errb.String())
	}
	for _, want := range []string{
		"ok   ../../examples/refund/PROCESS.test.yaml: a refund waits for finance, then goes through\n",
		"ok   ../../examples/conformance/vendor-check.test.yaml: a failed check sends the work back with its issues\n",
		"coverage ../../examples/conformance/major-incident.test.yaml: 5 of 5 routes taken\n",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	// A test file for every fixture.
	fixtures, err := os.ReadDir("../../../shared/conformance/fixtures")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fixtures {
		if _, err := os.Stat(filepath.Join("../../examples/conformance", f.Name()+".test.yaml")); err != nil {
			t.Errorf("fixture %s has no process test: %v", f.Name(), err)
		}
	}
}

// copyRefund copies the refund example and its tool registration into a
// fresh folder, with its PROCESS.md changed by edit, and returns the
// example's folder.
func copyRefund(t *testing.T, edit func(string) string) string {
	t.Helper()
	root := t.TempDir()
	dir := filepath.Join(root, "refund")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for src, dst := range map[string]string{
		"../../examples/tools.yaml":               filepath.Join(root, "tools.yaml"),
		"../../examples/refund/PROCESS.test.yaml": filepath.Join(dir, "PROCESS.test.yaml"),
		"../../examples/refund/PROCESS.md":        filepath.Join(dir, "PROCESS.md"),
	} {
		b, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasSuffix(dst, "PROCESS.md") {
			b = []byte(edit(string(b)))
		}
		if err := os.WriteFile(dst, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// A process changed under its tests fails them: exit 1, with the case and
// the reason.
func TestProcessTestsFailOnChange(t *testing.T) {
	// The close becomes an approval: the test's completion of it is refused.
	dir := copyRefund(t, func(s string) string {
		return strings.Replace(s, "    task: Read the ticket", "    approve: Read the ticket", 1)
	})
	var out, errb bytes.Buffer
	code := run([]string{"test", dir}, &out, &errb)
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s%s", code, out.String(), errb.String())
	}
	want := "PROCESS.test.yaml:27:9: a late order is declined and the complaint closed: decide close completed: expected the action accepted, got refused: invalid: Work item w_1 does not accept \"completed\". [decision: not one of approved, rejected, failed]"
	if !strings.Contains(out.String(), want) {
		t.Fatalf("output lacks %q:\n%s", want, out.String())
	}
	if !strings.Contains(out.String(), "2 passed, 2 failed\n") {
		t.Fatalf("no summary:\n%s", out.String())
	}
}

func TestProcessTestsFlags(t *testing.T) {
	dir := copyRefund(t, func(s string) string { return s })
	var out, errb bytes.Buffer
	if code := run([]string{"test", "--json", "--run", "refused", dir}, &out, &errb); code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out.String(), errb.String())
	}
	var rep struct {
		Files []struct {
			Cases []struct {
				Case string `json:"case"`
				OK   bool   `json:"ok"`
			} `json:"cases"`
		} `json:"files"`
		Passed, Failed int
	}
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("--json: %v\n%s", err, out.String())
	}
	if rep.Passed != 2 || len(rep.Files) != 1 || len(rep.Files[0].Cases) != 2 || !strings.Contains(rep.Files[0].Cases[0].Case, "refused") {
		t.Fatalf("--run refused: %+v", rep)
	}

	out.Reset()
	if code := run([]string{"test", "--explore", "20", "--seed", "5", dir}, &out, &errb); code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out.String(), errb.String())
	}
	if !strings.Contains(out.String(), "PROCESS.test.yaml: 20 walks, seed 5\n") {
		t.Fatalf("--explore:\n%s", out.String())
	}

	// An invalid test file: exit 2, at its line and column.
	if err := os.WriteFile(filepath.Join(dir, "PROCESS.test.yaml"), []byte("tools: ../tools.yaml\ncases:\n  - name: x\n    script:\n      - agent: a\n        sumbit: resolve\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if code := run([]string{"test", dir}, &out, &errb); code != 2 || !strings.Contains(out.String(), "PROCESS.test.yaml:6:9: a script entry: unknown key \"sumbit\"") {
		t.Fatalf("exit %d, want 2 at 6:9:\n%s", code, out.String())
	}
	if code := run([]string{"test", "--run", "(", dir}, &out, &errb); code != 2 {
		t.Fatalf("bad --run: exit %d, want 2", code)
	}
}
