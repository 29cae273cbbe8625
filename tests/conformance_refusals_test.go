package tests

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/baton-run/baton/interpreter"
)

// probe builds a PROCESS.md from a frontmatter head and steps.
func probe(head, steps string) string {
	if head == "" {
		head = "name: refusal-probe\ndescription: A process that breaks one rule.\ninputs:\n  who: person\n  when: datetime\n  n: number\n"
	}
	return "---\n" + head + "steps:\n" + steps + "---\n\n# Probe\n"
}

const okSteps = `  - id: a
    agent: Do it.
    next: b
  - id: b
    person: reviewers
    approve: Approve it.
    on_reject: a
  - id: done
    finish: ok
`

// §2: one publication attempt per rule class; each is refused, and nothing
// is published.
func TestSection2_PublicationRefusals(t *testing.T) {
	b := start(t, options{})
	ctx := context.Background()
	// The probe itself is valid: the refusals below are the rule, not noise.
	if _, err := b.registry.Import(ctx, []byte(probe("", okSteps)), "", "u_admin"); err != nil {
		t.Fatalf("the valid probe was refused: %v", err)
	}
	cases := []struct{ name, src string }{
		{"2.1 name pattern", probe("name: Refusal_Probe\ndescription: d.\n", okSteps)},
		{"2.1 description required", probe("name: refusal-probe\n", okSteps)},
		{"2.1 unknown top-level field", probe("name: refusal-probe\ndescription: d.\nowner: me\n", okSteps)},
		{"2.1 duplicate keys", probe("name: refusal-probe\ndescription: d.\ndescription: again.\n", okSteps)},
		{"2.1 requires.systems names", probe("name: refusal-probe\ndescription: d.\nrequires: { systems: [Sales Force] }\n", okSteps)},
		{"2.1 requires.systems listed once", probe("name: refusal-probe\ndescription: d.\nrequires: { systems: [gmail, gmail] }\n", okSteps)},
		{"2.1 at least one step", "---\nname: refusal-probe\ndescription: d.\nsteps: []\n---\n"},
		{"2.1 no frontmatter", "# Just a body\n"},
		{"2.2 exactly one kind key", probe("", "  - id: a\n    agent: Do it.\n    task: And this.\n    person: reviewers\n    next: done\n  - id: done\n    finish: ok\n")},
		{"2.2 a kind key", probe("", "  - id: a\n    next: done\n  - id: done\n    finish: ok\n")},
		{"2.2 step id pattern", probe("", "  - id: A-Step\n    agent: Do it.\n    next: done\n  - id: done\n    finish: ok\n")},
		{"2.2 step ids unique", probe("", "  - id: a\n    agent: Do it.\n    next: a\n  - id: a\n    finish: ok\n")},
		{"2.2 next names a step", probe("", "  - id: a\n    agent: Do it.\n    next: nowhere\n  - id: done\n    finish: ok\n")},
		{"2.2 on_reject names a step", probe("", "  - id: a\n    person: reviewers\n    approve: OK?\n    on_reject: nowhere\n  - id: done\n    finish: ok\n")},
		{"2.2 every step reachable", probe("", "  - id: a\n    agent: Do it.\n    next: done\n  - id: island\n    agent: Never reached.\n    next: done\n  - id: done\n    finish: ok\n")},
		{"2.2 last step names next", probe("", "  - id: done\n    finish: ok\n  - id: a\n    agent: Do it.\n")},
		{"2.2 finish has no next", probe("", "  - id: a\n    agent: Do it.\n  - id: done\n    finish: ok\n    next: a\n")},
		{"2.2 no cycle along next", probe("", "  - id: a\n    agent: Do it.\n    next: b\n  - id: b\n    agent: Again.\n    next: [{ to: a, when: again }, { to: done, when: finished }]\n  - id: done\n    finish: ok\n")},
		{"2.2 list next only on agent and task", probe("", "  - id: a\n    person: reviewers\n    approve: OK?\n    next: [done, other]\n  - id: other\n    finish: no\n  - id: done\n    finish: ok\n")},
		{"2.2 list next has two or more", probe("", "  - id: a\n    agent: Do it.\n    next: [done]\n  - id: done\n    finish: ok\n")},
		{"2.2 task needs person", probe("", "  - id: a\n    task: Do it.\n  - id: done\n    finish: ok\n")},
		{"2.2 person path names a declared field", probe("", "  - id: a\n    person: inputs.boss\n    task: Do it.\n  - id: done\n    finish: ok\n")},
		{"2.2 person path names a person field", probe("", "  - id: a\n    person: inputs.n\n    task: Do it.\n  - id: done\n    finish: ok\n")},
		{"2.2 wait_until path names a datetime field", probe("", "  - id: a\n    wait_until: inputs.who\n  - id: done\n    finish: ok\n")},
		{"2.2 keys the kind allows", probe("", "  - id: a\n    person: reviewers\n    approve: OK?\n    output: { x: string }\n  - id: done\n    finish: ok\n")},
		{"2.2 on_reject only on approve", probe("", "  - id: a\n    agent: Do it.\n    on_reject: a\n  - id: done\n    finish: ok\n")},
		{"2.2 timeout only on wait_for", probe("", "  - id: a\n    agent: Do it.\n    timeout: 1h\n  - id: done\n    finish: ok\n")},
		{"2.2 unknown step key", probe("", "  - id: a\n    agent: Do it.\n    retries: 3\n  - id: done\n    finish: ok\n")},
		{"2.2 evidence kinds", probe("", "  - id: a\n    agent: Do it.\n    evidence: [photo]\n  - id: done\n    finish: ok\n")},
		{"2.3 field types", probe("name: refusal-probe\ndescription: d.\ninputs:\n  n: integer\n", okSteps)},
		{"2.3 one_of values have the field's type", probe("name: refusal-probe\ndescription: d.\ninputs:\n  tier: { type: number, one_of: [gold, silver] }\n", okSteps)},
		{"2.3 field object keys", probe("name: refusal-probe\ndescription: d.\ninputs:\n  n: { type: number, min: 1 }\n", okSteps)},
		{"2.3 optional is a boolean (yes is a string)", probe("name: refusal-probe\ndescription: d.\ninputs:\n  n: { type: number, optional: yes }\n", okSteps)},
		{"2.4 durations", probe("", "  - id: a\n    agent: Do it.\n    due: 2w\n  - id: done\n    finish: ok\n")},
		{"2.4 wait duration", probe("", "  - id: a\n    wait: 90s\n  - id: done\n    finish: ok\n")},
		{"2.4 no zero duration", probe("", "  - id: a\n    wait: 0m\n  - id: done\n    finish: ok\n")},
		{"parallel-1 join only inside a branch", probe("", "  - id: a\n    agent: Do it.\n    next: join\n  - id: done\n    finish: ok\n")},
		{"parallel-1 branch never routes to a finish", probe("", "  - id: fork\n    parallel: [x, y]\n    next: done\n  - id: x\n    agent: X.\n    next: done\n  - id: y\n    agent: Y.\n    next: join\n  - id: done\n    finish: ok\n")},
		{"parallel-1 two branches", probe("", "  - id: fork\n    parallel: [x]\n    next: done\n  - id: x\n    agent: X.\n    next: join\n  - id: done\n    finish: ok\n")},
		{"parallel-1 no nesting", probe("", "  - id: fork\n    parallel: [x, y]\n    next: done\n  - id: x\n    parallel: [p, q]\n    next: join\n  - id: p\n    agent: P.\n    next: join\n  - id: q\n    agent: Q.\n    next: join\n  - id: y\n    agent: Y.\n    next: join\n  - id: done\n    finish: ok\n")},
		{"parallel-1 step id join reserved", probe("", "  - id: fork\n    parallel: [x, y]\n    next: join\n  - id: x\n    agent: X.\n    next: join\n  - id: y\n    agent: Y.\n    next: join\n  - id: join\n    agent: Gather.\n    next: done\n  - id: done\n    finish: ok\n")},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := b.registry.Import(ctx, []byte(tc.src), "", "u_admin")
			if err == nil {
				t.Fatalf("imported:\n%s", tc.src)
			}
			var pe *interpreter.ProcessError
			if !errors.As(err, &pe) || len(pe.Issues) == 0 {
				t.Fatalf("refused without issues: %v", err)
			}
		})
	}
	// §2.1 a folder must carry the process's name.
	dir := filepath.Join(t.TempDir(), "not-the-name")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "PROCESS.md"), []byte(probe("", okSteps)), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := b.registry.ImportDir(ctx, dir, "u_admin"); err == nil {
		t.Fatal("a folder named otherwise than its process was imported")
	}
	// Nothing above was published, including the valid probe's draft.
	var procs struct{ Items []any }
	b.connect(agentID).ok("list_processes", map[string]any{}, &procs)
	if len(procs.Items) != 0 {
		t.Fatalf("refused or unpublished processes were listed: %+v", procs.Items)
	}
}
