package evaluator_test

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/baton-run/baton/activities/evaluator"
	"github.com/baton-run/baton/interpreter"
)

// Pointing the evaluator at a local Ollama; for a hosted API give its URL,
// its model name and the key read from a key file.
func ExampleNewOpenAI() {
	e, err := evaluator.NewOpenAI("http://localhost:11434/v1", "llama3.1", &evaluator.OpenAIOptions{Timeout: 2 * time.Minute})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return
	}
	var _ evaluator.Evaluator = e
}

// Scripted answers for a demo: every submission to step a fails its one
// question.
func ExampleNewScripted() {
	script, err := evaluator.ParseScript([]byte(`
steps:
  a:
    - index: 0
      probability: 0.12
`))
	if err != nil {
		panic(err)
	}
	e, err := evaluator.NewScripted(script)
	if err != nil {
		panic(err)
	}
	offer := interpreter.DefaultOffer()
	offer.Profiles = append(offer.Profiles, interpreter.ProfileCheck)
	p, err := interpreter.Parse([]byte("---\nname: demo\ndescription: D.\nsteps:\n  - id: a\n    agent: Do it.\n    check: It is done.\n  - id: b\n    finish: ok\n---\n"), &interpreter.ParseOptions{Offer: &offer})
	if err != nil {
		panic(err)
	}
	s := p.Step("a")
	r, _ := interpreter.NewCheckRequest(p, s, nil, interpreter.Submission{}, interpreter.DefaultCheckLimits())
	a, err := e.Evaluate(context.Background(), r)
	if err != nil {
		panic(err)
	}
	v, issues, _ := interpreter.JudgeCheck(s, r, a, interpreter.DefaultCheckLimits(), time.Now())
	fmt.Println(v.Verdict, v.Model)
	fmt.Println(issues[0])
	// Output:
	// fail baton-scripted
	// check: It is done. → no (0.12)
}
