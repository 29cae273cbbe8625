package interpreter

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// withSubprocess offers what Baton offers with check-1 and
// baton-subprocess-1, and cat.
func withSubprocess(cat *Catalog) *Offer {
	o := withCheck()
	o.Profiles = append(o.Profiles, ProfileSubprocess)
	o.Processes = cat
	return o
}

// The children the parent cases name. supplier-screening's version 1
// has no region input; version 2 adds it.
const (
	screeningV1 = `name: supplier-screening
description: Screen one supplier.
inputs:
  supplierName: string
  bidUsd: number
  rfp: string
steps:
  - id: screen
    agent: Screen the supplier.
    output: { cleared: boolean }
    next:
      - cleared
      - flagged
  - id: cleared
    finish: cleared
  - id: flagged
    finish: flagged
`
	screeningV2 = `name: supplier-screening
description: Screen one supplier.
inputs:
  supplierName: string
  bidUsd: number
  rfp: string
  region: { type: string, optional: true, one_of: [emea, apac] }
  since: { type: date, optional: true }
steps:
  - id: screen
    agent: Screen the supplier.
    output: { cleared: boolean }
  - id: review
    person: reviewer
    approve: Confirm the screening.
  - id: cleared
    finish: cleared
`
	contractReview = `name: contract-review
description: Review a contract.
inputs:
  contract: string
  counterparty: string
  signer: { type: person, optional: true }
steps:
  - id: review
    person: initiator
    approve: Review the contract.
  - id: signed
    finish: signed
`
	checked = `name: checked-screening
description: Screening with a check.
steps:
  - id: screen
    agent: Screen.
    check: Is the screening complete?
  - id: done
    finish: done
`
	evented = `name: evented
description: Waits for an event.
steps:
  - id: hold
    wait_for: released
  - id: done
    finish: done
`
)

// publish parses src against cat as a publication would and adds it as the
// latest version.
func publish(t *testing.T, cat *Catalog, src string, version int) {
	t.Helper()
	p, bound, err := ParseAndBind([]byte(processDoc(src)), &ParseOptions{Offer: withSubprocess(cat)})
	if err != nil {
		t.Fatalf("publish %s v%d: %v", strings.SplitN(src, "\n", 2)[0], version, err)
	}
	cat.Add(CatalogEntry{Process: p, Version: version, Children: bound}, true)
}

// nested returns a process named name whose one process step runs child
// (no process step when child is "").
func nested(name, child string) string {
	if child == "" {
		return "name: " + name + "\ndescription: A level.\nsteps:\n  - id: done\n    finish: done\n"
	}
	return "name: " + name + "\ndescription: A level.\nsteps:\n  - id: run\n    process: " + child + "\n  - id: done\n    finish: done\n"
}

// testProcesses is the catalog of one organization: the children above,
// a chain level-0 … level-4 where each level runs the one below, and
// processes that run rfp (an earlier rfp, v1, is published).
func testProcesses(t *testing.T) *Catalog {
	cat := NewCatalog("published in this organization")
	publish(t, cat, screeningV1, 1)
	publish(t, cat, screeningV2, 2)
	publish(t, cat, contractReview, 1)
	publish(t, cat, nested("level-0", ""), 1)
	for k := 1; k <= 4; k++ {
		publish(t, cat, nested("level-"+string(rune('0'+k)), "level-"+string(rune('0'+k-1))), 1)
	}
	publish(t, cat, nested("rfp", ""), 1)
	publish(t, cat, nested("loop-a", "rfp"), 1)
	publish(t, cat, nested("loop-b", "loop-a"), 1)
	offer := withSubprocess(cat)
	for _, src := range []string{checked, evented} {
		p, err := Parse([]byte(processDoc(src)), &ParseOptions{Offer: offer})
		if err != nil {
			t.Fatal(err)
		}
		cat.Add(CatalogEntry{Process: p, Version: 1}, true)
	}
	return cat
}

// rfpFront is the parent: its process step is the given lines, starting
// on line 15 of the file (line 14 is "  - id: screen_each").
func rfpFront(lines ...string) string {
	return `name: rfp
description: Run an RFP.
inputs:
  rfpId: string
  budget: number
  regions: { type: list, items: string }
steps:
  - id: collect
    agent: List every supplier that answered.
    output: { suppliers: { type: list, items: object }, names: { type: list, items: string }, contract: string, supplier: string, due: date }
  - id: compare
    agent: Compare the suppliers.
  - id: screen_each
` + strings.Join(lines, "\n") + `
  - id: done
    finish: awarded
`
}

