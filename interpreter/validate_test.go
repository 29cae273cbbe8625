package interpreter

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// processDoc wraps frontmatter lines in "---" fences and a body. Frontmatter
// line 1 is line 2 of the file.
func processDoc(front string) string {
	return "---\n" + strings.TrimPrefix(front, "\n") + "---\n# Body\n"
}

// issueTexts returns a refusal's issues as "LINE:COL: message" strings.
func issueTexts(t *testing.T, err error) []string {
	t.Helper()
	if err == nil {
		return nil
	}
	var pe *ProcessError
	if !errors.As(err, &pe) {
		t.Fatalf("error %T is not a *ProcessError: %v", err, err)
	}
	out := make([]string, len(pe.Issues))
	for i, is := range pe.Issues {
		out[i] = is.String()
	}
	return out
}

// coreOnly offers every tool but no profile.
func coreOnly() *Offer { o := DefaultOffer(); o.Profiles = nil; return &o }

// withCheck offers the default and check-1.
func withCheck() *Offer {
	o := DefaultOffer()
	o.Profiles = append(o.Profiles, ProfileCheck)
	return &o
}

// without offers every profile and every tool but the one named.
func without(tool Tool) *Offer {
	o := withCheck()
	var tools []string
	for _, t := range o.Tools {
		if t != string(tool) {
			tools = append(tools, t)
		}
	}
	o.Tools = tools
	return o
}

type validateCase struct {
	name   string
	front  string // frontmatter; the whole file is processDoc(front)
	folder string
	offer  *Offer // nil: parallel-1 and check-1 and every tool
	want   []string
}

func runValidateCases(t *testing.T, cases []validateCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			offer := tc.offer
			if offer == nil {
				offer = withCheck()
			}
			p, err := Parse([]byte(processDoc(tc.front)), &ParseOptions{Folder: tc.folder, Offer: offer})
			got := issueTexts(t, err)
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("issues:\n got: %q\nwant: %q", got, tc.want)
			}
			if len(tc.want) == 0 && (p == nil || p.Hash == "") {
				t.Errorf("accepted process has no hash")
			}
			if len(tc.want) > 0 && p != nil {
				t.Errorf("refused process returned %+v", p)
			}
		})
	}
}

// The steps most cases share: an agent step, an approval and a finish.
const okSteps = `steps:
  - id: work
    agent: Do it.
  - id: review
    person: boss
    approve: Check it.
    on_reject: work
  - id: done
    finish: ok
`

func TestValidateTop(t *testing.T) {
	t.Parallel()
	runValidateCases(t, []validateCase{
		{
			name:  "minimal process is accepted",
			front: "name: demo\ndescription: A demo.\n" + okSteps,
		},
		{
			name:  "name pattern",
			front: "name: Bad_Name\ndescription: A demo.\n" + okSteps,
			want:  []string{"2:7: name: must match ^[a-z0-9]+(-[a-z0-9]+)*$"},
		},
		{
			name:  "name length",
			front: "name: " + strings.Repeat("a", 65) + "\ndescription: A demo.\n" + okSteps,
			want:  []string{"2:7: name: must be at most 64 characters"},
		},
		{
			name:   "name must equal the folder",
			front:  "name: demo\ndescription: A demo.\n" + okSteps,
			folder: "other",
			want:   []string{`2:7: name: must equal its folder's name "other"`},
		},
		{
			name:   "name equal to the folder is accepted",
			front:  "name: demo\ndescription: A demo.\n" + okSteps,
			folder: "demo",
		},
		{
			name:  "name and description required",
			front: okSteps,
			want: []string{
				"2:1: name: required",
				"2:1: description: required",
			},
		},
		{
			name:  "name must be a string",
			front: "name: 123\ndescription: A demo.\n" + okSteps,
			want:  []string{"2:7: name: expected a string, found a number"},
		},
		{
			name:  "description blank",
			front: "name: demo\ndescription: '  '\n" + okSteps,
			want:  []string{"3:14: description: must not be blank"},
		},
		{
			name:  "unknown top-level field, even one the JSON Schema allows",
			front: "name: demo\ndescription: A demo.\nfiles: true\nversion: 2\n" + okSteps,
			want: []string{
				"4:1: files: unknown field",
				"5:1: version: unknown field",
			},
		},
		{
			name:  "steps required",
			front: "name: demo\ndescription: A demo.\n",
			want:  []string{"2:1: steps: required"},
		},
		{
			name:  "steps must be a list",
			front: "name: demo\ndescription: A demo.\nsteps: {id: a}\n",
			want:  []string{"4:8: steps: expected a list of steps, found a mapping"},
		},
		{
			name:  "at least one step",
			front: "name: demo\ndescription: A demo.\nsteps: []\n",
			want:  []string{"4:8: steps: at least one step"},
		},
		{
			name:  "a step must be a mapping",
			front: "name: demo\ndescription: A demo.\nsteps:\n  - work\n  - id: done\n    finish: ok\n",
			want:  []string{"5:5: steps[0]: expected a mapping, found a string"},
		},
	})
}

