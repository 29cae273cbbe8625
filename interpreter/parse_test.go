package interpreter

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
)

// sharedDir returns ../shared beside the repository root (the folder
// holding go.mod), found by walking up from the test's working folder.
func sharedDir(tb testing.TB) string {
	tb.Helper()
	dir, err := os.Getwd()
	if err != nil {
		tb.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(dir, "..", "shared")
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			tb.Fatal("no go.mod above the working folder")
		}
		dir = parent
	}
}

type fixture struct {
	name string // its folder
	src  []byte
}

var (
	fixturesOnce sync.Once
	fixturesList []fixture
	fixturesErr  error
)

// fixtures reads every conformance fixture, sorted by folder name.
func fixtures(tb testing.TB) []fixture {
	tb.Helper()
	root := sharedDir(tb)
	fixturesOnce.Do(func() {
		files, err := filepath.Glob(filepath.Join(root, "conformance", "fixtures", "*", "PROCESS.md"))
		if err != nil || len(files) == 0 {
			fixturesErr = errors.New("no fixtures under " + root)
			return
		}
		for _, f := range files {
			src, err := os.ReadFile(f)
			if err != nil {
				fixturesErr = err
				return
			}
			fixturesList = append(fixturesList, fixture{name: filepath.Base(filepath.Dir(f)), src: src})
		}
	})
	if fixturesErr != nil {
		tb.Fatal(fixturesErr)
	}
	return fixturesList
}

// fixtureHashes are the content hashes of the twelve fixtures, checked
// against an independent computation (PyYAML, sorted-key JSON, SHA-256).
var fixtureHashes = map[string]string{
	"blog-publication":        "5d9ec4f6e4a4d695e68a0233e42fda4b7c819d66167c346c371904c82c5d24c4",
	"contract-review":         "202b4ab22053c85dfd16c583b43eb00a935a0cee754a79f4bc2d4d728f17141c",
	"customer-offboarding":    "3dd33a9aff9b39590d8960a15041c174aa85e2c70ffa0b505d86a152f1901e19",
	"employee-onboarding":     "226eac71a76b4f590a90eb52ff6dc0952cee510dac75f6a84bf10280e49708d7",
	"expense-reimbursement":   "24154f92534373e1b59d71625be18c9ed150db6dcfcac1f85be1f038541769d6",
	"incident-postmortem":     "e9f5bf6747b813c3e472e107816d42cb95ec0eb631ac12949f89d98d9ac5a91a",
	"invoice-approval":        "33c58c03057fb4a4d89b0d04133fd6521adf3c8ec652148d86c3e1c192c5b748",
	"major-incident":          "2eca9cabd5abc4079d90a16e75273491e7560bdfc3656a5f148d41fec8b2553e",
	"major-incident-response": "24f4a3a414753326db853df4b9fdfc97c2d231861ec64dd751ac7bcdafc5ee8a",
	"supplier-rfp":            "e67155b6c6b4af229c8511a3d0cf9d775180a4c483225e18ad8cfb86e65df2cd",
	"support-escalation":      "faf84aa600d1455155eae5a820b0ac2f7d87e30ebda5fab4a78540bfbfd8ffad",
	"vendor-check":            "b459ee93e2a2b77e3f5d88819fbb8c1394c4833eeaa4f179dcc62eadcd53e266",
}

func TestParseFixtures(t *testing.T) {
	t.Parallel()
	fs := fixtures(t)
	if len(fs) != 12 {
		t.Fatalf("found %d fixtures, want 12", len(fs))
	}
	for _, f := range fs {
		t.Run(f.name, func(t *testing.T) {
			t.Parallel()
			p, err := Parse(f.src, &ParseOptions{Folder: f.name, Offer: withCheck()})
			if err != nil {
				t.Fatalf("refused: %v", err)
			}
			if p.Name != f.name {
				t.Errorf("name %q, want %q", p.Name, f.name)
			}
			if want := fixtureHashes[f.name]; p.Hash != want {
				t.Errorf("hash %s, want %s", p.Hash, want)
			}
			t.Logf("%s sha256:%s", f.name, p.Hash)
			// The model travels by value in a run's start input.
			b, err := json.Marshal(p)
			if err != nil {
				t.Fatal(err)
			}
			var back Process
			if err := json.Unmarshal(b, &back); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(normalizeOneOf(&back), normalizeOneOf(p)) {
				t.Errorf("model does not survive JSON:\n%s", b)
			}
		})
	}
}

