package workflows

import (
	"encoding/json"
	"errors"

	"go.temporal.io/sdk/temporal"

	"github.com/baton-run/baton/interpreter"
)

// Input starts a run: the pinned definition by value, the inputs, the mode
// and the starter. Continued is set only by continue-as-new.
type Input struct {
	Org       string               `json:"org"`
	RunID     string               `json:"runId"`
	Process   *interpreter.Process `json:"process"`
	Version   int                  `json:"version"`
	Roles     map[string]string    `json:"roles,omitempty"`
	Operators string               `json:"operators,omitempty"`
	Inputs    interpreter.Values   `json:"inputs"`
	Mode      string               `json:"mode"`
	Starter   interpreter.Actor    `json:"starter"`
	Limits    interpreter.Limits   `json:"limits"`
	Continued *Continued           `json:"continued,omitempty"`
}

// Continued carries a run across continue-as-new: the machine's state and
// the latest answers, since Temporal forgets update ids at that point.
type Continued struct {
	State  json.RawMessage `json:"state"`
	Recent []Answer        `json:"recent,omitempty"`
}

// Answer is an update's answer kept for replays.
type Answer struct {
	UpdateID string `json:"updateId"`
	Result   Result `json:"result"`
}

// Result is every update's result: the command's result as JSON and the
// digest of the request it answered, so a caller can tell a replay with
// other arguments (Temporal returns the first answer for a repeated update
// id whatever the arguments).
type Result struct {
	Digest string          `json:"digest"`
	Value  json.RawMessage `json:"value"`
}

// Outcome is the workflow result of a run that ended with an outcome.
type Outcome struct {
	Outcome string             `json:"outcome"`
	Ended   *interpreter.Ended `json:"ended"`
}

// The update arguments: the machine's command, the request digest, and
// the caller's organization. Org, when set, must be the run's: a run of
// another organization answers not_found, so several organizations can
// share a namespace.
type (
	StartRequest struct{ Digest string }
	ClaimRequest struct {
		Digest string
		Org    string `json:",omitempty"`
		interpreter.Claim
	}
	RenewRequest struct {
		Digest string
		Org    string `json:",omitempty"`
		interpreter.Renew
	}
	SubmitRequest struct {
		Digest string
		Org    string `json:",omitempty"`
		interpreter.Submit
	}
	EscalateRequest struct {
		Digest string
		Org    string `json:",omitempty"`
		interpreter.Escalate
	}
	DecideRequest struct {
		Digest string
		Org    string `json:",omitempty"`
		interpreter.Decide
	}
	CancelRequest struct {
		Digest string
		Org    string `json:",omitempty"`
		interpreter.Cancel
	}
	SendEventRequest struct {
		Digest string
		Org    string `json:",omitempty"`
		interpreter.SendEvent
	}
)

// EventSignal is the payload of SignalEvent.
type EventSignal struct {
	Name   string             `json:"name"`
	Data   interpreter.Values `json:"data,omitempty"`
	Sender string             `json:"sender,omitempty"`
}

// CancelInfo is what Temporal recorded about a cancellation request.
type CancelInfo struct {
	Identity string `json:"identity"`
	Reason   string `json:"reason"`
}

// refusal turns a machine refusal into an application error that carries
// the spec's error as its details and its code as its type.
func refusal(err error) error {
	var e *interpreter.Error
	if !errors.As(err, &e) {
		return err
	}
	return temporal.NewApplicationErrorWithOptions(e.Message, string(e.Code), temporal.ApplicationErrorOptions{NonRetryable: true, Details: []any{e}})
}

// AsRefusal recovers the spec's error from an update's failure, as the
// gateway receives it from the Temporal client.
func AsRefusal(err error) (*interpreter.Error, bool) {
	var ae *temporal.ApplicationError
	if !errors.As(err, &ae) || !ae.HasDetails() {
		return nil, false
	}
	var e *interpreter.Error
	if ae.Details(&e) != nil || e == nil || e.Code == "" {
		return nil, false
	}
	return e, true
}