func TestValidateRequires(t *testing.T) {
	t.Parallel()
	head := "name: demo\ndescription: A demo.\n"
	runValidateCases(t, []validateCase{
		{
			name:  "systems accepted",
			front: head + "requires:\n  systems: [salesforce, gmail]\n" + okSteps,
		},
		{
			name:  "systems required",
			front: head + "requires: {}\n" + okSteps,
			want:  []string{"4:11: requires.systems: required"},
		},
		{
			name:  "at least one system",
			front: head + "requires:\n  systems: []\n" + okSteps,
			want:  []string{"5:12: requires.systems: at least one name"},
		},
		{
			name:  "system name pattern and duplicates",
			front: head + "requires:\n  systems: [Sales Force, gmail, gmail]\n" + okSteps,
			want: []string{
				"5:13: requires.systems[0]: must match ^[a-z0-9]+(-[a-z0-9]+)*$ and be at most 64 characters",
				`5:33: requires.systems[2]: "gmail" is listed twice`,
			},
		},
		{
			name:  "unknown key in requires",
			front: head + "requires:\n  systems: [gmail]\n  tools: [x]\n" + okSteps,
			want:  []string{"6:3: requires.tools: unknown field"},
		},
		{
			name:  "requires must be a mapping",
			front: head + "requires: [gmail]\n" + okSteps,
			want:  []string{"4:11: requires: expected a mapping, found a list"},
		},
	})
}

func TestValidateFields(t *testing.T) {
	t.Parallel()
	head := "name: demo\ndescription: A demo.\n"
	runValidateCases(t, []validateCase{
		{
			name: "every field form is accepted",
			front: head + `inputs:
  a: string
  b: { type: number, description: Spend, optional: true, one_of: [1, 2.5] }
  c: { type: list, items: { type: string, one_of: [x, y] } }
  d: { type: list, items: date }
  e: { type: date, one_of: [2026-01-01] }
  f: { type: boolean, one_of: [true] }
  g: object
  h: datetime
  i: person
` + okSteps,
		},
		{
			name:  "unknown short type",
			front: head + "inputs:\n  start: dat\n" + okSteps,
			want:  []string{`5:10: inputs.start: unknown type "dat"`},
		},
		{
			name:  "unknown long type",
			front: head + "inputs:\n  start: { type: dat }\n" + okSteps,
			want:  []string{`5:18: inputs.start.type: unknown type "dat"`},
		},
		{
			name:  "type required",
			front: head + "inputs:\n  start: { description: When }\n" + okSteps,
			want:  []string{"5:10: inputs.start.type: required"},
		},
		{
			name:  "unknown field key",
			front: head + "inputs:\n  start: { type: date, format: iso }\n" + okSteps,
			want:  []string{"5:24: inputs.start.format: unknown field"},
		},
		{
			name:  "field must be a type or a mapping",
			front: head + "inputs:\n  start:\n  n: [number]\n" + okSteps,
			want: []string{
				"5:9: inputs.start: expected a type name or a field mapping, found a null",
				"6:6: inputs.n: expected a type name or a field mapping, found a list",
			},
		},
		{
			name:  "inputs must be a mapping",
			front: head + "inputs: [a]\n" + okSteps,
			want:  []string{"4:9: inputs: expected a mapping, found a list"},
		},
		{
			name:  "optional must be a boolean, description a string",
			front: head + "inputs:\n  a: { type: string, optional: yes, description: 5 }\n" + okSteps,
			want: []string{
				"5:32: inputs.a.optional: expected true or false, found a string",
				"5:50: inputs.a.description: expected a string, found a number",
			},
		},
		{
			name: "one_of values have the field's type",
			front: head + `inputs:
  a: { type: number, one_of: [1, two] }
  b: { type: date, one_of: [2026-02-30] }
  c: { type: string, one_of: [x, 1] }
` + okSteps,
			want: []string{
				"5:34: inputs.a.one_of[1]: expected number",
				"6:29: inputs.b.one_of[0]: expected date",
				"7:34: inputs.c.one_of[1]: expected string",
			},
		},
		{
			name:  "one_of empty, duplicate, on a list",
			front: head + "inputs:\n  a: { type: string, one_of: [] }\n  b: { type: number, one_of: [17, 017] }\n  c: { type: list, one_of: [x] }\n  d: { type: number, one_of: [2.5, 0.25e1, 25e-1, 2.05] }\n  e: { type: boolean, one_of: [true, True] }\n" + okSteps,
			want: []string{
				"5:30: inputs.a.one_of: at least one value",
				"6:35: inputs.b.one_of[1]: listed twice",
				"7:20: inputs.c.one_of: not allowed on type list",
				"8:36: inputs.d.one_of[1]: listed twice",
				"8:44: inputs.d.one_of[2]: listed twice",
				"9:38: inputs.e.one_of[1]: listed twice",
			},
		},
		{
			name:  "items only on list, optional not on items",
			front: head + "inputs:\n  a: { type: string, items: string }\n  b: { type: list, items: { type: string, optional: true } }\n  c: { type: list, items: thing }\n" + okSteps,
			want: []string{
				"5:22: inputs.a.items: allowed only on type list",
				"6:43: inputs.b.items.optional: not allowed on list items",
				`7:27: inputs.c.items: unknown type "thing"`,
			},
		},
		{
			name:  "empty field name",
			front: head + "inputs:\n  '': string\n" + okSteps,
			want:  []string{"5:3: inputs: a field name must not be empty"},
		},
		{
			name: "output fields are checked the same way",
			front: head + `steps:
  - id: work
    agent: Do it.
    output: { total: money }
  - id: done
    finish: ok
`,
			want: []string{`7:22: steps[0].output.total: unknown type "money"`},
		},
	})
}