// normalizeOneOf makes one_of values comparable after a JSON round trip,
// where json.Number becomes float64.
func normalizeOneOf(p *Process) string {
	b, _ := json.Marshal(p)
	return string(b)
}

func TestParseFixtureOffers(t *testing.T) {
	t.Parallel()
	byName := map[string][]byte{}
	for _, f := range fixtures(t) {
		byName[f.name] = f.src
	}
	tests := []struct {
		name    string
		fixture string
		offer   *Offer
		want    []string
	}{
		{
			name:    "vendor-check without check-1",
			fixture: "vendor-check",
			offer:   nil, // DefaultOffer: no evaluator
			want:    []string{"20:5: steps[0].check: needs the check-1 profile, which this server does not offer (it needs an evaluator)"},
		},
		{
			name:    "vendor-check without upload",
			fixture: "vendor-check",
			offer:   without(ToolUpload),
			want:    []string{"18:16: steps[0].evidence[0]: file evidence needs the upload tool, which this server does not offer"},
		},
		{
			name:    "major-incident on a core-only server",
			fixture: "major-incident",
			offer:   coreOnly(),
			want:    []string{"13:15: steps[1].parallel: needs the parallel-1 profile, which this server does not offer"},
		},
		{
			name:    "major-incident with the default offer",
			fixture: "major-incident",
		},
		{
			name:    "customer-offboarding without send_event",
			fixture: "customer-offboarding",
			offer:   without(ToolSendEvent),
			want:    []string{"35:15: steps[4].wait_for: needs the send_event tool, which this server does not offer"},
		},
		{
			name:    "contract-review without upload",
			fixture: "contract-review",
			offer:   without(ToolUpload),
			want: []string{
				"18:16: steps[0].evidence[0]: file evidence needs the upload tool, which this server does not offer",
				"39:16: steps[3].evidence[0]: file evidence needs the upload tool, which this server does not offer",
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := Parse(byName[tc.fixture], &ParseOptions{Offer: tc.offer})
			got := issueTexts(t, err)
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("issues:\n got: %q\nwant: %q", got, tc.want)
			}
		})
	}
}

