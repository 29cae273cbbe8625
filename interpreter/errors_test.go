package interpreter

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestRefusalsAreBounded(t *testing.T) {
	long := strings.Repeat("é", MaxIssueBytes) // two bytes each
	many := make([]string, 5*MaxIssues)
	for i := range many {
		many[i] = fmt.Sprintf("output.f%d: not declared", i)
	}
	tests := []struct {
		name    string
		message string
		issues  []string
		want    []string
	}{
		{name: "few issues pass unchanged", message: "m", issues: []string{"a: b", "c: d"}, want: []string{"a: b", "c: d"}},
		{name: "no issues stay none", message: "m"},
		{name: "exactly the most", message: "m", issues: many[:MaxIssues], want: many[:MaxIssues]},
		{name: "past the most, the last says how many more", message: "m", issues: many,
			want: append(append([]string(nil), many[:MaxIssues-1]...), fmt.Sprintf("issues: %d more not shown", len(many)-MaxIssues+1))},
		{name: "a long issue is cut", message: strings.Repeat("x", 3*MaxMessageBytes), issues: []string{"output." + long + ": not declared"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := Refuse(CodeNotAccepted, tt.message, tt.issues...)
			if tt.want != nil && strings.Join(e.Issues, "|") != strings.Join(tt.want, "|") {
				t.Errorf("issues\n got %q\nwant %q", e.Issues, tt.want)
			}
			if tt.issues == nil && e.Issues != nil {
				t.Errorf("issues %q, want none", e.Issues)
			}
			if len(e.Issues) > MaxIssues || len(e.Message) > MaxMessageBytes || !utf8.ValidString(e.Message) {
				t.Errorf("%d issues, message of %d bytes (valid UTF-8 %v)", len(e.Issues), len(e.Message), utf8.ValidString(e.Message))
			}
			for _, s := range e.Issues {
				if len(s) > MaxIssueBytes || !utf8.ValidString(s) {
					t.Errorf("issue of %d bytes (valid UTF-8 %v): %.40q…", len(s), utf8.ValidString(s), s)
				}
			}
		})
	}
	// Refusing does not touch the caller's issues.
	in := []string{long}
	Refuse(CodeInvalid, "m", in...)
	if in[0] != long {
		t.Error("refuse changed the caller's slice")
	}
}

// A submission with tens of thousands of problems is refused with a
// bounded answer that still starts with the first problems.
func TestSubmissionWithManyIssuesIsBounded(t *testing.T) {
	p := loadSource(t, heldSrc)
	m := start(t, p, Values{"note": "n"}, starter, ModeLive)
	claim(t, m, "work", agentA, "l1", t0)
	out := Values{}
	for i := range 50000 {
		out[fmt.Sprintf("undeclared_%06d_%s", i, strings.Repeat("k", 200))] = true
	}
	sub := sampleSubmission(p.Step("work"))
	sub.Output = out
	e := refused(t, m, Submit{StepID: "work", LeaseID: "l1", Actor: agentA, Submission: sub}, t0, CodeNotAccepted)
	b, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) > 64<<10 {
		t.Fatalf("the refusal is %d bytes", len(b))
	}
	// 50000 undeclared fields, and the run data over its cap.
	if len(e.Issues) != MaxIssues || !strings.HasPrefix(e.Issues[0], "output.undeclared_") || e.Issues[MaxIssues-1] != fmt.Sprintf("issues: %d more not shown", 50001-MaxIssues+1) {
		t.Fatalf("issues %d: first %q, last %q", len(e.Issues), e.Issues[0], e.Issues[len(e.Issues)-1])
	}
}

// Each named refusal has its code and, where the spec names one, its
// stand-alone issue.
func TestNamedRefusals(t *testing.T) {
	long := strings.Repeat("é", 60)
	for _, tc := range []struct {
		name  string
		err   *Error
		code  Code
		issue string
		text  string
	}{
		{"run ended", ErrRunEnded(), CodeConflict, IssueRunEnded, "The run has ended"},
		{"requestId reused", ErrRequestIDReused(), CodeConflict, IssueRequestIDReused, "requestId was already used"},
		{"no run", ErrNoRun("r_1"), CodeNotFound, "", `No run "r_1" in this organization.`},
		{"no run, long id", ErrNoRun(long), CodeNotFound, "", `No run "` + strings.Repeat("é", 40) + `…" in this organization.`},
		{"no process", ErrNoProcess("refund"), CodeNotFound, "", `No published process "refund" in this organization.`},
		{"retry", ErrRetry(), CodeRetry, "", "retry with the same requestId"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.err.Code != tc.code || !strings.Contains(tc.err.Message, tc.text) {
				t.Errorf("%s = %v", tc.name, tc.err)
			}
			if (tc.issue == "") != (len(tc.err.Issues) == 0) || tc.issue != "" && (len(tc.err.Issues) != 1 || tc.err.Issues[0] != tc.issue) {
				t.Errorf("%s issues = %q, want %q", tc.name, tc.err.Issues, tc.issue)
			}
		})
	}
}