func TestValidateSteps(t *testing.T) {
	t.Parallel()
	head := "name: demo\ndescription: A demo.\ninputs:\n  owner: person\n  start: datetime\n  day: date\n"
	runValidateCases(t, []validateCase{
		{
			name: "id required, pattern, unique",
			front: head + `steps:
  - agent: Do it.
    next: b
  - id: B
    agent: Do it.
    next: b
  - id: b
    agent: Do it.
  - id: b
    finish: ok
`,
			want: []string{
				"9:5: steps[0].id: required",
				"11:9: steps[1].id: must match ^[a-z][a-z0-9_-]{0,63}$",
				`16:9: steps[3].id: "b" is already the id of steps[2]`,
			},
		},
		{
			name: "exactly one kind key",
			front: head + `steps:
  - id: a
    next: b
  - id: b
    agent: Do it.
    task: Do it too.
    person: boss
  - id: done
    finish: ok
`,
			want: []string{
				"9:5: steps[0]: needs a kind key: one of agent, task, approve, wait, wait_until, wait_for, finish, parallel, process",
				"13:5: steps[1].task: a step has exactly one kind key; this one already has agent",
			},
		},
		{
			name: "unknown step key",
			front: head + `steps:
  - id: a
    agent: Do it.
    colour: blue
  - id: done
    finish: ok
`,
			want: []string{"11:5: steps[0].colour: unknown field"},
		},
		{
			name: "keys only their kinds allow",
			front: head + `steps:
  - id: a
    agent: Do it.
    on_reject: a
    timeout: 1d
    person: boss
  - id: b
    approve: Fine?
    person: boss
    output: { x: string }
    evidence: [link]
  - id: c
    wait: 1h
    due: 1d
  - id: done
    finish: ok
    next: a
`,
			want: []string{
				"11:5: steps[0].on_reject: not allowed on an agent step (only on approve steps)",
				"12:5: steps[0].timeout: not allowed on an agent step (only on wait_for steps)",
				"13:5: steps[0].person: not allowed on an agent step (only on task and approve steps)",
				"17:5: steps[1].output: not allowed on an approve step (only on agent and task steps)",
				"18:5: steps[1].evidence: not allowed on an approve step (only on agent and task steps)",
				"21:5: steps[2].due: not allowed on a wait step (only on agent, task and approve steps)",
				"24:5: steps[3].next: a finish has no next",
			},
		},
		{
			name: "parallel step takes next and nothing else",
			front: head + `steps:
  - id: fork
    parallel: [a, b]
    due: 1d
    next: done
  - id: a
    agent: A.
    next: join
  - id: b
    agent: B.
    next: join
  - id: done
    finish: ok
`,
			want: []string{"11:5: steps[0].due: not allowed on a parallel step (only on agent, task and approve steps)"},
		},
		{
			name: "task and approve need person",
			front: head + `steps:
  - id: a
    task: Do it.
  - id: b
    approve: Fine?
  - id: done
    finish: ok
`,
			want: []string{
				"9:5: steps[0].person: required on a task step",
				"11:5: steps[1].person: required on an approve step",
			},
		},
		{
			name: "person roles, initiator and paths",
			front: head + `steps:
  - id: a
    task: Do it.
    person: initiator
    output: { reviewer: person, note: string }
  - id: b
    task: Do it.
    person: finance-approver
  - id: c
    approve: Fine?
    person: steps.a.output.reviewer
  - id: d
    approve: Fine?
    person: inputs.owner
  - id: done
    finish: ok
`,
		},
		{
			name: "person path must name a declared person field",
			front: head + `steps:
  - id: a
    task: Do it.
    person: inputs.manager
    output: { note: string }
  - id: b
    task: Do it.
    person: inputs.start
  - id: c
    approve: Fine?
    person: steps.a.output.note
  - id: d
    approve: Fine?
    person: steps.zz.output.x
  - id: e
    approve: Fine?
    person: owner.email
  - id: f
    approve: Fine?
    person: steps.a.note
  - id: done
    finish: ok
`,
			want: []string{
				"11:13: steps[0].person: inputs.manager is not a declared field",
				"15:13: steps[1].person: inputs.start is a datetime field; it must be a person field",
				"18:13: steps[2].person: steps.a.output.note is a string field; it must be a person field",
				`21:13: steps[3].person: steps.zz.output.x names unknown step "zz"`,
				`24:13: steps[4].person: "owner.email" is not a path inputs.<field> or steps.<id>.output.<field>`,
				`27:13: steps[5].person: "steps.a.note" is not a path inputs.<field> or steps.<id>.output.<field>`,
			},
		},
		{
			name: "wait_until must name a declared datetime field",
			front: head + `steps:
  - id: a
    wait_until: inputs.start
  - id: b
    wait_until: inputs.day
  - id: c
    wait_until: inputs.later
  - id: done
    finish: ok
`,
			want: []string{
				"12:17: steps[1].wait_until: inputs.day is a date field; it must be a datetime field",
				"14:17: steps[2].wait_until: inputs.later is not a declared field",
			},
		},
		{
			name: "wait_for event name, timeout and on_timeout",
			front: head + `steps:
  - id: a
    wait_for: Paid Event
  - id: b
    wait_for: paid
    on_timeout: c
  - id: c
    wait_for: paid
    timeout: 1d
    on_timeout: nowhere
  - id: done
    finish: ok
`,
			want: []string{
				"10:15: steps[0].wait_for: an event name must match ^[a-z][a-z0-9_-]{0,63}$",
				"13:5: steps[1].on_timeout: needs timeout",
				`17:17: steps[2].on_timeout: unknown step "nowhere"`,
			},
		},
		{
			name: "durations",
			front: head + `steps:
  - id: a
    agent: Do it.
    due: 0d
  - id: b
    agent: Do it.
    due: 1w
  - id: c
    wait: 3651d
  - id: d
    wait_for: paid
    timeout: 30
  - id: e
    task: Do it.
    person: boss
    due: 1.5h
  - id: f
    wait: 3650d
  - id: g
    wait: 87601h
  - id: done
    finish: ok
`,
			want: []string{
				"11:10: steps[0].due: must be a whole number followed by m, h or d, such as 30m, 4h or 3d",
				"14:10: steps[1].due: must be a whole number followed by m, h or d, such as 30m, 4h or 3d",
				"16:11: steps[2].wait: must be at most 3650 days",
				"19:14: steps[3].timeout: expected a string, found a number",
				"23:10: steps[4].due: must be a whole number followed by m, h or d, such as 30m, 4h or 3d",
				"27:11: steps[6].wait: must be at most 3650 days",
			},
		},
		{
			name: "kind values",
			front: head + `steps:
  - id: a
    agent: ''
  - id: b
    agent: [x]
  - id: done
    finish:
`,
			want: []string{
				"10:12: steps[0].agent: must not be blank",
				"12:12: steps[1].agent: expected a string, found a list",
				"14:12: steps[2].finish: expected a string, found a null",
			},
		},
		{
			name: "next targets and lists",
			front: head + `steps:
  - id: a
    agent: Do it.
    next: nowhere
  - id: b
    agent: Do it.
    next: [c]
  - id: c
    approve: Fine?
    person: boss
    next: [d, done]
  - id: d
    agent: Do it.
    next: [done, { to: done }, { when: Later }, { to: e, when: '', why: x }]
  - id: e
    agent: Do it.
    next: 5
  - id: done
    finish: ok
`,
			want: []string{
				`11:11: steps[0].next: unknown step "nowhere"`,
				`12:5: steps[1]: step "b" is not reachable from the first step`,
				"14:11: steps[1].next: a list needs two or more routes; name a single next as a step id",
				`15:5: steps[2]: step "c" is not reachable from the first step`,
				"18:11: steps[2].next: a list of routes is allowed only on agent and task steps; an approve step names one next",
				`19:5: steps[3]: step "d" is not reachable from the first step`,
				`21:24: steps[3].next[1].to: "done" is listed twice`,
				"21:32: steps[3].next[2].to: required",
				"21:64: steps[3].next[3].when: must not be blank",
				"21:68: steps[3].next[3].why: unknown field",
				`22:5: steps[4]: step "e" is not reachable from the first step`,
				"24:11: steps[4].next: expected a step id or a list of routes, found a number",
				`25:5: steps[5]: step "done" is not reachable from the first step`,
			},
		},
		{
			name: "on_reject names a step",
			front: head + `steps:
  - id: a
    agent: Do it.
  - id: b
    approve: Fine?
    person: boss
    on_reject: nowhere
  - id: done
    finish: ok
`,
			want: []string{`14:16: steps[1].on_reject: unknown step "nowhere"`},
		},
		{
			name: "evidence kinds",
			front: head + `steps:
  - id: a
    agent: Do it.
    evidence: [file, link, pdf, link]
  - id: done
    finish: ok
`,
			want: []string{
				`11:28: steps[0].evidence[2]: unknown evidence kind "pdf" (file or link)`,
				`11:33: steps[0].evidence[3]: "link" is listed twice`,
			},
		},
	})
}