// TestParseModel checks the typed model built from the fixtures.
func TestParseModel(t *testing.T) {
	t.Parallel()
	byName := map[string]*Process{}
	for _, f := range fixtures(t) {
		p, err := Parse(f.src, &ParseOptions{Offer: withCheck()})
		if err != nil {
			t.Fatal(err)
		}
		byName[f.name] = p
	}

	mi := byName["major-incident"]
	respond := mi.Step("respond")
	if respond.Kind != KindParallel || !reflect.DeepEqual(respond.Branches, []string{"operations", "security", "communications"}) {
		t.Errorf("respond = %+v", respond)
	}
	if ops := mi.Step("operations"); ops.Due == nil || ops.Due.D != time.Hour || ops.Due.Text != "1h" || ops.Next[0].To != Join {
		t.Errorf("operations = %+v", ops)
	}
	if got := mi.Roles(); !reflect.DeepEqual(got, []string{"operations-lead", "security-lead", "communications-lead"}) {
		t.Errorf("Roles() = %q", got)
	}
	if got := mi.NextOf(mi.Step("activate")); !reflect.DeepEqual(got, []Route{{To: "respond"}}) {
		t.Errorf("NextOf(activate) = %+v", got)
	}
	if got := mi.NextOf(mi.Step("done")); got != nil {
		t.Errorf("NextOf(done) = %+v", got)
	}

	co := byName["customer-offboarding"]
	ev := co.Step("settlement_event")
	if ev.Kind != KindWaitFor || ev.Text != "final-invoice-settled" || ev.Timeout.D != 30*24*time.Hour || ev.OnTimeout != "finance_followup" {
		t.Errorf("settlement_event = %+v", ev)
	}
	fi := co.Step("final_invoice")
	if !fi.NextList || !reflect.DeepEqual(fi.Next, []Route{{To: "deletion_clearance"}, {To: "settlement_event"}}) {
		t.Errorf("final_invoice next = %+v (list %v)", fi.Next, fi.NextList)
	}
	ci := co.Step("cancel_services").Output.Lookup("cancellationIds")
	if ci.Type != TypeList || ci.Short || ci.Items == nil || ci.Items.Type != TypeString || !ci.Items.Short {
		t.Errorf("cancellationIds = %+v", ci)
	}
	if co.Step("effective_time").Text != "inputs.effectiveAt" {
		t.Errorf("effective_time = %+v", co.Step("effective_time"))
	}

	er := byName["expense-reimbursement"]
	if !er.UsesInitiator() || !reflect.DeepEqual(er.Roles(), []string{"accounts-payable"}) {
		t.Errorf("expense-reimbursement roles %q, initiator %v", er.Roles(), er.UsesInitiator())
	}

	se := byName["support-escalation"]
	sev := se.Step("tier1_handoff").Output.Lookup("severity")
	if !reflect.DeepEqual(sev.OneOf, []any{"low", "high", "critical"}) {
		t.Errorf("severity one_of = %#v", sev.OneOf)
	}

	vc := byName["vendor-check"]
	if vc.Requires == nil || !reflect.DeepEqual(vc.Requires.Systems, []string{"sanctions-screening"}) {
		t.Errorf("requires = %+v", vc.Requires)
	}
	if amount := vc.Inputs.Lookup("amount"); amount.Type != TypeNumber || amount.Description != "Expected annual spend in USD" || amount.Short {
		t.Errorf("amount = %+v", amount)
	}
	c := vc.Step("check_vendor").Check
	f := func(x float64) *float64 { return &x }
	want := &Check{Questions: []*Question{
		{Ask: "The cleared verdict matches what the attached report says.", Kind: QuestionYesNo, Pass: f(0.9), Fail: f(0.5)},
		{Ask: "What does the summary do?", Kind: QuestionChoice,
			OneOf: []Choice{
				{Name: "states", Description: "States the verdict and the lists checked."},
				{Name: "hedges", Description: "Avoids a verdict or qualifies it heavily."},
				{Name: "unclear", Description: "Cannot tell."},
			},
			PassNames: []string{"states"}, Unsure: []string{"unclear"}},
		{Ask: "How complete is the screening?", Kind: QuestionRubric,
			Levels: []string{"Neither list is clearly covered.", "One list is covered.", "Both lists are covered with the search terms stated."},
			Pass:   f(2), Confidence: f(0.8)},
	}}
	if !reflect.DeepEqual(c, want) {
		gb, _ := json.Marshal(c)
		wb, _ := json.Marshal(want)
		t.Errorf("check:\n got %s\nwant %s", gb, wb)
	}
}

func TestParseShortCheck(t *testing.T) {
	t.Parallel()
	src := processDoc("name: demo\ndescription: D.\nsteps:\n  - id: a\n    agent: A.\n    check: Is it right?\n    advisory: true\n  - id: b\n    finish: ok\n")
	p, err := Parse([]byte(src), &ParseOptions{Offer: withCheck()})
	if err != nil {
		t.Fatal(err)
	}
	a := p.Step("a")
	want := &Check{Short: true, Questions: []*Question{{Ask: "Is it right?", Kind: QuestionYesNo}}}
	if !reflect.DeepEqual(a.Check, want) || !a.Advisory {
		t.Errorf("check %+v advisory %v", a.Check, a.Advisory)
	}
}

