package workflows

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/baton-run/baton/interpreter"
)

func answerOf(id string, valueBytes int) Answer {
	return Answer{UpdateID: id, Result: Result{Digest: "d", Value: json.RawMessage(`"` + strings.Repeat("v", valueBytes-2) + `"`)}}
}

func ids(as []Answer) string {
	var out []string
	for _, a := range as {
		out = append(out, a.UpdateID)
	}
	return strings.Join(out, ",")
}

func TestKeepRecent(t *testing.T) {
	many := make([]Answer, recentAnswers+10)
	for i := range many {
		many[i] = answerOf(fmt.Sprintf("u%d", i), 100)
	}
	tests := []struct {
		name   string
		recent []Answer
		want   string
	}{
		{name: "none", recent: nil, want: ""},
		{name: "small answers: the newest recentAnswers", recent: many, want: ids(many[10:])},
		{name: "large answers: the newest that fit the bytes",
			recent: []Answer{answerOf("a", 100<<10), answerOf("b", 100<<10), answerOf("c", 100<<10), answerOf("d", 100<<10)},
			want:   "c,d"},
		{name: "an answer alone over the bytes is not kept, nor anything older",
			recent: []Answer{answerOf("a", 10), answerOf("b", recentAnswerBytes+1)}, want: ""},
		{name: "an older large answer stops the keeping",
			recent: []Answer{answerOf("a", 10), answerOf("b", recentAnswerBytes-1000), answerOf("c", 2000)}, want: "c"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := keepRecent(tt.recent)
			if ids(got) != tt.want {
				t.Fatalf("kept %q, want %q", ids(got), tt.want)
			}
			size := 0
			for _, a := range got {
				size += answerSize(a)
			}
			if size > recentAnswerBytes || len(got) > recentAnswers {
				t.Fatalf("kept %d answers of %d bytes", len(got), size)
			}
		})
	}
}

// A run whose answers are large (each claim carries the run data) carries
// only the newest answers that fit through continue-as-new, and its inputs
// only once, in its state.
func TestContinueAsNewCarriesBoundedAnswers(t *testing.T) {
	b := setup(t)
	in := input(t, supplierSrc)
	in.Inputs["vendorName"] = strings.Repeat("A", 200<<10)
	// A lease of 10 minutes ends between claims, so each claim succeeds and
	// answers with the run data.
	for i := range 4 {
		b.at(time.Second+time.Duration(i)*11*time.Minute, UpdateClaim, fmt.Sprintf("c%d", i), claim("check_vendor", fmt.Sprintf("l%d", i)), ok(t, "claim"))
	}
	renew := Write{Digest: "r", Command: interpreter.Renew{StepID: "check_vendor", LeaseID: "l3", NewLeaseID: "l4", Actor: agent, Lease: 10 * time.Minute}}
	b.at(34*time.Minute, UpdateRenew, "r1", renew, ok(t, "renew"))
	b.env.RegisterDelayedCallback(func() { b.env.SetContinueAsNewSuggested(true) }, 35*time.Minute)
	b.env.ExecuteWorkflow(ProcessRun, in)
	var can *workflowContinueAsNew
	if err := b.env.GetWorkflowError(); !asContinueAsNew(err, &can) {
		t.Fatalf("workflow error %v, want continue-as-new", err)
	}
	next := can.input
	if got := ids(next.Continued.Recent); got != "c3,r1" {
		t.Errorf("carried answers %q, want c3,r1", got)
	}
	if next.Inputs != nil {
		t.Errorf("the input carries the inputs beside the state")
	}
	p, err := DataConverter.ToPayloads(next)
	if err != nil {
		t.Fatal(err)
	}
	if size := p.Size(); size > 600<<10 {
		t.Errorf("the continue-as-new input is %d bytes", size)
	}
	// The continued run still has its inputs and its lease.
	b2 := setup(t)
	b2.at(time.Second, UpdateSubmit, "s1", submit("check_vendor", "l4", interpreter.Values{"cleared": true}), ok(t, "submit after continue-as-new"))
	b2.env.RegisterDelayedCallback(func() {
		if v := view(t, b2); v.Data.Inputs["vendorName"] != in.Inputs["vendorName"] {
			t.Errorf("inputs after continue-as-new: %.20v", v.Data.Inputs["vendorName"])
		}
		b2.env.CancelWorkflow()
	}, time.Minute)
	b2.env.ExecuteWorkflow(ProcessRun, next)
}
