package interpreter_test

import (
	"fmt"
	"time"

	"github.com/baton-run/baton/interpreter"
)

// A check from submission to verdict: build what the evaluator is shown,
// take its answers, judge them.
func ExampleJudgeCheck() {
	src := `---
name: screening
description: Screen a vendor.
steps:
  - id: screen
    agent: Screen the vendor against the OFAC and EU lists.
    output: { cleared: boolean }
    check:
      - ask: The cleared verdict is supported by the summary.
        pass: 0.9
        fail: 0.5
      - ask: How complete is the screening?
        levels: [Neither list is covered., One list is covered., Both lists are covered.]
        pass: 2
  - id: done
    finish: screened
---
`
	offer := interpreter.DefaultOffer()
	offer.Profiles = append(offer.Profiles, interpreter.ProfileCheck)
	p, err := interpreter.Parse([]byte(src), &interpreter.ParseOptions{Offer: &offer})
	if err != nil {
		panic(err)
	}
	s := p.Step("screen")
	limits := interpreter.DefaultCheckLimits()
	summary := "Screened on OFAC only."
	r, err := interpreter.NewCheckRequest(p, s, nil, interpreter.Submission{
		Output: interpreter.Values{"cleared": true}, Summary: &summary,
	}, limits)
	if err != nil {
		panic(err)
	}

	// An evaluator answers r; here, by hand.
	p1, level, conf := 0.3, 1, 0.92
	answers := &interpreter.CheckAnswers{Model: "example-model", Answers: []interpreter.CheckAnswer{
		{ID: r.Questions[0].ID, Probability: &p1},
		{ID: r.Questions[1].ID, Level: &level, Confidence: &conf},
	}}
	v, issues, err := interpreter.JudgeCheck(s, r, answers, limits, time.Date(2026, 10, 6, 9, 4, 20, 0, time.UTC))
	if err != nil {
		panic(err)
	}
	fmt.Println(v.Verdict, v.At)
	for _, line := range issues {
		fmt.Println(line)
	}
	// Output:
	// fail 2026-10-06T09:04:20.000Z
	// check: The cleared verdict is supported by the summary. → no (0.30)
	// check: How complete is the screening? → level 1: One list is covered. (0.92)
}