func TestParseDocumentSplit(t *testing.T) {
	t.Parallel()
	const front = "name: demo\ndescription: D.\nsteps:\n  - id: a\n    finish: ok\n"
	tests := []struct {
		name     string
		src      string
		wantBody string
		want     []string
	}{
		{name: "body after the closing line", src: "---\n" + front + "---\n# Title\n", wantBody: "# Title\n"},
		{name: "a leading blank line is part of the body", src: "---\n" + front + "---\n\n# Title\n", wantBody: "\n# Title\n"},
		{name: "closing line at the end of the file", src: "---\n" + front + "---", wantBody: ""},
		{name: "empty body", src: "---\n" + front + "---\n", wantBody: ""},
		{name: "CRLF fences", src: "---\r\n" + strings.ReplaceAll(front, "\n", "\r\n") + "---\r\nBody\r\n", wantBody: "Body\r\n"},
		{name: "a later --- belongs to the body", src: "---\n" + front + "---\nA\n---\nB\n", wantBody: "A\n---\nB\n"},
		{name: "a body that is not UTF-8", src: "---\n" + front + "---\n# Title\nok \xff\n", want: []string{"9:4: body: not valid UTF-8 text"}},
		{name: "no opening line", src: "\n---\n" + front + "---\n", want: []string{`1:1: frontmatter: the file must start with a "---" line`}},
		{name: "empty file", src: "", want: []string{`1:1: frontmatter: the file must start with a "---" line`}},
		{name: "opening line with trailing text", src: "--- x\n" + front + "---\n", want: []string{`1:1: frontmatter: the file must start with a "---" line`}},
		{name: "byte order mark", src: "\ufeff---\n" + front + "---\n", want: []string{`1:1: frontmatter: the file must start with a "---" line`}},
		{name: "no closing line", src: "---\n" + front, want: []string{`1:1: frontmatter: no closing "---" line`}},
		{name: "only the opening line", src: "---", want: []string{`1:1: frontmatter: no closing "---" line`}},
		{name: "a fence with spaces is not a fence", src: "---\n" + front + "--- \n", want: []string{`1:1: frontmatter: no closing "---" line`}},
		{name: "empty frontmatter", src: "---\n---\nBody\n", want: []string{"1:1: frontmatter: is empty"}},
		{name: "comment-only frontmatter", src: "---\n# nothing\n---\nBody\n", want: []string{"1:1: frontmatter: is empty"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p, err := Parse([]byte(tc.src), nil)
			got := issueTexts(t, err)
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Fatalf("issues:\n got: %q\nwant: %q", got, tc.want)
			}
			if err == nil && p.Body != tc.wantBody {
				t.Errorf("body %q, want %q", p.Body, tc.wantBody)
			}
		})
	}
}