// Line 13 is the first line of the process step's keys.
func TestValidateProcessSteps(t *testing.T) {
	t.Parallel()
	cat := testProcesses(t)
	forEach := []string{
		"    process: supplier-screening",
		"    for_each: steps.collect.output.suppliers",
		"    inputs: { supplierName: item.name, bidUsd: item.bid, rfp: inputs.rfpId }",
	}
	tail := func(lines ...string) []string { return append(append([]string(nil), forEach...), lines...) }
	cases := []struct {
		name  string
		lines []string
		offer *Offer
		want  []string
		bound Bindings
	}{
		{
			name:  "for_each over suppliers binds the latest version",
			lines: tail("    concurrency: 10", "    on_outcome: { failed: compare }", "    next: done"),
			bound: Bindings{{Step: "screen_each", Process: "supplier-screening", Version: 2}},
		},
		{
			name: "one child with routes, literals and a pinned version",
			lines: []string{
				"    process: supplier-screening",
				"    version: 1",
				`    inputs: { supplierName: steps.collect.output.supplier, bidUsd: 1250.50, rfp: "RFP-7" }`,
				"    on_outcome: { flagged: compare, failed: compare, cancelled: done }",
			},
			bound: Bindings{{Step: "screen_each", Process: "supplier-screening", Version: 1}},
		},
		{
			name: "a child assigning steps to initiator marks its binding",
			lines: []string{
				"    process: contract-review",
				"    inputs: { contract: steps.collect.output.contract, counterparty: steps.collect.output.supplier }",
				"    on_outcome: { rejected: compare }",
			},
			bound: Bindings{{Step: "screen_each", Process: "contract-review", Version: 1, Initiator: true}},
		},
		{
			name:  "date, person and string meet; optional inputs may be left out",
			lines: []string{"    process: contract-review", "    inputs: { contract: steps.collect.output.due, counterparty: inputs.rfpId, signer: inputs.rfpId }"},
			bound: Bindings{{Step: "screen_each", Process: "contract-review", Version: 1, Initiator: true}},
		},
		{
			name:  "item of a list of strings feeds a string input",
			lines: []string{"    process: supplier-screening", "    for_each: steps.collect.output.names", "    inputs: { supplierName: item, bidUsd: inputs.budget, rfp: inputs.rfpId }"},
			bound: Bindings{{Step: "screen_each", Process: "supplier-screening", Version: 2}},
		},
		{
			name:  "four levels below is the limit",
			lines: []string{"    process: level-3"},
			bound: Bindings{{Step: "screen_each", Process: "level-3", Version: 1}},
		},
		{
			name:  "a deeper limit by flag",
			lines: []string{"    process: level-4"},
			offer: func() *Offer { o := withSubprocess(cat); o.MaxDepth = 5; return o }(),
			bound: Bindings{{Step: "screen_each", Process: "level-4", Version: 1}},
		},
		{
			name:  "without the profile",
			lines: forEach,
			offer: withCheck(),
			want:  []string{"15:14: steps[2].process: needs the baton-subprocess-1 profile, which this server does not offer"},
		},
		{
			name:  "unknown child",
			lines: []string{"    process: supplier-screenin", "    inputs: { supplierName: inputs.rfpId }"},
			want:  []string{`15:14: steps[2].process: unknown process "supplier-screenin": none of that name is published in this organization`},
		},
		{
			name:  "unpublished version",
			lines: []string{"    process: supplier-screening", "    version: 7", "    for_each: steps.collect.output.suppliers", "    inputs: { supplierName: item.name, bidUsd: item.bid, rfp: inputs.rfpId }"},
			want:  []string{"16:14: steps[2].version: supplier-screening has no published version 7 (its latest is 2)"},
		},
		{
			name:  "a bad process name",
			lines: []string{"    process: Supplier Screening"},
			want:  []string{`15:14: steps[2].process: "Supplier Screening" is not a process name: it must match ^[a-z0-9]+(-[a-z0-9]+)*$ and be at most 64 characters`},
		},
		{
			name:  "a child input not given",
			lines: []string{"    process: supplier-screening", "    for_each: steps.collect.output.suppliers", "    inputs: { supplierName: item.name }"},
			want:  []string{"17:13: steps[2].inputs: supplier-screening v2 needs bidUsd (a number field), rfp (a string field), which inputs does not give"},
		},
		{
			name:  "no inputs at all",
			lines: []string{"    process: contract-review"},
			want:  []string{"15:14: steps[2].inputs: contract-review v1 needs contract (a string field), counterparty (a string field), which inputs does not give"},
		},
		{
			name:  "a child input given twice",
			lines: []string{"    process: contract-review", "    inputs:", "      contract: inputs.rfpId", "      counterparty: inputs.rfpId", "      contract: steps.collect.output.contract"},
			want:  []string{"19:7: steps[2].inputs.contract: duplicate key, first at line 17"},
		},
		{
			name:  "an input the child does not declare",
			lines: []string{"    process: supplier-screening", "    version: 1", "    for_each: steps.collect.output.suppliers", "    inputs: { supplierName: item.name, bidUsd: item.bid, rfp: inputs.rfpId, region: emea }"},
			want:  []string{"18:77: steps[2].inputs.region: supplier-screening v1 has no input region (its inputs: supplierName, bidUsd, rfp)"},
		},
		{
			name:  "a path of the wrong type",
			lines: []string{"    process: supplier-screening", "    inputs: { supplierName: inputs.budget, bidUsd: inputs.rfpId, rfp: steps.collect.output.names }"},
			want: []string{
				"16:29: steps[2].inputs.supplierName: inputs.budget is a number field; supplier-screening's input supplierName is a string field",
				"16:52: steps[2].inputs.bidUsd: inputs.rfpId is a string field; supplier-screening's input bidUsd is a number field",
				"16:71: steps[2].inputs.rfp: steps.collect.output.names is a list of string field; supplier-screening's input rfp is a string field",
			},
		},
		{
			name:  "item of the wrong type",
			lines: []string{"    process: supplier-screening", "    for_each: steps.collect.output.names", "    inputs: { supplierName: inputs.rfpId, bidUsd: item, rfp: inputs.rfpId }"},
			want:  []string{"17:51: steps[2].inputs.bidUsd: item is a string field; supplier-screening's input bidUsd is a number field"},
		},
		{
			name:  "literals are checked as start inputs are",
			lines: []string{"    process: supplier-screening", `    inputs: { supplierName: inputs.rfpId, bidUsd: "1250", rfp: 7, region: amer, since: 2026-02-30 }`},
			want: []string{
				`16:51: steps[2].inputs.bidUsd: expected number (supplier-screening's input bidUsd is a number field)`,
				`16:64: steps[2].inputs.rfp: expected string (supplier-screening's input rfp is a string field)`,
				`16:75: steps[2].inputs.region: not one of emea, apac (supplier-screening's input region is a string field)`,
				`16:88: steps[2].inputs.since: expected date (supplier-screening's input since is a date field)`,
			},
		},
		{
			name:  "a null literal",
			lines: []string{"    process: contract-review", "    inputs: { contract: null, counterparty: [a, null] }"},
			want: []string{
				"16:25: steps[2].inputs.contract: null is not a value; leave an optional input out",
				"16:45: steps[2].inputs.counterparty: null is not a value, not even inside a list or mapping",
			},
		},
		{
			name:  "item without for_each",
			lines: []string{"    process: supplier-screening", "    inputs: { supplierName: item.name, bidUsd: item, rfp: inputs.rfpId }"},
			want: []string{
				"16:29: steps[2].inputs.supplierName: item.name needs for_each; this step runs one child, and item is the element of the for_each list",
				"16:48: steps[2].inputs.bidUsd: item needs for_each; this step runs one child, and item is the element of the for_each list",
			},
		},
		{
			name:  "item.<field> of items that are not objects",
			lines: []string{"    process: supplier-screening", "    for_each: inputs.regions", "    inputs: { supplierName: item.name, bidUsd: inputs.budget, rfp: inputs.rfpId }"},
			want:  []string{"17:29: steps[2].inputs.supplierName: the for_each list's items are string values; item.<field> needs items of type object"},
		},
		{
			name:  "for_each on a path not declared list",
			lines: []string{"    process: supplier-screening", "    for_each: inputs.rfpId", "    inputs: { supplierName: item, bidUsd: inputs.budget, rfp: inputs.rfpId }"},
			want:  []string{"16:15: steps[2].for_each: inputs.rfpId is a string field; for_each needs a list field"},
		},
		{
			name:  "for_each and paths that name nothing",
			lines: []string{"    process: supplier-screening", "    for_each: steps.gather.output.suppliers", "    inputs: { supplierName: inputs.name, bidUsd: steps.collect.output.bid, rfp: steps.collect }"},
			want: []string{
				`16:15: steps[2].for_each: steps.gather.output.suppliers names unknown step "gather"`,
				"17:29: steps[2].inputs.supplierName: inputs.name is not a declared field",
				"17:50: steps[2].inputs.bidUsd: steps.collect.output.bid is not a declared field",
				`17:81: steps[2].inputs.rfp: "steps.collect" is not a path inputs.<field> or steps.<id>.output.<field>`,
			},
		},
		{
			name:  "a direct cycle",
			lines: []string{"    process: rfp"},
			want:  []string{"15:14: steps[2].process: rfp runs itself: a cycle of processes"},
		},
		{
			name:  "a cycle through another process",
			lines: []string{"    process: loop-a"},
			want:  []string{"15:14: steps[2].process: loop-a v1 leads back to rfp: a cycle of processes rfp → loop-a → rfp"},
		},
		{
			name:  "a cycle through two others",
			lines: []string{"    process: loop-b"},
			want:  []string{"15:14: steps[2].process: loop-b v1 leads back to rfp: a cycle of processes rfp → loop-b → loop-a → rfp"},
		},
		{
			name:  "nesting deeper than the limit",
			lines: []string{"    process: level-4"},
			want:  []string{"15:14: steps[2].process: level-4 v1 nests 4 levels of processes below it; this step makes 5, over this server's limit of 4 (--subprocess-depth)"},
		},
		{
			name:  "a child needing a profile the server lacks",
			lines: []string{"    process: checked-screening"},
			offer: func() *Offer {
				o := DefaultOffer()
				o.Profiles = append(o.Profiles, ProfileSubprocess)
				o.Processes = cat
				return &o
			}(),
			want: []string{"15:14: steps[2].process: checked-screening v1 needs the check-1 profile, which this server does not offer"},
		},
		{
			name:  "a child needing a tool the server lacks",
			lines: []string{"    process: evented"},
			offer: func() *Offer {
				o := without(ToolSendEvent)
				o.Profiles = append(o.Profiles, ProfileSubprocess)
				o.Processes = cat
				return o
			}(),
			want: []string{"15:14: steps[2].process: evented v1 needs the send_event tool, which this server does not offer"},
		},
		{
			name:  "on_outcome keys the child cannot end with",
			lines: []string{"    process: supplier-screening", "    version: 1", "    inputs: { supplierName: inputs.rfpId, bidUsd: inputs.budget, rfp: inputs.rfpId }", "    on_outcome: { flagged: compare, rejected: compare, approved: done }"},
			want: []string{
				"18:37: steps[2].on_outcome.rejected: supplier-screening v1 cannot end rejected (it ends cleared, flagged, failed or cancelled)",
				"18:56: steps[2].on_outcome.approved: supplier-screening v1 cannot end approved (it ends cleared, flagged, failed or cancelled)",
			},
		},
		{
			name:  "on_outcome targets that do not exist, or the step itself",
			lines: tail("    on_outcome: { failed: review_failures, cancelled: screen_each }"),
			want: []string{
				`18:27: steps[2].on_outcome.failed: unknown step "review_failures"`,
				"18:55: steps[2].on_outcome.cancelled: a process step cannot route to itself; route to a step before it to run it again",
			},
		},
		{
			name:  "for_each routes only failed and cancelled",
			lines: tail("    on_outcome: { cleared: compare, failed: compare }"),
			want:  []string{"18:19: steps[2].on_outcome.cleared: with for_each, on_outcome names only failed and cancelled; the children's other outcomes continue at next"},
		},
		{
			name:  "concurrency without for_each, and out of range",
			lines: []string{"    process: contract-review", "    inputs: { contract: inputs.rfpId, counterparty: inputs.rfpId }", "    concurrency: 0"},
			want: []string{
				"17:5: steps[2].concurrency: allowed only beside for_each; this step runs one child",
				"17:18: steps[2].concurrency: must be a whole number from 1 to 1000",
			},
		},
		{
			name:  "version that is not a whole number",
			lines: []string{"    process: level-0", "    version: 1.5"},
			want:  []string{"16:14: steps[2].version: must be a whole number from 1 to 9007199254740991"},
		},
		{
			name:  "keys a process step does not take, and process keys elsewhere",
			lines: []string{"    process: level-0", "    due: 2d", "    output: { x: string }"},
			want: []string{
				"16:5: steps[2].due: not allowed on a process step (only on agent, task and approve steps)",
				"17:5: steps[2].output: not allowed on a process step (only on agent and task steps)",
			},
		},
		{
			name: "every refusal at once",
			lines: []string{
				"    process: supplier-screening",
				"    inputs: { supplierName: item.name, bidUsd: inputs.rfpId, extra: 1 }",
				"    on_outcome: { approved: nowhere }",
			},
			want: []string{
				"16:13: steps[2].inputs: supplier-screening v2 needs rfp (a string field), which inputs does not give",
				"16:29: steps[2].inputs.supplierName: item.name needs for_each; this step runs one child, and item is the element of the for_each list",
				"16:48: steps[2].inputs.bidUsd: inputs.rfpId is a string field; supplier-screening's input bidUsd is a number field",
				"16:62: steps[2].inputs.extra: supplier-screening v2 has no input extra (its inputs: supplierName, bidUsd, rfp, region, since)",
				"17:19: steps[2].on_outcome.approved: supplier-screening v2 cannot end approved (it ends cleared, rejected, failed or cancelled)",
				`17:29: steps[2].on_outcome.approved: unknown step "nowhere"`,
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			offer := tc.offer
			if offer == nil {
				offer = withSubprocess(cat)
			}
			src := processDoc(rfpFront(tc.lines...))
			p, bound, err := ParseAndBind([]byte(src), &ParseOptions{Offer: offer})
			got := issueTexts(t, err)
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("issues:\n got: %q\nwant: %q", got, tc.want)
			}
			if len(tc.want) > 0 {
				if p != nil || bound != nil {
					t.Errorf("refused process returned %v, %v", p, bound)
				}
				return
			}
			for k := range bound {
				if bound[k].Hash == "" {
					t.Errorf("binding %d has no hash", k)
				}
				bound[k].Hash = ""
			}
			if !reflect.DeepEqual(bound, tc.bound) {
				t.Errorf("bindings:\n got: %+v\nwant: %+v", bound, tc.bound)
			}
		})
	}
}

