package interpreter

import "testing"

func TestViewStepState(t *testing.T) {
	ready := "ready"
	v := &View{Steps: []StepView{{ID: "a", State: &ready}, {ID: "b"}}}
	for _, tc := range []struct {
		name string
		v    *View
		id   string
		want string
	}{
		{"listed with a state", v, "a", "ready"},
		{"listed, not reached", v, "b", "null"},
		{"not listed", v, "c", "absent"},
		{"no view", nil, "a", "unknown"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.v.StepState(tc.id); got != tc.want {
				t.Errorf("StepState(%q) = %q, want %q", tc.id, got, tc.want)
			}
		})
	}
}

func TestViewStepStates(t *testing.T) {
	ready := "ready"
	v := &View{Steps: []StepView{{ID: "a", State: &ready}, {ID: "b"}}}
	if got := v.StepStates(); got != "a=ready, b=null" {
		t.Errorf("StepStates() = %q", got)
	}
	if got := (&View{}).StepStates(); got != "" {
		t.Errorf("StepStates() of a view without steps = %q", got)
	}
	var none *View
	if got := none.StepStates(); got != "(no view)" {
		t.Errorf("StepStates() without a view = %q", got)
	}
}
