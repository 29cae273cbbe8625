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
			e := refuse(CodeNotAccepted, tt.message, tt.issues...)
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
	refuse(CodeInvalid, "m", in...)
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
