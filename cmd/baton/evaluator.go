package main

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/baton-run/baton/activities/evaluator"
	"github.com/baton-run/baton/interpreter"
)

// evaluatorConfig is the check profile's evaluator, as dev, serve, gateway
// and worker take it. A gateway needs only to know whether there is one
// (it offers check-1 then); give gateways and workers the same flags.
type evaluatorConfig struct {
	kind, url, model, keyFile, script string
	timeout                           time.Duration
	// def is the kind when nothing says otherwise.
	def string
}

const evaluatorKinds = "none, unsure, openai or script"

// register adds the evaluator flags; def is the kind used when neither
// --evaluator nor --evaluator-url nor --evaluator-script says otherwise.
func (e *evaluatorConfig) register(fl *flag.FlagSet, def string) {
	stringFlag(fl, &e.kind, "evaluator", "", "check-1 evaluator: "+evaluatorKinds+" (default: openai with --evaluator-url, script with --evaluator-script, else "+def+")")
	stringFlag(fl, &e.url, "evaluator-url", "", "OpenAI-compatible API root of the check evaluator, such as http://localhost:11434/v1 (Ollama) or https://api.openai.com/v1")
	stringFlag(fl, &e.model, "evaluator-model", "", "model the check evaluator asks, such as llama3.1 or gpt-4o-mini")
	stringFlag(fl, &e.keyFile, "evaluator-key-file", "", "file holding the evaluator's API key (none for local servers)")
	stringFlag(fl, &e.script, "evaluator-script", "", "scripted evaluator answers (YAML or JSON), for demos and tests")
	durationFlag(fl, &e.timeout, "evaluator-timeout", evaluator.DefaultTimeout, "how long one evaluator call may take")
	e.def = def
}

// resolved is the kind in effect.
func (e *evaluatorConfig) resolved() string {
	switch {
	case strings.TrimSpace(e.kind) != "":
		return strings.TrimSpace(e.kind)
	case e.url != "":
		return "openai"
	case e.script != "":
		return "script"
	}
	return e.def
}

// offered reports whether the check profile is offered: an evaluator is
// configured.
func (e *evaluatorConfig) offered() bool { return e.resolved() != "none" }

// build returns the configured evaluator; nil for none.
func (e *evaluatorConfig) build() (evaluator.Evaluator, error) {
	switch e.resolved() {
	case "none":
		return nil, nil
	case "unsure":
		return evaluator.NewUnsure(), nil
	case "openai":
		if e.url == "" || e.model == "" {
			return nil, fmt.Errorf("--evaluator openai needs --evaluator-url and --evaluator-model")
		}
		var key string
		if e.keyFile != "" {
			b, err := os.ReadFile(e.keyFile)
			if err != nil {
				return nil, fmt.Errorf("read --evaluator-key-file: %w", err)
			}
			key = strings.TrimSpace(string(b))
		}
		return evaluator.NewOpenAI(e.url, e.model, &evaluator.OpenAIOptions{APIKey: key, Timeout: e.timeout})
	case "script":
		if e.script == "" {
			return nil, fmt.Errorf("--evaluator script needs --evaluator-script FILE")
		}
		s, err := evaluator.LoadScript(e.script)
		if err != nil {
			return nil, err
		}
		return evaluator.NewScripted(s)
	}
	return nil, fmt.Errorf("--evaluator %q: want %s", e.kind, evaluatorKinds)
}

// describe says which evaluator is in effect, for the start-up lines.
func (e *evaluatorConfig) describe() string {
	switch k := e.resolved(); k {
	case "openai":
		return fmt.Sprintf("%s at %s", e.model, e.url)
	case "script":
		return "scripted answers from " + e.script
	case "unsure":
		return "unsure (every checked submission goes to a person; give --evaluator-url for a model)"
	default:
		return k
	}
}

// profiles are the profiles a deployment offers: parallel-1 and
// baton-subprocess-1 always, check-1 while an evaluator is configured
// (profile-check), baton-tools-1 while a tool registration is loaded
// (docs/profile-tools.md).
func profiles(check, tools bool) []string {
	p := []string{interpreter.ProfileParallel, interpreter.ProfileSubprocess}
	if check {
		p = append(p, interpreter.ProfileCheck)
	}
	if tools {
		p = append(p, interpreter.ProfileTools)
	}
	return p
}
