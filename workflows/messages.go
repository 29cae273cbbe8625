package workflows

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"

	"go.temporal.io/sdk/temporal"

	"github.com/baton-run/baton/interpreter"
)

// Input starts a run: the machine's start (the pinned definition by value,
// the inputs, the mode and the starter) with what the workflow adds
// around it. Continued is set only by continue-as-new.
//
// On the wire the start's fields sit beside the others, the shape
// recorded histories hold.
type Input struct {
	Org string `json:"org"`
	interpreter.Start
	// RequestID and Digest are the start_run's: the run's id derives from
	// the request id (RunID), which is also the start update's id, and the
	// run records its answer with its first read-model write.
	RequestID string `json:"requestId,omitempty"`
	Digest    string `json:"digest,omitempty"`
	// InboxURL is the web inbox's address, for links in the run's details
	// in the Temporal UI; empty without an inbox.
	InboxURL  string     `json:"inboxUrl,omitempty"`
	Continued *Continued `json:"continued,omitempty"`
	// Lean says the run begins as version 1 of changeLeanStart without
	// recording so: every start sets it (Client.StartRun), and a run
	// continued as new keeps it.
	Lean bool `json:"lean,omitempty"`
	// Notices says the run delivers its notices as version 1 of
	// changeNotices without recording so: every start sets it
	// (Client.StartRun), and a run continued as new keeps it.
	Notices bool `json:"notices,omitempty"`
	// OmitBody asks for the start's answer without the process's body,
	// which the caller adds back (see Write.OmitBody).
	OmitBody bool `json:"omitBody,omitempty"`
	// EndsByResult says a child run tells its parent of its end by its
	// workflow's result alone, not by SignalChildEnded: a parent of
	// version 1 of changeChildEndsByResult sets it, and a run continued
	// as new keeps it.
	EndsByResult bool `json:"endsByResult,omitempty"`
}