// longCycle writes n agent steps s0..s(n-1), each continuing at the next by
// default and the last going back to s0, then a finish.
func longCycle(n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "  - id: s%d\n    agent: Step %d.\n", i, i)
	}
	b.WriteString("    next: [s0, done]\n  - id: done\n    finish: ok\n")
	return b.String()
}

func TestValidateGraph(t *testing.T) {
	t.Parallel()
	head := "name: demo\ndescription: A demo.\n"
	runValidateCases(t, []validateCase{
		{
			name: "unreachable step",
			front: head + `steps:
  - id: a
    agent: Do it.
    next: done
  - id: orphan
    agent: Never.
  - id: done
    finish: ok
`,
			want: []string{`8:5: steps[1]: step "orphan" is not reachable from the first step`},
		},
		{
			name: "on_reject and on_timeout edges count for reachability",
			front: head + `steps:
  - id: a
    wait_for: paid
    timeout: 1d
    on_timeout: late
    next: review
  - id: fix
    agent: Fix it.
    next: review
  - id: late
    agent: Chase it.
    next: review
  - id: review
    approve: Fine?
    person: boss
    on_reject: fix
  - id: done
    finish: ok
`,
		},
		{
			name: "cycle along next",
			front: head + `steps:
  - id: a
    agent: Do it.
  - id: b
    agent: Do it.
    next: a
  - id: done
    finish: ok
`,
			want: []string{
				`9:11: steps[1].next: "a" closes a cycle a → b → a; only on_reject may go back`,
				`10:5: steps[2]: step "done" is not reachable from the first step`,
			},
		},
		{
			name: "cycle along on_timeout",
			front: head + `steps:
  - id: a
    agent: Do it.
  - id: b
    wait_for: paid
    timeout: 1d
    on_timeout: a
  - id: done
    finish: ok
`,
			want: []string{`10:17: steps[1].on_timeout: "a" closes a cycle a → b → a; only on_reject may go back`},
		},
		{
			name: "a step naming itself",
			front: head + `steps:
  - id: a
    agent: Do it.
    next: [a, done]
  - id: done
    finish: ok
`,
			want: []string{`7:12: steps[0].next[0]: "a" closes a cycle a → a; only on_reject may go back`},
		},
		{
			name:  "a long cycle is shown shortened",
			front: head + "steps:\n" + longCycle(12),
			want:  []string{`29:12: steps[11].next[0]: "s0" closes a cycle s0 → s1 → s2 → s3 → … → s8 → s9 → s10 → s11 → s0; only on_reject may go back`},
		},
		{
			name: "last step must name next",
			front: head + `steps:
  - id: a
    agent: Do it.
  - id: b
    agent: Do it.
`,
			want: []string{"7:5: steps[1]: the last step must name next, or be a finish"},
		},
		{
			name: "join without a parallel step",
			front: head + `steps:
  - id: a
    agent: Do it.
    next: join
  - id: done
    finish: ok
`,
			want: []string{
				`7:11: steps[0].next: unknown step "join" (join ends a branch, and this process has no parallel step)`,
				`8:5: steps[1]: step "done" is not reachable from the first step`,
			},
		},
		{
			name: "a step named join without a parallel step is an ordinary step",
			front: head + `steps:
  - id: a
    agent: Do it.
    next: join
  - id: join
    finish: ok
`,
		},
	})
}