// TestCoreSchema resolves scalars by the YAML 1.2 core schema, not by
// yaml.v3's own rules.
func TestCoreSchema(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		yaml  string
		kind  jsonKind
		text  string // string value or number text
		issue string
	}{
		{name: "leading zero is decimal", yaml: "017", kind: jsonNumber, text: "17"},
		{name: "octal", yaml: "0o17", kind: jsonNumber, text: "15"},
		{name: "hex", yaml: "0x1F", kind: jsonNumber, text: "31"},
		{name: "big hex", yaml: "0xFFFFFFFFFFFFFFFFFF", kind: jsonNumber, text: "4722366482869645213695"},
		{name: "plus sign", yaml: "+12", kind: jsonNumber, text: "12"},
		{name: "negative zero", yaml: "-0", kind: jsonNumber, text: "-0"},
		{name: "big integer kept as written", yaml: "123456789012345678901234567890", kind: jsonNumber, text: "123456789012345678901234567890"},
		{name: "underscore is a string", yaml: "1_000", kind: jsonString, text: "1_000"},
		{name: "binary is a string", yaml: "0b101", kind: jsonString, text: "0b101"},
		{name: "date is a string", yaml: "2024-01-01", kind: jsonString, text: "2024-01-01"},
		{name: "timestamp is a string", yaml: "2024-01-01T10:00:00Z", kind: jsonString, text: "2024-01-01T10:00:00Z"},
		{name: "sexagesimal is a string", yaml: "12:30", kind: jsonString, text: "12:30"},
		{name: "yes is a string", yaml: "yes", kind: jsonString, text: "yes"},
		{name: "no is a string", yaml: "no", kind: jsonString, text: "no"},
		{name: "on is a string", yaml: "on", kind: jsonString, text: "on"},
		{name: "off is a string", yaml: "Off", kind: jsonString, text: "Off"},
		{name: "y is a string", yaml: "y", kind: jsonString, text: "y"},
		{name: "true", yaml: "true", kind: jsonBool, text: "true"},
		{name: "True", yaml: "True", kind: jsonBool, text: "true"},
		{name: "FALSE", yaml: "FALSE", kind: jsonBool, text: "false"},
		{name: "tRUE is a string", yaml: "tRUE", kind: jsonString, text: "tRUE"},
		{name: "null", yaml: "null", kind: jsonNull},
		{name: "NULL", yaml: "NULL", kind: jsonNull},
		{name: "tilde", yaml: "~", kind: jsonNull},
		{name: "empty", yaml: "", kind: jsonNull},
		{name: "nULL is a string", yaml: "nULL", kind: jsonString, text: "nULL"},
		{name: "float", yaml: "1.5", kind: jsonNumber, text: "1.5"},
		{name: "leading point", yaml: ".5", kind: jsonNumber, text: "0.5"},
		{name: "trailing point", yaml: "1.", kind: jsonNumber, text: "1"},
		{name: "exponent", yaml: "1.5E+3", kind: jsonNumber, text: "1.5e3"},
		{name: "exponent without point", yaml: "-2e-5", kind: jsonNumber, text: "-2e-5"},
		{name: "leading zeros in a float", yaml: "007.50", kind: jsonNumber, text: "7.50"},
		{name: "point alone is a string", yaml: ".", kind: jsonString, text: "."},
		{name: "exponent alone is a string", yaml: "1e", kind: jsonString, text: "1e"},
		{name: "quoted number is a string", yaml: `"017"`, kind: jsonString, text: "017"},
		{name: "single-quoted true is a string", yaml: `'true'`, kind: jsonString, text: "true"},
		{name: "block scalar is a string", yaml: "|\n  12\n", kind: jsonString, text: "12\n"},
		{name: "!!str", yaml: "!!str 017", kind: jsonString, text: "017"},
		{name: "!!int on a quoted value", yaml: `!!int "017"`, kind: jsonNumber, text: "17"},
		{name: "!!float on an integer", yaml: "!!float 3", kind: jsonNumber, text: "3"},
		{name: "!!bool", yaml: "!!bool True", kind: jsonBool, text: "true"},
		{name: "!!null", yaml: "!!null ~", kind: jsonNull},
		{name: "verbatim core tag", yaml: "!<tag:yaml.org,2002:str> 5", kind: jsonString, text: "5"},
		{name: "non-specific tag on a number", yaml: "! 12", kind: jsonString, text: "12"},
		{name: "non-specific tag on true", yaml: "!  true", kind: jsonString, text: "true"},
		{name: "non-specific tag on null", yaml: "! null", kind: jsonString, text: "null"},
		{name: "non-specific tag on a quoted value", yaml: `! "12"`, kind: jsonString, text: "12"},
		{name: ".inf", yaml: ".inf", issue: "2:4: v: .inf is not a JSON number"},
		{name: "-.Inf", yaml: "-.Inf", issue: "2:4: v: -.Inf is not a JSON number"},
		{name: ".NaN", yaml: ".NaN", issue: "2:4: v: .NaN is not a JSON number"},
		{name: "!!float .nan", yaml: "!!float .nan", issue: "2:4: v: .nan is not a JSON number"},
		{name: "out of range", yaml: "1e400", issue: "2:4: v: number out of range"},
		{name: "integer out of range", yaml: "1" + strings.Repeat("0", 400), issue: "2:4: v: number out of range"},
		{name: "hex out of range", yaml: "0x" + strings.Repeat("F", 300), issue: "2:4: v: number out of range"},
		{name: "!!int out of range", yaml: "!!int " + strings.Repeat("9", 400), issue: "2:4: v: number out of range"},
		{name: "!!int mismatch", yaml: "!!int abc", issue: `2:4: v: "abc" is not a !!int`},
		{name: "!!float mismatch", yaml: "!!float abc", issue: `2:4: v: "abc" is not a !!float`},
		{name: "!!bool mismatch", yaml: "!!bool yes", issue: `2:4: v: "yes" is not a !!bool`},
		{name: "!!null mismatch", yaml: "!!null x", issue: `2:4: v: "x" is not a !!null`},
		{name: "!!timestamp", yaml: "!!timestamp 2024-01-01", issue: "2:4: v: unknown tag !!timestamp"},
		{name: "!!binary", yaml: "!!binary aGk=", issue: "2:4: v: unknown tag !!binary"},
		{name: "local tag", yaml: "!thing x", issue: "2:4: v: unknown tag !thing"},
		{name: "!!seq on a scalar", yaml: "!!seq x", issue: "2:4: v: unknown tag !!seq"},
		{name: "!!map on a list", yaml: "!!map [x]", issue: "2:4: v: tag !!map cannot be used on a list"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			is := &issueList{}
			doc, issue := splitDocument([]byte("---\nv: " + tc.yaml + "\n---\n"))
			if issue != nil {
				t.Fatal(issue)
			}
			root := parseFrontmatter(doc, is)
			if tc.issue != "" {
				if got := issueTexts(t, is.err()); len(got) != 1 || got[0] != tc.issue {
					t.Errorf("issues %q, want %q", got, tc.issue)
				}
				return
			}
			if len(is.list) > 0 {
				t.Fatalf("issues %v", is.list)
			}
			v := root.get("v")
			got := v.str
			if v.kind == jsonBool {
				got = map[bool]string{true: "true", false: "false"}[v.b]
			}
			if v.kind != tc.kind || got != tc.text {
				t.Errorf("got %s %q, want %s %q", v.kind, got, tc.kind, tc.text)
			}
		})
	}
}

