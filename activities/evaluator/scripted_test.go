package evaluator

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/baton-run/baton/interpreter"
)

const vendorScript = `
model: demo-model
steps:
  check_vendor:
    - ask: The cleared verdict matches what the attached report says.
      probability: 0.12
    - index: 1
      name: hedges
      confidence: 0.9
    - ask: How complete is the screening?
      level: 1
      confidence: 0.85
  other-process/check_vendor:
    - index: 0
      abstain: true
    - index: 1
      abstain: true
    - index: 2
      abstain: true
`

func scripted(t *testing.T, src string) *Scripted {
	t.Helper()
	sc, err := ParseScript([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	e, err := NewScripted(sc)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func TestScripted(t *testing.T) {
	_, s, r := vendorCheck(t)
	e := scripted(t, vendorScript)
	a, err := e.Evaluate(context.Background(), r)
	if err != nil {
		t.Fatal(err)
	}
	v, lines, err := interpreter.JudgeCheck(s, r, a, interpreter.DefaultCheckLimits(), t0)
	if err != nil {
		t.Fatal(err)
	}
	if v.Verdict != interpreter.VerdictFail || v.Model != "demo-model" || e.Model() != "demo-model" {
		t.Errorf("verdict %s by %q, want fail by demo-model", v.Verdict, v.Model)
	}
	want := []string{
		"check: The cleared verdict matches what the attached report says. → no (0.12)",
		"check: What does the summary do? → hedges (0.90)",
		"check: How complete is the screening? → level 1: One list is covered. (0.85)",
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("lines %q, want %q", lines, want)
	}

	// process/step wins over step.
	other := *r
	other.Process = "other-process"
	a, err = e.Evaluate(context.Background(), &other)
	if err != nil {
		t.Fatal(err)
	}
	if v := judge(t, s, &other, a); v.Verdict != interpreter.VerdictUnsure {
		t.Errorf("other-process verdict %s, want unsure", v.Verdict)
	}
}

func TestScriptedRefuses(t *testing.T) {
	_, _, r := vendorCheck(t)
	for _, tt := range []struct {
		name, src string
		kind      Kind
		want      string
	}{
		{"unknown step", "steps:\n  approve:\n    - index: 0\n      probability: 1\n", KindRejected, `no answers for step "check_vendor"`},
		{"unanswered question", "steps:\n  check_vendor:\n    - index: 0\n      probability: 1\n    - index: 1\n      name: states\n      confidence: 1\n", KindRejected, `no answer to question 2 "How complete is the screening?"`},
		{"answer to no question", "steps:\n  check_vendor:\n    - index: 0\n      probability: 1\n    - index: 1\n      name: states\n      confidence: 1\n    - index: 2\n      level: 2\n      confidence: 1\n    - ask: Is it late?\n      probability: 1\n", KindRejected, "steps.check_vendor[3]: names no question"},
		{"two answers to one question", "steps:\n  check_vendor:\n    - index: 0\n      probability: 1\n    - ask: The cleared verdict matches what the attached report says.\n      probability: 0\n", KindRejected, "both answer question 0"},
		{"name outside one_of", "steps:\n  check_vendor:\n    - index: 0\n      probability: 1\n    - index: 1\n      name: maybe\n      confidence: 1\n    - index: 2\n      level: 2\n      confidence: 1\n", KindMalformed, `"maybe" is not one of`},
		{"level out of range", "steps:\n  check_vendor:\n    - index: 0\n      probability: 1\n    - index: 1\n      name: states\n      confidence: 1\n    - index: 2\n      level: 7\n      confidence: 1\n", KindMalformed, "7 is not a level from 0 to 2"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			a, err := scripted(t, tt.src).Evaluate(context.Background(), r)
			if a != nil || KindOf(err) != tt.kind || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("a = %+v, err = %v; want %s: %s", a, err, tt.kind, tt.want)
			}
		})
	}
}

func TestParseScript(t *testing.T) {
	// JSON is YAML too.
	sc, err := ParseScript([]byte(`{"steps": {"check_vendor": [{"index": 0, "probability": 0.5}]}}`))
	if err != nil || len(sc.Steps["check_vendor"]) != 1 {
		t.Fatalf("JSON script: %+v, %v", sc, err)
	}
	e, err := NewScripted(sc)
	if err != nil || e.Model() != ScriptedModel {
		t.Errorf("default model: %v %v", e, err)
	}
	for _, tt := range []struct{ name, src, want string }{
		{"unknown key", "steps:\n  a:\n    - index: 0\n      probabilty: 1\n", "probabilty"},
		{"duplicate step", "steps:\n  a:\n    - index: 0\n  a:\n    - index: 1\n", "already defined"},
	} {
		if _, err := ParseScript([]byte(tt.src)); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: err = %v, want %q", tt.name, err, tt.want)
		}
	}
	for _, tt := range []struct{ name, src, want string }{
		{"no steps", "model: m\n", "no steps"},
		{"ask and index", "steps:\n  a:\n    - index: 0\n      ask: Q?\n      probability: 1\n", "not both or neither"},
		{"neither", "steps:\n  a:\n    - probability: 1\n", "not both or neither"},
		{"empty step", "steps:\n  a: []\n", "steps.a: no answers"},
	} {
		sc, err := ParseScript([]byte(tt.src))
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if _, err := NewScripted(sc); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: err = %v, want %q", tt.name, err, tt.want)
		}
	}

	path := filepath.Join(t.TempDir(), "answers.yaml")
	if err := os.WriteFile(path, []byte(vendorScript), 0o600); err != nil {
		t.Fatal(err)
	}
	if sc, err := LoadScript(path); err != nil || sc.Model != "demo-model" {
		t.Errorf("LoadScript: %+v, %v", sc, err)
	}
	if _, err := LoadScript(filepath.Join(t.TempDir(), "missing.yaml")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}