func TestValidateParallel(t *testing.T) {
	t.Parallel()
	head := "name: demo\ndescription: A demo.\n"
	runValidateCases(t, []validateCase{
		{
			name: "branches of several steps, routes and a wait are accepted",
			front: head + `steps:
  - id: fork
    parallel: [a, b]
    next: review
  - id: a
    agent: A.
    next: [a2, join]
  - id: a2
    wait_for: done-a
    timeout: 1d
    on_timeout: join
    next: a3
  - id: a3
    approve: A fine?
    person: boss
    on_reject: a
    next: join
  - id: b
    agent: B.
    next: join
  - id: review
    approve: Fine?
    person: boss
    on_reject: fork
  - id: done
    finish: ok
`,
		},
		{
			name:  "parallel needs the profile",
			offer: coreOnly(),
			front: head + `steps:
  - id: fork
    parallel: [a, b]
    next: done
  - id: a
    agent: A.
    next: join
  - id: b
    agent: B.
    next: join
  - id: done
    finish: ok
`,
			want: []string{"6:15: steps[0].parallel: needs the parallel-1 profile, which this server does not offer"},
		},
		{
			name: "entries: two or more, known, once, not itself",
			front: head + `steps:
  - id: fork
    parallel: [a]
    next: fork2
  - id: fork2
    parallel: [a, a, fork2, zz]
    next: done
  - id: a
    agent: A.
    next: join
  - id: done
    finish: ok
`,
			want: []string{
				"6:15: steps[0].parallel: needs two or more branch entries",
				`9:19: steps[1].parallel[1]: "a" is listed twice`,
				"9:22: steps[1].parallel[2]: a parallel step cannot be its own branch",
				`9:29: steps[1].parallel[3]: unknown step "zz"`,
				`11:5: steps[2]: step "a" is in two branches; a step belongs to one branch`,
			},
		},
		{
			name: "a branch step names next; join is reserved",
			front: head + `steps:
  - id: fork
    parallel: [a, b]
    next: done
  - id: a
    agent: A.
  - id: b
    agent: B.
    next: join
  - id: join
    agent: Never.
    next: done
  - id: done
    finish: ok
`,
			want: []string{
				"8:5: steps[1]: a step inside a branch must name next: a step of its branch, or join",
				`13:9: steps[3].id: "join" is reserved in a process with a parallel step`,
			},
		},
		{
			name: "a branch never routes to a finish, its parallel step or another parallel step",
			front: head + `steps:
  - id: fork
    parallel: [a, b, c]
    next: done
  - id: a
    agent: A.
    next: done
  - id: b
    agent: B.
    next: fork
  - id: c
    agent: C.
    next: inner
  - id: inner
    parallel: [x, y]
    next: join
  - id: x
    agent: X.
    next: join
  - id: y
    agent: Y.
    next: join
  - id: done
    finish: ok
`,
			want: []string{
				`10:11: steps[1].next: a branch step cannot route to a finish ("done"); end the branch with join`,
				`13:11: steps[2].next: a branch step cannot route to its parallel step "fork"`,
				`16:11: steps[3].next: a branch cannot contain a parallel step ("inner"); parallel-1 has no nesting`,
				"19:11: steps[4].next: join is allowed only inside a parallel branch",
			},
		},
		{
			name: "a branch step never routes outside its branch",
			front: head + `steps:
  - id: fork
    parallel: [a, b]
    next: review
  - id: a
    agent: A.
    next: [join, review]
  - id: b
    agent: B.
    next: join
  - id: review
    approve: Fine?
    person: boss
    next: done
  - id: done
    finish: ok
`,
			want: []string{`10:18: steps[1].next[1]: a branch step cannot route to "review", which is outside its branch`},
		},
		{
			name: "a branch cannot start at a finish or a parallel step",
			front: head + `steps:
  - id: fork
    parallel: [done, inner]
    next: done
  - id: inner
    parallel: [x, y]
    next: done
  - id: x
    agent: X.
    next: join
  - id: y
    agent: Y.
    next: join
  - id: done
    finish: ok
`,
			want: []string{
				`6:16: steps[0].parallel[0]: a branch cannot start at a finish ("done"); a branch ends with join`,
				`6:22: steps[0].parallel[1]: a branch cannot contain a parallel step ("inner"); parallel-1 has no nesting`,
			},
		},
		{
			name: "no step outside the branches routes into one",
			front: head + `steps:
  - id: start
    agent: Start.
    next: [fork, b]
  - id: fork
    parallel: [a, b]
    next: review
  - id: a
    agent: A.
    next: join
  - id: b
    agent: B.
    next: join
  - id: review
    approve: Fine?
    person: boss
    on_reject: a
  - id: done
    finish: ok
`,
			want: []string{
				`7:18: steps[0].next[1]: "b" is inside a branch of "fork"; only the parallel step starts a branch`,
				`20:16: steps[4].on_reject: "a" is inside a branch of "fork"; return to the parallel step to run every branch again`,
			},
		},
		{
			name: "on_reject after the join returns to a step before the rejecting one",
			front: head + `steps:
  - id: start
    agent: Start.
  - id: fork
    parallel: [a, b]
    next: review
  - id: a
    agent: A.
    next: join
  - id: b
    agent: B.
    next: join
  - id: review
    approve: Fine?
    person: boss
    on_reject: start
    next: check
  - id: check
    approve: Still fine?
    person: boss
    on_reject: fork
    next: wrap
  - id: wrap
    agent: Wrap up.
    next: audit
  - id: later
    agent: Later.
    next: done
  - id: audit
    approve: Audit.
    person: boss
    on_reject: later
    next: done
  - id: done
    finish: ok
`,
			want: []string{
				`35:16: steps[8].on_reject: "later" does not come before "audit"; after a parallel step, on_reject returns to the parallel step or a step before the rejecting one`,
			},
		},
		{
			name: "a parallel step without next continues into its branch",
			front: head + `steps:
  - id: fork
    parallel: [a, b]
  - id: a
    agent: A.
    next: join
  - id: b
    agent: B.
    next: join
`,
			want: []string{`5:5: steps[0]: without next it continues at "a", which is inside a branch of "fork"; name next`},
		},
		{
			name: "on_reject inside a branch stays in the branch",
			front: head + `steps:
  - id: start
    agent: Start.
  - id: fork
    parallel: [a, b]
    next: done
  - id: a
    approve: A?
    person: boss
    on_reject: start
    next: join
  - id: b
    approve: B?
    person: boss
    on_reject: a
    next: join
  - id: done
    finish: ok
`,
			want: []string{
				"13:16: steps[2].on_reject: must name a step in the same branch",
				"18:16: steps[3].on_reject: must name a step in the same branch",
			},
		},
		{
			name: "the first step cannot be in a branch; join only in next and on_timeout",
			front: head + `steps:
  - id: a
    agent: A.
    next: join
  - id: fork
    parallel: [a, b]
    next: done
  - id: b
    approve: B?
    person: boss
    on_reject: join
    next: join
  - id: done
    finish: ok
`,
			want: []string{
				"5:5: steps[0]: the first step cannot be inside a branch",
				`8:5: steps[1]: step "fork" is not reachable from the first step`,
				`11:5: steps[2]: step "b" is not reachable from the first step`,
				"14:16: steps[2].on_reject: join is allowed only in next and on_timeout",
				`16:5: steps[3]: step "done" is not reachable from the first step`,
			},
		},
		{
			name: "a branch cycle never reaches join",
			front: head + `steps:
  - id: fork
    parallel: [a, b]
    next: done
  - id: a
    agent: A.
    next: a2
  - id: a2
    agent: A2.
    next: a
  - id: b
    agent: B.
    next: join
  - id: done
    finish: ok
`,
			want: []string{
				`8:5: steps[1]: step "a" never reaches join`,
				`11:5: steps[2]: step "a2" never reaches join`,
				`13:11: steps[2].next: "a" closes a cycle a → a2 → a; only on_reject may go back`,
			},
		},
	})
}

