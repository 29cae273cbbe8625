package evaluator

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/baton-run/baton/interpreter"
)

// Observed reports every call's outcome (ok or the kind of its error) and
// duration, and leaves the evaluator's answers and errors as they were.
func TestObserved(t *testing.T) {
	_, _, r := vendorCheck(t)
	type call struct {
		outcome string
		took    time.Duration
	}
	var calls []call
	observe := func(outcome string, took time.Duration) { calls = append(calls, call{outcome, took}) }

	slow := Func(func(context.Context, *interpreter.CheckRequest) (*interpreter.CheckAnswers, error) {
		time.Sleep(20 * time.Millisecond)
		return nil, errors.New("connection refused")
	})
	malformed := Func(func(context.Context, *interpreter.CheckRequest) (*interpreter.CheckAnswers, error) {
		return &interpreter.CheckAnswers{Model: "m"}, nil
	})
	tests := []struct {
		name    string
		e       Evaluator
		r       *interpreter.CheckRequest
		outcome string
		wantErr error
	}{
		{"answers", NewUnsure(), r, "ok", nil},
		{"unreachable", slow, r, "unavailable", ErrUnavailable},
		{"malformed", malformed, r, "malformed", ErrMalformed},
		{"error of no kind", NewUnsure(), nil, "error", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			calls = nil
			a, err := Observed(tc.e, observe).Evaluate(context.Background(), tc.r)
			if len(calls) != 1 || calls[0].outcome != tc.outcome {
				t.Fatalf("observed %+v, want one call with outcome %s", calls, tc.outcome)
			}
			switch {
			case tc.outcome == "ok" && (err != nil || a == nil):
				t.Fatalf("answers %v, error %v", a, err)
			case tc.outcome != "ok" && err == nil:
				t.Fatalf("the error was lost: answers %v", a)
			case tc.wantErr != nil && !errors.Is(err, tc.wantErr):
				t.Fatalf("error %v, want %v", err, tc.wantErr)
			}
		})
	}
	calls = nil
	_, _ = Observed(slow, observe).Evaluate(context.Background(), r)
	if calls[0].took < 20*time.Millisecond {
		t.Errorf("a 20ms call was observed as %v", calls[0].took)
	}

	m, ok := Observed(NewUnsure(), observe).(interface{ Model() string })
	if !ok || m.Model() != UnsureModel {
		t.Errorf("the observed evaluator does not name its model")
	}
	if e := NewUnsure(); Observed(e, nil) != Evaluator(e) {
		t.Error("Observed with no observer wraps the evaluator anyway")
	}
}