// Without a catalog a process step is checked as far as the file goes; its
// routes follow the graph rules of on_reject.
func TestValidateProcessStepGraph(t *testing.T) {
	t.Parallel()
	fileOnly := withSubprocess(nil)
	runValidateCases(t, []validateCase{
		{
			name: "a step reached only through on_outcome, and a route back",
			front: `name: rfp
description: Run an RFP.
steps:
  - id: compare
    agent: Compare.
  - id: legal
    process: contract-review
    on_outcome: { rejected: compare, failed: review }
    next: done
  - id: review
    task: Review what failed.
    person: buyer
    next: done
  - id: done
    finish: awarded
`,
			offer: fileOnly,
		},
		{
			name: "on_outcome from a branch stays in the branch",
			front: `name: rfp
description: Run an RFP.
steps:
  - id: fork
    parallel: [legal, finance]
    next: done
  - id: legal
    process: contract-review
    on_outcome: { rejected: done }
    next: join
  - id: finance
    agent: Check the budget.
    next: join
  - id: done
    finish: awarded
`,
			offer: fileOnly,
			want:  []string{"10:29: steps[1].on_outcome.rejected: must name a step in the same branch"},
		},
		{
			name: "on_outcome into a branch from outside",
			front: `name: rfp
description: Run an RFP.
steps:
  - id: legal
    process: contract-review
    on_outcome: { rejected: finance }
  - id: fork
    parallel: [finance, audit]
    next: done
  - id: finance
    agent: Check the budget.
    next: join
  - id: audit
    agent: Audit.
    next: join
  - id: done
    finish: awarded
`,
			offer: fileOnly,
			want:  []string{`7:29: steps[0].on_outcome.rejected: "finance" is inside a branch of "fork"; return to the parallel step to run every branch again`},
		},
		{
			name: "process keys on another kind",
			front: `name: rfp
description: Run an RFP.
steps:
  - id: work
    agent: Work.
    for_each: inputs.items
    on_outcome: { failed: done }
  - id: done
    finish: awarded
`,
			offer: fileOnly,
			want: []string{
				"7:5: steps[0].for_each: not allowed on an agent step (only on process steps)",
				"8:5: steps[0].on_outcome: not allowed on an agent step (only on process steps)",
			},
		},
		{
			name: "on_outcome to join",
			front: `name: rfp
description: Run an RFP.
steps:
  - id: fork
    parallel: [legal, finance]
    next: done
  - id: legal
    process: contract-review
    on_outcome: { rejected: join }
    next: join
  - id: finance
    agent: Check the budget.
    next: join
  - id: done
    finish: awarded
`,
			offer: fileOnly,
			want:  []string{"10:29: steps[1].on_outcome.rejected: join is allowed only in next and on_timeout"},
		},
	})
}