func TestValidateCheck(t *testing.T) {
	t.Parallel()
	head := "name: demo\ndescription: A demo.\nsteps:\n  - id: a\n    agent: Do it.\n"
	tail := "  - id: done\n    finish: ok\n"
	runValidateCases(t, []validateCase{
		{
			name:  "short form",
			front: head + "    check: The summary states a verdict.\n    advisory: true\n" + tail,
		},
		{
			name:  "check needs check-1",
			offer: func() *Offer { o := DefaultOffer(); return &o }(),
			front: head + "    check: The summary states a verdict.\n" + tail,
			want:  []string{"7:5: steps[0].check: needs the check-1 profile, which this server does not offer (it needs an evaluator)"},
		},
		{
			name:  "short form blank, list empty",
			front: head + "    check: ''\n  - id: b\n    agent: B.\n    check: []\n" + tail,
			want: []string{
				"7:12: steps[0].check: must not be blank",
				"10:12: steps[1].check: at least one question",
			},
		},
		{
			name:  "check only on agent and task; advisory only beside check",
			front: head + "    advisory: false\n  - id: r\n    approve: Fine?\n    person: boss\n    check: Is it fine?\n" + tail,
			want: []string{
				"7:5: steps[0].advisory: allowed only beside check",
				"11:5: steps[1].check: not allowed on an approve step (only on agent and task steps)",
			},
		},
		{
			name: "yes/no thresholds",
			front: head + `    check:
      - ask: Is it right?
        pass: 1.5
        fail: -0.1
      - ask: Is it complete?
        pass: 0.5
        fail: 0.7
        unsure: [x]
        confidence: 0.8
      - pass: 0.9
      - ask: Other?
        weight: 2
      - Is it?
` + tail,
			want: []string{
				"9:15: steps[0].check[0].pass: must be between 0 and 1",
				"10:15: steps[0].check[0].fail: must be between 0 and 1",
				"13:15: steps[0].check[1].fail: must not be above pass (0.5)",
				"14:9: steps[0].check[1].unsure: allowed only on a choice question (one_of)",
				"15:9: steps[0].check[1].confidence: allowed only on a choice (one_of) or rubric (levels) question",
				"16:9: steps[0].check[2].ask: required",
				"18:9: steps[0].check[3].weight: unknown field",
				"19:9: steps[0].check[4]: expected a mapping, found a string",
			},
		},
		{
			name: "choice questions",
			front: head + `    check:
      - ask: What does it do?
        one_of: { states: States it. }
        pass: [states, hedges]
        fail: 0.5
      - ask: What else?
        one_of: { a: A., b: B., c: C. }
        pass: [a, a]
        unsure: [a, d]
        confidence: 2
      - ask: Which?
        one_of: { a: A., b: B. }
      - ask: Both?
        one_of: { a: A., b: B. }
        levels: [x, y]
        pass: [a]
` + tail,
			want: []string{
				"9:17: steps[0].check[0].one_of: at least two answers",
				`10:24: steps[0].check[0].pass[1]: "hedges" is not an answer in one_of`,
				"11:9: steps[0].check[0].fail: allowed only on a yes/no question",
				`14:19: steps[0].check[1].pass[1]: "a" is listed twice`,
				`15:18: steps[0].check[1].unsure[0]: "a" already passes`,
				`15:21: steps[0].check[1].unsure[1]: "d" is not an answer in one_of`,
				"16:21: steps[0].check[1].confidence: must be between 0 and 1",
				"17:9: steps[0].check[2].pass: required on a choice question: the answer names that pass",
				"21:9: steps[0].check[3].levels: a question has one_of or levels, not both",
			},
		},
		{
			name: "question shapes",
			front: head + `    check:
      - ask: Yes?
        pass: [yes]
      - ask: Which?
        one_of: [a, b]
        pass: [a]
      - ask: Which else?
        one_of: { '': Empty., b: B., c: 5 }
        pass: [b]
      - ask: How?
        levels: Good.
        pass: 0
      - ask: How well?
        levels: [Bad., ' ', 7]
        pass: 1
  - id: b
    agent: B.
    check: 5
` + tail,
			want: []string{
				"9:15: steps[0].check[0].pass: expected a number, found a list",
				"11:17: steps[0].check[1].one_of: expected a mapping, found a list",
				"14:19: steps[0].check[2].one_of: an answer name must not be empty",
				"14:41: steps[0].check[2].one_of.c: expected a string, found a number",
				"17:17: steps[0].check[3].levels: expected a list, found a string",
				"20:24: steps[0].check[4].levels[1]: must not be blank",
				"20:29: steps[0].check[4].levels[2]: expected a string, found a number",
				"24:12: steps[1].check: expected a question or a list of questions, found a number",
			},
		},
		{
			name: "rubric questions",
			front: head + `    check:
      - ask: How complete?
        levels: [Nothing.]
        pass: 1
      - ask: How good?
        levels: [Bad., Good.]
        pass: 2
        fail: 0.1
        unsure: [x]
      - ask: How neat?
        levels: [Bad., Good.]
        pass: 0.5
      - ask: How fast?
        levels: [Slow., Fast.]
` + tail,
			want: []string{
				"9:17: steps[0].check[0].levels: 2 to 10 levels, found 1",
				"10:15: steps[0].check[0].pass: must be a level from 0 to 0",
				"13:15: steps[0].check[1].pass: must be a level from 0 to 1",
				"14:9: steps[0].check[1].fail: allowed only on a yes/no question",
				"15:9: steps[0].check[1].unsure: allowed only on a choice question (one_of)",
				"18:15: steps[0].check[2].pass: must be a level number from 0",
				"19:9: steps[0].check[3].pass: required on a rubric question: the lowest passing level, from 0",
			},
		},
	})
}

