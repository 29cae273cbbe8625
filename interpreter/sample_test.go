package interpreter

import (
	"testing"

	"github.com/baton-run/baton/internal/testing/spectest"
)

// Samples satisfy the declarations they are made for: every input and
// every step output of every conformance fixture.
func TestSamplesSatisfyTheirFields(t *testing.T) {
	for _, name := range spectest.Fixtures(t) {
		p := loadFixture(t, name)
		if issues := CheckValues("inputs", p.Inputs, Samples(p.Inputs)); len(issues) != 0 {
			t.Errorf("%s inputs: %q", name, issues)
		}
		for _, s := range p.Steps {
			if issues := CheckValues("output", s.Output, Samples(s.Output)); len(issues) != 0 {
				t.Errorf("%s step %s output: %q", name, s.ID, issues)
			}
		}
	}
}

func TestSampleOfEveryType(t *testing.T) {
	fs := Fields{
		{Name: "s", Type: TypeString}, {Name: "n", Type: TypeNumber}, {Name: "b", Type: TypeBoolean},
		{Name: "d", Type: TypeDate}, {Name: "at", Type: TypeDatetime}, {Name: "o", Type: TypeObject},
		{Name: "Owner", Type: TypePerson}, {Name: "l", Type: TypeList, Items: &Field{Type: TypePerson}},
		{Name: "bare", Type: TypeList}, {Name: "pick", Type: TypeString, OneOf: []any{"low", "high"}},
	}
	got := Samples(fs)
	if issues := CheckValues("v", fs, got); len(issues) != 0 {
		t.Fatalf("samples %v break their fields: %q", got, issues)
	}
	if got["Owner"] != "owner@example.com" || got["pick"] != "low" || got["at"] != SampleDatetime {
		t.Fatalf("samples %v", got)
	}
}