// TestNonSpecificTag: "! 12" is the string "12" wherever it stands
// (SPEC-DECISIONS §35), also after wide characters on its line.
func TestNonSpecificTag(t *testing.T) {
	t.Parallel()
	is := &issueList{}
	doc, issue := splitDocument([]byte("---\nv: [é, ! 12, 12, '!']\n---\n"))
	if issue != nil {
		t.Fatal(issue)
	}
	root := parseFrontmatter(doc, is)
	if len(is.list) > 0 {
		t.Fatal(is.list)
	}
	v := root.get("v")
	want := []jsonKind{jsonString, jsonString, jsonNumber, jsonString}
	for i, k := range want {
		if v.arr[i].kind != k {
			t.Errorf("item %d is a %s, want a %s", i, v.arr[i].kind, k)
		}
	}
	src := `---
name: tagged
description: A one_of written with the non-specific tag.
inputs:
  code: { type: string, one_of: [! 12, ! true, abc] }
steps:
  - id: done
    finish: done
---
`
	p, err := Parse([]byte(src), nil)
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	if got := p.Inputs.Lookup("code").OneOf; len(got) != 3 || got[0] != "12" || got[1] != "true" {
		t.Fatalf("one_of = %#v", got)
	}
}

func TestParseYAMLRefusals(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		front string
		want  []string
	}{
		{
			name:  "duplicate top-level key",
			front: "name: demo\nname: other\ndescription: D.\nsteps:\n  - id: a\n    finish: ok\n",
			want:  []string{"3:1: name: duplicate key, first at line 2"},
		},
		{
			name:  "duplicate keys compare resolved values",
			front: "name: demo\ndescription: D.\ninputs:\n  17: string\n  017: number\n  \"17\": date\nsteps:\n  - id: a\n    finish: ok\n",
			want: []string{
				"6:3: inputs.17: duplicate key, first at line 5",
				"7:3: inputs.17: duplicate key, first at line 5",
			},
		},
		{
			name:  "duplicate key in a flow mapping",
			front: "name: demo\ndescription: D.\nsteps:\n  - { id: a, finish: ok, id: b }\n",
			want:  []string{"5:26: steps[0].id: duplicate key, first at line 5"},
		},
		{
			name:  "anchors and aliases",
			front: "name: demo\ndescription: &d D.\nsteps:\n  - id: a\n    agent: *d\n  - id: b\n    finish: ok\n",
			want: []string{
				"3:14: description: anchors and aliases are not allowed",
				"6:12: steps[0].agent: anchors and aliases are not allowed",
			},
		},
		{
			name:  "merge keys are plain keys",
			front: "name: demo\ndescription: D.\nsteps:\n  - id: a\n    <<: {finish: ok}\n",
			want: []string{
				"5:5: steps[0]: needs a kind key: one of agent, task, approve, wait, wait_until, wait_for, finish, parallel, process",
				"6:5: steps[0].<<: unknown field",
			},
		},
		{
			name:  "a key must not be a mapping or null",
			front: "name: demo\ndescription: D.\n? [a]\n: x\n~: y\nsteps:\n  - id: a\n    finish: ok\n",
			want: []string{
				"4:3: frontmatter: a key must be a plain value, not a list or mapping",
				"6:1: frontmatter: a key must not be null",
			},
		},
		{
			name:  "syntax error",
			front: "name: demo\ndescription: [D.\nsteps:\n  - id: a\n    finish: ok\n",
			want:  []string{"3: frontmatter: did not find expected ',' or ']'"},
		},
		{
			name:  "tab indentation",
			front: "name: demo\ndescription: D.\nsteps:\n\t- id: a\n",
			want:  []string{"5: frontmatter: found character that cannot start any token"},
		},
		{
			name:  "two documents",
			front: "name: demo\n--- other\n",
			want:  []string{"2: frontmatter: more than one YAML document"},
		},
		{
			name:  "frontmatter must be a mapping",
			front: "- name: demo\n",
			want:  []string{"2:1: frontmatter: expected a mapping, found a list"},
		},
		{
			name:  "a non-finite number anywhere",
			front: "name: demo\ndescription: D.\ninputs:\n  a: { type: number, one_of: [.inf] }\nsteps:\n  - id: a\n    finish: ok\n",
			want:  []string{"5:31: inputs.a.one_of[0]: .inf is not a JSON number"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := Parse([]byte(processDoc(tc.front)), nil)
			got := issueTexts(t, err)
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("issues:\n got: %q\nwant: %q", got, tc.want)
			}
		})
	}
}