func TestValidateOffer(t *testing.T) {
	t.Parallel()
	head := "name: demo\ndescription: A demo.\nsteps:\n"
	runValidateCases(t, []validateCase{
		{
			name:  "file evidence needs upload",
			offer: without(ToolUpload),
			front: head + "  - id: a\n    agent: Do it.\n    evidence: [link, file]\n  - id: done\n    finish: ok\n",
			want:  []string{"7:22: steps[0].evidence[1]: file evidence needs the upload tool, which this server does not offer"},
		},
		{
			name:  "link evidence needs no upload",
			offer: without(ToolUpload),
			front: head + "  - id: a\n    agent: Do it.\n    evidence: [link]\n  - id: done\n    finish: ok\n",
		},
		{
			name:  "wait_for needs send_event",
			offer: without(ToolSendEvent),
			front: head + "  - id: a\n    wait_for: paid\n  - id: done\n    finish: ok\n",
			want:  []string{"6:15: steps[0].wait_for: needs the send_event tool, which this server does not offer"},
		},
	})
}

// TestValidateManyIssues reports every issue of a badly broken file at once,
// in file order.
func TestValidateManyIssues(t *testing.T) {
	t.Parallel()
	runValidateCases(t, []validateCase{{
		name:   "everything at once",
		folder: "demo",
		offer:  coreOnly(),
		front: `name: Demo
inputs:
  start: dat
  owner: { type: person, optional: maybe }
steps:
  - id: First
    agent: Do it.
    evidence: [file, photo]
    due: 2w
    next: [review]
  - id: review
    approve: Fine?
    on_reject: nowhere
    next: [a, b]
  - id: fork
    parallel: [x, y]
  - id: lost
    wait_for: paid
    on_timeout: review
  - id: review
    colour: red
    finish: ok
    finish: again
`,
		want: []string{
			"2:1: description: required",
			"2:7: name: must match ^[a-z0-9]+(-[a-z0-9]+)*$",
			`4:10: inputs.start: unknown type "dat"`,
			"5:36: inputs.owner.optional: expected true or false, found a string",
			"7:9: steps[0].id: must match ^[a-z][a-z0-9_-]{0,63}$",
			`9:22: steps[0].evidence[1]: unknown evidence kind "photo" (file or link)`,
			"10:10: steps[0].due: must be a whole number followed by m, h or d, such as 30m, 4h or 3d",
			"11:11: steps[0].next: a list needs two or more routes; name a single next as a step id",
			"12:5: steps[1].person: required on an approve step",
			`14:16: steps[1].on_reject: unknown step "nowhere"`,
			"15:11: steps[1].next: a list of routes is allowed only on agent and task steps; an approve step names one next",
			`15:12: steps[1].next[0]: unknown step "a"`,
			`15:15: steps[1].next[1]: unknown step "b"`,
			`16:5: steps[2]: step "fork" is not reachable from the first step`,
			"17:15: steps[2].parallel: needs the parallel-1 profile, which this server does not offer",
			`17:16: steps[2].parallel[0]: unknown step "x"`,
			`17:19: steps[2].parallel[1]: unknown step "y"`,
			`18:5: steps[3]: step "lost" is not reachable from the first step`,
			"20:5: steps[3].on_timeout: needs timeout",
			`21:9: steps[4].id: "review" is already the id of steps[1]`,
			"22:5: steps[4].colour: unknown field",
			"24:5: steps[4].finish: duplicate key, first at line 23",
		},
	}})
}