// Continued carries a run across continue-as-new: the machine's state and
// the latest answers, since Temporal forgets update ids at that point.
type Continued struct {
	State  json.RawMessage `json:"state"`
	Recent []Answer        `json:"recent,omitempty"`
	// Seen holds the update ids the run answered, packed (seen.go).
	Seen string `json:"seen,omitempty"`
	// SeenAll says Seen holds every update id the run ever answered: no
	// id left its window, since the run's start (keptAll).
	SeenAll bool `json:"seenAll,omitempty"`
	// Notices are those the run was delivering (notify.go).
	Notices []*interpreter.Notice `json:"notices,omitempty"`
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

// StartAnswer is what a run says of its start (QueryStart).
type StartAnswer struct {
	// Result is the start update's answer, which the run records with its
	// first read-model write; nil when the run keeps none (it continued
	// from another run, or was started without a request).
	Result *Result `json:"result,omitempty"`
	// Reused is set when the start's requestId was another call's: the
	// run discarded itself, and its start answers request_id_reused.
	Reused bool `json:"reused,omitempty"`
}

// Answered is a write's answer as the run records it beside its read
// model: the gateway replays a requestId from it once Temporal no longer
// can (the run closed or continued as new since).
//
// A write that waits for its check or downstream call first holds its
// requestId: Result is nil until it answers. Refused frees a held
// requestId whose write was then refused.
type Answered struct {
	RequestID string          `json:"requestId"`
	Tool      string          `json:"tool"`
	Digest    string          `json:"digest"`
	Result    json.RawMessage `json:"result"`
	// RunID is the run that records it; empty in histories recorded
	// before runs recorded their requestIds themselves.
	RunID   string `json:"runId,omitempty"`
	Refused bool   `json:"refused,omitempty"`
}

// Published is what the publishing local activity answers: Reused when
// the write's requestId was another call's, so nothing was stored and the
// run discards the write.
type Published struct {
	Reused bool `json:"reused,omitempty"`
	// Channels name, for each notice the write was given, the channels
	// of the run's organization that take it (docs/notifications.md).
	Channels [][]string `json:"channels,omitempty"`
}

// ToolOf names the tool whose calls an update carries.
func ToolOf(update string) string {
	if update == UpdateStart {
		return "start_run"
	}
	return update
}

// Outcome is the workflow result of a run that ended with an outcome.
type Outcome struct {
	Outcome string             `json:"outcome"`
	Ended   *interpreter.Ended `json:"ended"`
}

// ViewRequest is the view query's argument, which a query without one
// (a caller from before) reads as the zero value. A worker from before
// ignores it.
type ViewRequest struct {
	// OmitBody asks for the view with an empty body (see Write.OmitBody).
	OmitBody bool `json:",omitempty"`
}

// StartRequest is the start update's argument.
type StartRequest struct{ Digest string }

// Write is one write to a run: the run, the request that carries it, and
// one machine command. It is also the argument of the update that carries
// it (Client.Write).
//
// On the wire it is the command's own JSON object with "Digest", "Org" and
// "RequestID" beside its fields, the shape recorded histories hold; the
// update's name says which command it is (see writes). RunID and Attempt
// are the client's: the run knows its id, and the update id tells the
// attempt.
type Write struct {
	RunID string
	// RequestID is the request's requestId. The update carrying the first
	// attempt has it as its id and leaves it off the wire; a later attempt
	// carries it, so the run records its answer under it.
	RequestID string
	// Attempt counts the earlier tries of this request that the run
	// refused in a way Temporal remembers under their update id (a
	// *RecordedRefusal): each attempt after the first has an update id of
	// its own, so it runs again.
	Attempt int
	// Digest identifies the request (SPEC-DECISIONS §5): the run echoes it
	// in its answer, so a reused requestId with other arguments shows.
	Digest string
	// Org, when set, must be the run's: a run of another organization
	// answers not_found, so several organizations can share a namespace.
	Org string
	// OmitBody asks for an answer (a run view, a claim) whose body is
	// empty: the caller adds the pinned process's body back from the
	// published version, so the body, which never changes, is not in
	// every answer's history event and record. A worker from before it
	// ignores it and answers with the body.
	OmitBody bool
	Command  interpreter.Command
}

// updateID is the id of the update that carries w.
func (w Write) updateID() string {
	if w.Attempt > 0 {
		return fmt.Sprintf("%s~%d", w.RequestID, w.Attempt)
	}
	return w.RequestID
}

// writes lists the write updates and the command each carries. It is the
// one place that pairs them: the workflow registers a handler for each, and
// the client names the update of a command from it.
var writes = []struct {
	name    string
	command func() interpreter.Command
}{
	{UpdateClaim, func() interpreter.Command { return &interpreter.Claim{} }},
	{UpdateRenew, func() interpreter.Command { return &interpreter.Renew{} }},
	{UpdateSubmit, func() interpreter.Command { return &interpreter.Submit{} }},
	{UpdateEscalate, func() interpreter.Command { return &interpreter.Escalate{} }},
	{UpdateDecide, func() interpreter.Command { return &interpreter.Decide{} }},
	{UpdateCancel, func() interpreter.Command { return &interpreter.Cancel{} }},
	{UpdateSendEvent, func() interpreter.Command { return &interpreter.SendEvent{} }},
	{UpdateCallTool, func() interpreter.Command { return &interpreter.CallTool{} }},
}

// CallOutput is a downstream call's answer, as the CallTool activity
// returns it: the tool's CallToolResult and its isError flag.
type CallOutput struct {
	Result  json.RawMessage `json:"result"`
	IsError bool            `json:"isError"`
}

// The CallTool activity's error types: a call that surely did not reach
// the tool, and one whose outcome is not known.
const (
	CallNotSent  = "not_sent"
	CallNoAnswer = "no_answer"
)

// UpdateOf names the update that carries cmd.
func UpdateOf(cmd interpreter.Command) (string, error) {
	t := reflect.TypeOf(cmd)
	if t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	for _, w := range writes {
		if reflect.TypeOf(w.command()).Elem() == t {
			return w.name, nil
		}
	}
	return "", fmt.Errorf("workflows: no update carries a %T", cmd)
}

// MarshalJSON writes the command's fields with Digest, Org and, for an
// attempt after the first, RequestID beside them.
func (w Write) MarshalJSON() ([]byte, error) {
	cmd, err := json.Marshal(w.Command)
	if err != nil {
		return nil, err
	}
	if len(cmd) < 2 || cmd[0] != '{' {
		return nil, fmt.Errorf("workflows: command %T is not a JSON object", w.Command)
	}
	// The first attempt's update id is its request id: the run reads it
	// from there.
	requestID := w.RequestID
	if w.Attempt == 0 {
		requestID = ""
	}
	head, err := json.Marshal(struct {
		Digest    string
		Org       string `json:",omitempty"`
		RequestID string `json:",omitempty"`
		OmitBody  bool   `json:",omitempty"`
	}{w.Digest, w.Org, requestID, w.OmitBody})
	if err != nil {
		return nil, err
	}
	out := append(head[:len(head)-1:len(head)-1], ',')
	if string(cmd) == "{}" {
		return append(out[:len(out)-1], '}'), nil
	}
	return append(out, cmd[1:]...), nil
}

// decodeWrite reads the argument of the update named name.
func decodeWrite(name string, raw json.RawMessage) (Write, error) {
	for _, w := range writes {
		if w.name != name {
			continue
		}
		var head struct {
			Digest    string
			Org       string
			RequestID string
			OmitBody  bool
		}
		if err := json.Unmarshal(raw, &head); err != nil {
			return Write{}, fmt.Errorf("update %s: %w", name, err)
		}
		cmd := w.command()
		if err := interpreter.DecodeExact(raw, cmd); err != nil {
			return Write{}, fmt.Errorf("update %s: %w", name, err)
		}
		return Write{Digest: head.Digest, Org: head.Org, RequestID: head.RequestID, OmitBody: head.OmitBody, Command: cmd}, nil
	}
	return Write{}, fmt.Errorf("workflows: no update named %q", name)
}

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
// the spec's error as its details and its code as its type. A validator's
// refusal leaves no trace; see recordedRefusal for a handler's.
func refusal(err error) error {
	var e *interpreter.Error
	if !errors.As(err, &e) {
		return err
	}
	return temporal.NewApplicationErrorWithOptions(e.Message, string(e.Code), temporal.ApplicationErrorOptions{NonRetryable: true, Details: []any{e}})
}

// recordedType is the application error type of a refusal an update
// handler gave: Temporal records it and answers it again to the same
// update id, so the caller tries again under another (RecordedRefusal).
const recordedType = "recorded"

// recordedRefusal is refusal for an update handler.
func recordedRefusal(err error) error {
	var e *interpreter.Error
	if !errors.As(err, &e) {
		return err
	}
	return temporal.NewApplicationErrorWithOptions(e.Message, recordedType, temporal.ApplicationErrorOptions{NonRetryable: true, Details: []any{e}})
}

// keptAllType is the application error type of a validator's refusal
// from a run that kept every update id it answered (keptAll): the run
// never answered the request under any attempt, so its refusal is its
// last word, whatever a record says.
const keptAllType = "kept_all"

// FinalRefusal is a refusal of a request the run never answered, from a
// run that kept every update id it answered: a record of an answer to
// that request is one the run never kept (its workflow task was lost).
type FinalRefusal struct{ Refusal *interpreter.Error }

func (r *FinalRefusal) Error() string { return r.Refusal.Error() }

// Unwrap lets errors.As find the spec's error.
func (r *FinalRefusal) Unwrap() error { return r.Refusal }

// RecordedRefusal is a refusal Temporal remembers under the update id that
// got it: the same update id would get it again, so a caller trying the
// request again uses another (the gateway counts attempts).
type RecordedRefusal struct{ Refusal *interpreter.Error }

func (r *RecordedRefusal) Error() string { return r.Refusal.Error() }

// Unwrap lets errors.As find the spec's error.
func (r *RecordedRefusal) Unwrap() error { return r.Refusal }

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