// TestParseCoreSchemaValues shows the core schema at work on whole files.
func TestParseCoreSchemaValues(t *testing.T) {
	t.Parallel()
	src := processDoc(`name: demo
description: yes
inputs:
  n: { type: number, one_of: [017, 0x10, 1.50] }
  s: { type: string, one_of: [no, 2024-01-01, 1_000] }
steps:
  - id: a
    finish: on
`)
	p, err := Parse([]byte(src), nil)
	if err != nil {
		t.Fatal(err)
	}
	if p.Description != "yes" || p.Step("a").Text != "on" {
		t.Errorf("description %q, finish %q", p.Description, p.Step("a").Text)
	}
	if got, want := p.Inputs.Lookup("n").OneOf, []any{json.Number("17"), json.Number("16"), json.Number("1.50")}; !reflect.DeepEqual(got, want) {
		t.Errorf("n one_of %#v, want %#v", got, want)
	}
	if got, want := p.Inputs.Lookup("s").OneOf, []any{"no", "2024-01-01", "1_000"}; !reflect.DeepEqual(got, want) {
		t.Errorf("s one_of %#v, want %#v", got, want)
	}
	if !strings.Contains(string(p.Frontmatter), `"one_of":[17,16,1.5]`) {
		t.Errorf("frontmatter %s", p.Frontmatter)
	}
}

func TestIssueString(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		issue Issue
		want  string
	}{
		{name: "line and column", issue: Issue{Line: 3, Column: 7, Message: "name: required"}, want: "3:7: name: required"},
		{name: "line only", issue: Issue{Line: 3, Message: "frontmatter: bad"}, want: "3: frontmatter: bad"},
		{name: "no position", issue: Issue{Message: "cannot read"}, want: "cannot read"},
	}
	for _, tc := range tests {
		if got := tc.issue.String(); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
	one := &ProcessError{Issues: []Issue{{Line: 1, Column: 1, Message: "a"}}}
	if got := one.Error(); got != "process refused: 1:1: a" {
		t.Errorf("Error() = %q", got)
	}
	two := &ProcessError{Issues: []Issue{{Line: 1, Column: 1, Message: "a"}, {Line: 2, Column: 3, Message: "b"}}}
	if got := two.Error(); got != "process refused, 2 issues:\n1:1: a\n2:3: b" {
		t.Errorf("Error() = %q", got)
	}
}