func TestChildInputs(t *testing.T) {
	t.Parallel()
	data := map[string]any{"inputs.rfpId": "RFP-7", "steps.collect.output.supplier": "Acme", "inputs.empty": nil}
	read := func(path string) (any, bool) { v, ok := data[path]; return v, ok }
	call := &ProcessCall{Inputs: []CallInput{
		{Name: "rfp", Path: "inputs.rfpId"},
		{Name: "supplier", Path: "steps.collect.output.supplier"},
		{Name: "name", Path: "item.name"},
		{Name: "whole", Path: "item"},
		{Name: "bid", Value: []byte(`1250.50`)},
		{Name: "tags", Value: []byte(`["a",{"b":true}]`)},
		{Name: "missing", Path: "inputs.nothing"},
		{Name: "null", Path: "inputs.empty"},
	}}
	cases := []struct {
		name string
		item any
		want Values
	}{
		{
			name: "an object item",
			item: map[string]any{"name": "Acme Ltd", "bid": json.Number("10")},
			want: Values{"rfp": "RFP-7", "supplier": "Acme", "name": "Acme Ltd", "whole": map[string]any{"name": "Acme Ltd", "bid": json.Number("10")},
				"bid": json.Number("1250.50"), "tags": []any{"a", map[string]any{"b": true}}},
		},
		{
			name: "a string item has no fields",
			item: "Acme",
			want: Values{"rfp": "RFP-7", "supplier": "Acme", "whole": "Acme", "bid": json.Number("1250.50"), "tags": []any{"a", map[string]any{"b": true}}},
		},
		{
			name: "no item",
			want: Values{"rfp": "RFP-7", "supplier": "Acme", "bid": json.Number("1250.50"), "tags": []any{"a", map[string]any{"b": true}}},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := call.ChildInputs(read, tc.item); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got  %#v\nwant %#v", got, tc.want)
			}
		})
	}
}

