package evaluator

import (
	"errors"
	"fmt"
)

// Kind says why an evaluation failed. Each is an evaluator error to the
// run; the kinds are for logs, metrics and Temporal error types.
type Kind string

// The kinds of evaluator error.
const (
	// KindUnavailable: the evaluator could not be reached, did not answer
	// in time, or answered with a server error (5xx, 429, 408). Trying
	// again later may succeed.
	KindUnavailable Kind = "unavailable"
	// KindRejected: the evaluator was reached and refused the request (a
	// 4xx such as a bad key or an unknown model, or a script with no
	// answers for the step). Trying again will not help until its
	// configuration changes.
	KindRejected Kind = "rejected"
	// KindMalformed: the evaluator answered, but not with answers to the
	// questions: not JSON, an answer missing, a name outside one_of, a
	// level out of range, a probability outside [0, 1].
	KindMalformed Kind = "malformed"
)

// String returns the kind's name.
func (k Kind) String() string { return string(k) }

// Sentinels that errors.Is matches against an *Error of each kind.
var (
	ErrUnavailable = errors.New("evaluator unavailable")
	ErrRejected    = errors.New("evaluator refused the request")
	ErrMalformed   = errors.New("evaluator answer malformed")
)

// Error is an evaluation that produced no answers.
type Error struct {
	Kind Kind
	// Model is the model that was asked, when known.
	Model string
	// Status is the HTTP status of the evaluator's reply, 0 when there was
	// none.
	Status int
	// Err is the cause. For KindMalformed it is often an
	// *interpreter.MalformedAnswersError.
	Err error
}

func (e *Error) Error() string {
	what := map[Kind]string{
		KindUnavailable: "unavailable; try again later",
		KindRejected:    "refused the request; check the evaluator's URL, model and key",
		KindMalformed:   "answered, but not in the form asked",
	}[e.Kind]
	if what == "" {
		what = string(e.Kind)
	}
	who := "evaluator"
	if e.Model != "" {
		who = fmt.Sprintf("evaluator %q", e.Model)
	}
	if e.Status != 0 {
		who += fmt.Sprintf(" (HTTP %d)", e.Status)
	}
	if e.Err == nil {
		return who + " " + what
	}
	return fmt.Sprintf("%s %s: %v", who, what, e.Err)
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// Is matches the sentinel of e's kind.
func (e *Error) Is(target error) bool {
	switch target {
	case ErrUnavailable:
		return e.Kind == KindUnavailable
	case ErrRejected:
		return e.Kind == KindRejected
	case ErrMalformed:
		return e.Kind == KindMalformed
	}
	return false
}

// KindOf returns the kind of an evaluator error anywhere in err's chain, or
// "" when err is not one.
func KindOf(err error) Kind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return ""
}
