package proctest

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

// write puts a test file (and, when process is set, its PROCESS.md) in a
// fresh folder and returns the test file's path.
func write(t *testing.T, test, process string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "review")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if process == "" {
		b, err := os.ReadFile("testdata/review/PROCESS.md")
		if err != nil {
			t.Fatal(err)
		}
		process = string(b)
	}
	if err := os.WriteFile(filepath.Join(dir, "PROCESS.md"), []byte(process), 0o644); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "PROCESS.test.yaml")
	if err := os.WriteFile(path, []byte(test), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func runOne(t *testing.T, path string, o Options) *Report {
	t.Helper()
	rep, err := Run([]string{path}, o)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func text(r *Report) string {
	var b bytes.Buffer
	r.WriteText(&b)
	return b.String()
}

func TestCasePasses(t *testing.T) {
	rep := runOne(t, "testdata/review", Options{})
	if rep.Status() != 0 || rep.Passed != 1 {
		t.Fatalf("status %d:\n%s", rep.Status(), text(rep))
	}
	if got := text(rep); !strings.Contains(got, "ok   testdata/review/PROCESS.test.yaml: approved and paid\n") {
		t.Fatalf("no ok line:\n%s", got)
	}
}

// A case's route coverage names each route no case took, and a case that
// takes them leaves none.
func TestCoverage(t *testing.T) {
	rep := runOne(t, "testdata/review", Options{})
	f := rep.Files[0]
	want := []Route{
		{Kind: RouteNext, From: "draft", To: "drop"},
		{Kind: RouteReject, From: "review", To: "draft"},
		{Kind: RouteTimeout, From: "paid", To: "late"},
		{Kind: RouteFinish, From: "late", To: "late"},
		{Kind: RouteFinish, From: "drop", To: "dropped"},
	}
	if f.Routes != 7 || !reflect.DeepEqual(f.Untested, want) {
		t.Fatalf("routes %d, untested %v; want 7 and %v", f.Routes, f.Untested, want)
	}
	out := text(rep)
	for _, line := range []string{"coverage testdata/review/PROCESS.test.yaml: 2 of 7 routes taken", "  untested: on_reject review → draft", "  untested: on_timeout paid → late", "  untested: finish drop (dropped)"} {
		if !strings.Contains(out, line+"\n") {
			t.Errorf("report lacks %q:\n%s", line, out)
		}
	}

	full := write(t, `cases:
  - name: rejected once, then late
    script:
      - agent: a_1
        submit: draft
        next: review
      - role: reviewers
        decide: review
        decision: rejected
        note: Shorter.
      - agent: a_1
        submit: draft
        next: review
      - role: reviewers
        decide: review
        decision: approved
      - after: 2d
        expect: { outcome: late }
  - name: dropped
    script:
      - agent: a_1
        submit: draft
        next: drop
        expect: { outcome: dropped }
  - name: paid
    script:
      - agent: a_1
        submit: draft
        next: review
      - role: reviewers
        decide: review
        decision: approved
      - event: payment-received
        expect: { outcome: done }
`, "")
	rep = runOne(t, full, Options{})
	if rep.Status() != 0 || len(rep.Files[0].Untested) != 0 {
		t.Fatalf("status %d, untested %v:\n%s", rep.Status(), rep.Files[0].Untested, text(rep))
	}
	// Picking cases with Run leaves coverage out: it would name routes
	// other cases take.
	rep = runOne(t, full, Options{Run: regexp.MustCompile("^dropped$")})
	if rep.Passed != 1 || rep.Files[0].Untested != nil {
		t.Fatalf("--run: passed %d, untested %v", rep.Passed, rep.Files[0].Untested)
	}
}

// A process changed under its tests fails them: the case, the line and
// column of the expectation that no longer holds, and what came instead.
func TestProcessChangedUnderTests(t *testing.T) {
	src, err := os.ReadFile("testdata/review/PROCESS.md")
	if err != nil {
		t.Fatal(err)
	}
	test, err := os.ReadFile("testdata/review/PROCESS.test.yaml")
	if err != nil {
		t.Fatal(err)
	}
	changed := strings.Replace(string(src), "  - id: done\n    finish: done", "  - id: done\n    finish: settled", 1)
	rep := runOne(t, write(t, string(test), changed), Options{})
	out := text(rep)
	if rep.Status() != 1 || rep.Failed != 1 {
		t.Fatalf("status %d, want 1:\n%s", rep.Status(), out)
	}
	if !regexp.MustCompile(`FAIL \S+PROCESS.test.yaml:17:11: approved and paid: event payment-received: expected outcome done, got outcome settled, run ended`).MatchString(out) {
		t.Fatalf("the failure does not say where and what:\n%s", out)
	}
	f := rep.Files[0].Cases[0].Failure
	if f.Pos != (Pos{17, 11}) || f.Action != "event payment-received" {
		t.Fatalf("failure %+v", f)
	}

	// The review moved to another group: the test's expectation of who
	// sees it fails first.
	changed = strings.Replace(string(src), "person: reviewers", "person: editors", 1)
	out = text(runOne(t, write(t, string(test), changed), Options{}))
	if !strings.Contains(out, "PROCESS.test.yaml:9:17: approved and paid: submit draft: expected open work review→reviewers, got open work review→editors") {
		t.Fatalf("report:\n%s", out)
	}
}

// An action the process refuses fails the case with the machine's own
// refusal, unless the case expects it; an expected refusal that does not
// come fails too.
func TestRefusals(t *testing.T) {
	path := write(t, `cases:
  - name: claim a step that is not ready
    script:
      - agent: a_1
        claim: review
  - name: output missing a field
    script:
      - agent: a_1
        submit: draft
        output: {}
        next: review
  - name: expected refusal
    script:
      - agent: a_1
        submit: draft
        output: {}
        next: review
        expect: { refused: { code: not_accepted, issues: ["output.text: missing"] } }
  - name: expected refusal that does not come
    script:
      - agent: a_1
        submit: draft
        next: review
        expect: { refused: not_accepted }
`, "")
	rep := runOne(t, path, Options{})
	out := text(rep)
	if rep.Passed != 1 || rep.Failed != 3 {
		t.Fatalf("passed %d failed %d:\n%s", rep.Passed, rep.Failed, out)
	}
	for _, want := range []string{
		":4:9: claim a step that is not ready: claim review: expected the action accepted, got refused: forbidden: Step \"review\" is not an agent step",
		":8:9: output missing a field: submit draft: expected the action accepted, got refused: not_accepted: The submission was not accepted: output.text: missing. [output.text: missing]",
		"expected refusal that does not come: submit draft: expected refused: not_accepted, got accepted",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
}

// A test file that is not valid is reported at its line and column, and
// makes the status 2.
func TestInvalidFiles(t *testing.T) {
	for _, c := range []struct{ name, src, want string }{
		{"unknown key", "cases:\n  - name: a\n    script:\n      - agent: a_1\n        claim: draft\n        outptu: {}\n", ":6:9: a script entry: unknown key \"outptu\""},
		{"two actions", "cases:\n  - name: a\n    script:\n      - agent: a_1\n        claim: draft\n        submit: draft\n", ":6:9: a script entry does one thing, not claim and submit"},
		{"wrong actor", "cases:\n  - name: a\n    script:\n      - role: reviewers\n        claim: draft\n", ":4:9: claim is not done by role: agent"},
		{"bad duration", "cases:\n  - name: a\n    script:\n      - after: soon\n", ":4:16: after: \"soon\" is not a duration"},
		{"no cases", "process: PROCESS.md\n", ":1:1: the test file needs cases"},
		{"bad yaml", "cases:\n  - name: a\n    script: [\n", ":3:1: yaml: line 3: did not find expected node content"},
		{"decision", "cases:\n  - name: a\n    script:\n      - role: reviewers\n        decide: review\n        decision: ok\n", ":6:19: decision is one of"},
	} {
		t.Run(c.name, func(t *testing.T) {
			rep := runOne(t, write(t, c.src, ""), Options{})
			if rep.Status() != 2 || len(rep.Invalid) != 1 {
				t.Fatalf("status %d, invalid %v", rep.Status(), rep.Invalid)
			}
			if got := rep.Invalid[0].Error(); !strings.Contains(got, c.want) {
				t.Fatalf("error %q, want it to contain %q", got, c.want)
			}
		})
	}
	// An invalid process is the test file's problem too.
	rep := runOne(t, write(t, "cases:\n  - name: a\n    script: []\n", "---\nname: review\n---\n"), Options{})
	if rep.Status() != 2 || !strings.Contains(rep.Invalid[0].Error(), "process ") {
		t.Fatalf("status %d, invalid %v", rep.Status(), rep.Invalid)
	}
}

func TestExplore(t *testing.T) {
	rep := runOne(t, "testdata/review", Options{Explore: 100, Seed: 42})
	e := rep.Files[0].Explore
	if e == nil || e.Seed != 42 || e.Walks != 100 {
		t.Fatalf("explore %+v", e)
	}
	if len(e.Unreached)+len(e.Endless)+len(e.Unavoidable) != 0 || len(e.Untested) != 0 {
		t.Fatalf("100 walks of review: %+v", e)
	}
	if out := text(rep); !strings.Contains(out, "explore testdata/review/PROCESS.test.yaml: 100 walks, seed 42\n  every finish reached") {
		t.Fatalf("report:\n%s", out)
	}
	// The same seed walks the same walks.
	again := runOne(t, "testdata/review", Options{Explore: 3, Seed: 7}).Files[0].Explore
	once := runOne(t, "testdata/review", Options{Explore: 3, Seed: 7}).Files[0].Explore
	if !reflect.DeepEqual(again, once) {
		t.Fatalf("seed 7 walked differently: %+v and %+v", again, once)
	}

	// One walk reaches one finish at most: the others are reported.
	_, env, err := Load("testdata/review/PROCESS.test.yaml", Options{})
	if err != nil {
		t.Fatal(err)
	}
	one := Explore(env, nil, 1, 1)
	if len(one.Unreached) < 2 {
		t.Fatalf("one walk: unreached %v", one.Unreached)
	}
	if out := text(&Report{Files: []*FileReport{{Path: "x", Explore: one}}}); !strings.Contains(out, "  never reached: finish ") {
		t.Fatalf("report:\n%s", out)
	}

	// Inputs that leave no room in run data: every submission is refused,
	// whatever route the agent picks.
	big := map[string]any{"amount": 1, "pad": strings.Repeat("x", 262000)}
	src := strings.Replace(mustRead(t, "testdata/review/PROCESS.md"), "  amount: number\n", "  amount: number\n  pad: string\n", 1)
	p := write(t, "cases:\n  - name: a\n    script: []\n", src)
	_, env, err = Load(p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	full := Explore(env, big, 5, 3)
	if len(full.Unavoidable) != 1 || !strings.Contains(full.Unavoidable[0].What, "every submission to step draft with sample output was refused") {
		t.Fatalf("unavoidable %+v", full.Unavoidable)
	}
	if out := text(&Report{Files: []*FileReport{{Path: "x", Explore: full}}}); !strings.Contains(out, "  unavoidable refusal (walk 0): every submission to step draft") {
		t.Fatalf("report:\n%s", out)
	}

	// A walk that does not end within its bound is a run that cannot end.
	defer func(n int) { walkBound = n }(walkBound)
	walkBound = 1
	short := Explore(env, nil, 1, 1)
	if len(short.Endless) != 1 || !strings.Contains(short.Endless[0].What, "the run did not end in 1 actions") {
		t.Fatalf("endless %+v", short.Endless)
	}
}

func mustRead(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The runner is pure: it runs on the machine alone, and links nothing of
// Temporal, PostgreSQL or the network.
func TestPure(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		if strings.HasPrefix(dep, "go.temporal.io") || strings.Contains(dep, "pgx") || strings.HasPrefix(dep, "net") || strings.Contains(dep, "baton/internal/") || strings.Contains(dep, "baton/workflows") {
			t.Errorf("proctest depends on %s", dep)
		}
	}
}

// Time passes in virtual time: a due time passes at its own moment, and an
// expectation of what is overdue says which step is.
func TestOverdue(t *testing.T) {
	src := strings.Replace(mustRead(t, "testdata/review/PROCESS.md"), "    on_reject: draft\n", "    on_reject: draft\n    due: 1d\n", 1)
	path := write(t, `cases:
  - name: the review is overdue after a day
    script:
      - agent: a_1
        submit: draft
        next: review
      - after: 23h
        expect: { overdue: [] }
      - after: 2h
        expect: { overdue: [review] }
  - name: wrong
    script:
      - agent: a_1
        submit: draft
        next: review
      - after: 1d
        expect: { overdue: [] }
`, src)
	rep := runOne(t, path, Options{})
	out := text(rep)
	if rep.Passed != 1 || !strings.Contains(out, ":17:17: wrong: after 1d: expected overdue none, got overdue review") {
		t.Fatalf("report:\n%s", out)
	}
}

// family copies the rfp process and its children into a fresh folder with
// test as rfp's test file, and returns the test file's path.
func family(t *testing.T, test string) string {
	t.Helper()
	root := t.TempDir()
	for _, name := range []string{"rfp", "screening", "contract-review"} {
		b, err := os.ReadFile(filepath.Join("testdata", name, "PROCESS.md"))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Join(root, name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, name, "PROCESS.md"), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(root, "rfp", "PROCESS.test.yaml")
	if err := os.WriteFile(path, []byte(test), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// A case answers a process step's children: one answer for every child,
// or one per item in item order, as they start two at a time; the join,
// the routes on their outcomes and the rework of a rejected contract
// follow; coverage counts each on_outcome route.
func TestSubprocessCases(t *testing.T) {
	rep := runOne(t, "testdata/rfp", Options{})
	if rep.Status() != 0 || rep.Passed != 3 || len(rep.Files[0].Untested) != 0 || rep.Files[0].Routes != 3 {
		t.Fatalf("status %d, untested %v:\n%s", rep.Status(), rep.Files[0].Untested, text(rep))
	}

	rep = runOne(t, family(t, `processes: { screening: ../screening }
cases:
  - name: all clear
    script:
      - agent: a_buyer
        submit: collect
        output: { suppliers: [ { name: Acme } ] }
      - child: screen_each
        answer: { outcome: cleared }
        expect: { ready: [compare] }
`), Options{})
	want := []Route{
		{Kind: RouteOutcome, From: "screen_each", To: "review_failures", Outcome: "failed"},
		{Kind: RouteOutcome, From: "legal", To: "compare", Outcome: "rejected"},
		{Kind: RouteFinish, From: "awarded", To: "awarded"},
	}
	if rep.Status() != 0 || !reflect.DeepEqual(rep.Files[0].Untested, want) {
		t.Fatalf("untested %v, want %v:\n%s", rep.Files[0].Untested, want, text(rep))
	}
	if out := text(rep); !strings.Contains(out, "  untested: on_outcome legal (rejected) → compare") {
		t.Fatalf("report:\n%s", out)
	}
}

// A child's answer the child cannot end with, more answers than children,
// and child: on a step that runs no process fail the case and say why.
func TestSubprocessCaseFailures(t *testing.T) {
	for _, tc := range []struct{ name, script, want string }{
		{"an outcome the child has not", `
      - child: screen_each
        answer: { outcome: approved }`, "screening cannot end approved; it ends cleared, flagged, failed, cancelled"},
		{"more answers than children", `
      - child: screen_each
        answer: [ { outcome: cleared }, { outcome: cleared }, { outcome: cleared } ]`, "step screen_each had 2 children to answer; the answer lists 3"},
		{"a step that runs no process", `
      - child: compare
        answer: { outcome: cleared }`, "step compare runs no process"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep := runOne(t, family(t, `processes: { screening: ../screening }
cases:
  - name: `+tc.name+`
    script:
      - agent: a_buyer
        submit: collect
        output: { suppliers: [ { name: Acme }, { name: Birch } ] }`+tc.script+"\n"), Options{})
			if rep.Status() != 1 || !strings.Contains(text(rep), tc.want) {
				t.Fatalf("want a failure saying %q:\n%s", tc.want, text(rep))
			}
		})
	}
}

// Explored walks end a process step's children any way the child can, so
// a process with process steps can always go on.
func TestExploreAnswersChildren(t *testing.T) {
	f, env, err := Load("testdata/rfp/PROCESS.test.yaml", Options{})
	if err != nil {
		t.Fatal(err)
	}
	rep := Explore(env, f.Cases[0].Inputs, 40, 7)
	for _, e := range rep.Endless {
		if strings.Contains(e.What, "nothing anyone can do") {
			t.Fatalf("a walk stopped at children no one ended: %+v", e)
		}
	}
	if len(rep.Unreached) != 0 {
		t.Fatalf("unreached %v", rep.Unreached)
	}
}