func TestPublishOrder(t *testing.T) {
	t.Parallel()
	dep := func(name string, children ...string) Dependency {
		d := Dependency{Name: name}
		for _, c := range children {
			d.Refs = append(d.Refs, ProcessRef{Name: c})
		}
		return d
	}
	names := func(ds []Dependency, order []int) string {
		var out []string
		for _, k := range order {
			out = append(out, ds[k].Name)
		}
		return strings.Join(out, " ")
	}
	cases := []struct {
		name  string
		in    []Dependency
		want  string
		cycle string
	}{
		{name: "parents after children", in: []Dependency{dep("rfp", "screening", "legal"), dep("legal"), dep("screening", "sanctions"), dep("sanctions")},
			want: "sanctions screening legal rfp"},
		{name: "already in order", in: []Dependency{dep("a"), dep("b", "a")}, want: "a b"},
		{name: "children not given are ignored", in: []Dependency{dep("b", "elsewhere"), dep("a")}, want: "b a"},
		{name: "a cycle", in: []Dependency{dep("a", "b"), dep("b", "c"), dep("c", "a")}, want: "a b c", cycle: "a b c a"},
		{name: "a process naming itself", in: []Dependency{dep("a", "a")}, want: "a", cycle: "a a"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			order, cycle := PublishOrder(tc.in)
			if names(tc.in, order) != tc.want || strings.Join(cycle, " ") != tc.cycle {
				t.Errorf("got %q, cycle %q; want %q, cycle %q", names(tc.in, order), cycle, tc.want, tc.cycle)
			}
		})
	}
}