func TestDefaultOffer(t *testing.T) {
	t.Parallel()
	o := DefaultOffer()
	if !o.HasProfile(ProfileParallel) || o.HasProfile(ProfileCheck) {
		t.Errorf("profiles %q", o.Profiles)
	}
	if len(o.Tools) != 14 || !o.HasTool(ToolUpload) || !o.HasTool(ToolSendEvent) {
		t.Errorf("tools %q", o.Tools)
	}
	o.Tools[0] = "changed"
	if DefaultOffer().Tools[0] != "describe" {
		t.Error("DefaultOffer shares its tool list")
	}
}

func TestParseDuration(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want time.Duration
		err  string
	}{
		{in: "30m", want: 30 * time.Minute},
		{in: "4h", want: 4 * time.Hour},
		{in: "3d", want: 72 * time.Hour},
		{in: "3650d", want: 3650 * 24 * time.Hour},
		{in: "87600h", want: 87600 * time.Hour},
		{in: "5256000m", want: 5256000 * time.Minute},
		{in: "3651d", err: "must be at most 3650 days"},
		{in: "87601h", err: "must be at most 3650 days"},
		{in: "99999999999999999999999d", err: "must be at most 3650 days"},
		{in: "0m", err: "must be a whole number followed by m, h or d, such as 30m, 4h or 3d"},
		{in: "01h", err: "must be a whole number followed by m, h or d, such as 30m, 4h or 3d"},
		{in: "1w", err: "must be a whole number followed by m, h or d, such as 30m, 4h or 3d"},
		{in: "1.5h", err: "must be a whole number followed by m, h or d, such as 30m, 4h or 3d"},
		{in: "h", err: "must be a whole number followed by m, h or d, such as 30m, 4h or 3d"},
		{in: "", err: "must be a whole number followed by m, h or d, such as 30m, 4h or 3d"},
		{in: "1H", err: "must be a whole number followed by m, h or d, such as 30m, 4h or 3d"},
		{in: " 1h", err: "must be a whole number followed by m, h or d, such as 30m, 4h or 3d"},
	}
	for _, tc := range tests {
		d, err := ParseDuration(tc.in)
		switch {
		case tc.err != "":
			if err == nil || err.Error() != tc.err {
				t.Errorf("ParseDuration(%q) error %v, want %q", tc.in, err, tc.err)
			}
		case err != nil || d.D != tc.want || d.Text != tc.in:
			t.Errorf("ParseDuration(%q) = %+v, %v; want %v", tc.in, d, err, tc.want)
		}
	}
}

func ExampleParse() {
	src := []byte(`---
name: hello
description: Greet someone and finish.
inputs:
  who: string
steps:
  - id: greet
    agent: Greet inputs.who.
  - id: done
    finish: greeted
---
# Hello
`)
	p, err := Parse(src, &ParseOptions{Folder: "hello"})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(p.Name, len(p.Steps), p.NextOf(p.Steps[0])[0].To)
	fmt.Println(string(p.Frontmatter))

	_, err = Parse([]byte("---\nname: Hello\ndescription: Greet.\nsteps:\n  - id: greet\n    agent: Greet.\n---\n"), nil)
	var pe *ProcessError
	if errors.As(err, &pe) {
		for _, issue := range pe.Issues {
			fmt.Println(issue)
		}
	}
	// Output:
	// hello 2 done
	// {"description":"Greet someone and finish.","inputs":{"who":"string"},"name":"hello","steps":[{"agent":"Greet inputs.who.","id":"greet"},{"finish":"greeted","id":"done"}]}
	// 2:7: name: must match ^[a-z0-9]+(-[a-z0-9]+)*$
	// 5:5: steps[0]: the last step must name next, or be a finish
}