// ReadDependency orders files that do not validate, such as a parent
// whose tools are not registered where it is read.
func TestReadDependency(t *testing.T) {
	t.Parallel()
	src := processDoc(rfpFront("    process: supplier-screening", "    tools: [crm/x]", "    next: legal",
		"  - id: legal", "    process: contract-review", "    version: 3", "  - id: again", "    process: supplier-screening"))
	d, ok := ReadDependency([]byte(src))
	want := Dependency{Name: "rfp", Refs: []ProcessRef{{Name: "supplier-screening"}, {Name: "contract-review", Version: 3}}}
	if !ok || !reflect.DeepEqual(d, want) || strings.Join(d.Children(), " ") != "supplier-screening contract-review" {
		t.Errorf("ReadDependency = %+v, %v", d, ok)
	}
	if _, ok := ReadDependency([]byte("no frontmatter")); ok {
		t.Error("a file without frontmatter has a dependency")
	}
}

func TestProcessOutcomesAndNeeds(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		src      string
		outcomes string
		profiles string
		tools    string
	}{
		{name: "finishes and a rejecting approval", src: screeningV2, outcomes: "cleared rejected failed cancelled"},
		{name: "an approval with on_reject cannot end rejected", src: screeningV1, outcomes: "cleared flagged failed cancelled"},
		{name: "check-1 and send_event", src: checked, outcomes: "done failed cancelled", profiles: "check-1"},
		{name: "wait_for needs send_event", src: evented, outcomes: "done failed cancelled", tools: "send_event"},
		{name: "a process step", src: nested("level-1", "level-0"), outcomes: "done failed cancelled", profiles: "baton-subprocess-1"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p, err := Parse([]byte(processDoc(tc.src)), &ParseOptions{Offer: withSubprocess(nil)})
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(p.Outcomes(), " "); got != tc.outcomes {
				t.Errorf("outcomes %q, want %q", got, tc.outcomes)
			}
			if got := strings.Join(p.Profiles(), " "); got != tc.profiles {
				t.Errorf("profiles %q, want %q", got, tc.profiles)
			}
			if got := strings.Join(ToolNames(p.NeedsTools()), " "); got != tc.tools {
				t.Errorf("tools %q, want %q", got, tc.tools)
			}
		})
	}
}

// A parsed process step travels by value in a run's start input: its JSON
// reads back the same, literals exact.
func TestProcessCallRoundTrip(t *testing.T) {
	t.Parallel()
	src := processDoc(rfpFront("    process: supplier-screening", "    for_each: steps.collect.output.suppliers",
		`    inputs: { supplierName: item.name, bidUsd: 12345678901234567890.5, rfp: "steps-like text", region: emea }`,
		"    concurrency: 3", "    on_outcome: { failed: compare, cancelled: done }"))
	p, err := Parse([]byte(src), &ParseOptions{Offer: withSubprocess(nil)})
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	var back Process
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	call := back.Step("screen_each").Call
	want := &ProcessCall{
		Process: "supplier-screening", ForEach: "steps.collect.output.suppliers", Concurrency: 3,
		Inputs: []CallInput{
			{Name: "supplierName", Path: "item.name"},
			{Name: "bidUsd", Value: json.RawMessage(`12345678901234567890.5`)},
			{Name: "rfp", Value: json.RawMessage(`"steps-like text"`)},
			{Name: "region", Value: json.RawMessage(`"emea"`)},
		},
		OnOutcome: []OutcomeRoute{{Outcome: "failed", To: "compare"}, {Outcome: "cancelled", To: "done"}},
	}
	if !reflect.DeepEqual(call, want) {
		t.Errorf("got  %+v\nwant %+v", call, want)
	}
	if to, ok := call.Route("cancelled"); !ok || to != "done" {
		t.Errorf("Route(cancelled) = %q, %v", to, ok)
	}
	if _, ok := call.Route("cleared"); ok {
		t.Errorf("Route(cleared) found a route")
	}
}
