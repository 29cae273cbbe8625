package interpreter

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Code is one of the error codes of spec §4.3.
type Code string

// The error codes.
const (
	CodeInvalid     Code = "invalid"
	CodeNotAccepted Code = "not_accepted"
	CodeStale       Code = "stale"
	CodeConflict    Code = "conflict"
	CodeForbidden   Code = "forbidden"
	CodeNotFound    Code = "not_found"
	CodeRetry       Code = "retry"
)

// Issue strings that stand alone in a conflict's issues list.
const (
	IssueRunEnded        = "run_ended"
	IssueAlreadyDecided  = "already_decided"
	IssueClaimedByOther  = "claimed_by_other"
	IssueClaimedByYou    = "claimed_by_you"
	IssueNotReady        = "not_ready"
	IssueRequestIDReused = "request_id_reused"
)

// Error is a refusal: the spec's {code, message, issues}, one Go type from
// the machine to the wire. A command refused with an Error changed nothing.
type Error struct {
	Code    Code     `json:"code"`
	Message string   `json:"message"`
	Issues  []string `json:"issues,omitempty"`
}

func (e *Error) Error() string {
	if len(e.Issues) == 0 {
		return fmt.Sprintf("%s: %s", e.Code, e.Message)
	}
	return fmt.Sprintf("%s: %s (%s)", e.Code, e.Message, strings.Join(e.Issues, "; "))
}

// Bounds of one refusal. A call can have as many problems as its
// arguments have fields, and a field name as long as its request; the
// refusal travels through Temporal and into the next attempt's handoff, so
// it is kept far below what one payload may carry. Past MaxIssues the
// last issue says how many more there were; a longer issue or message is
// cut short with "…".
const (
	MaxIssues       = 100
	MaxIssueBytes   = 300
	MaxMessageBytes = 4000
)

// Refuse returns a refusal with code, message and issues, within the
// bounds above. It is the one way to make an Error, here and in the hosts,
// so every refusal that reaches the wire keeps them.
func Refuse(code Code, message string, issues ...string) *Error {
	var kept []string
	for i, s := range issues {
		if i == MaxIssues-1 && len(issues) > MaxIssues {
			kept = append(kept, fmt.Sprintf("issues: %d more not shown", len(issues)-i))
			break
		}
		kept = append(kept, cut(s, MaxIssueBytes))
	}
	return &Error{Code: code, Message: cut(message, MaxMessageBytes), Issues: kept}
}

// cut shortens s to at most n bytes, ending in "…" when it was longer,
// without splitting a character.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	const ellipsis = "…"
	end := n - len(ellipsis)
	for end > 0 && !utf8.RuneStart(s[end]) {
		end--
	}
	return s[:end] + ellipsis
}

// The refusals more than one place gives, each in the same words
// everywhere.

// ErrRunEnded refuses a write to a run that has ended or been cancelled.
func ErrRunEnded() *Error {
	return Refuse(CodeConflict, "The run has ended; nothing more can be written to it.", IssueRunEnded)
}

// ErrRequestIDReused refuses a requestId used before with other arguments
// or by another identity (spec §4.4).
func ErrRequestIDReused() *Error {
	return Refuse(CodeConflict, "This requestId was already used with other arguments or by another identity; use a new one.", IssueRequestIDReused)
}

// ErrNoRun refuses a runId the organization has no run of.
func ErrNoRun(runID string) *Error {
	return Refuse(CodeNotFound, fmt.Sprintf("No run %s in this organization.", Quote(runID)))
}

// ErrNoProcess refuses a process name the organization has published no
// version of.
func ErrNoProcess(name string) *Error {
	return Refuse(CodeNotFound, fmt.Sprintf("No published process %s in this organization.", Quote(name)))
}

// ErrRetry is the answer of a call the server could not complete: a
// failure of its own, not of the call's.
func ErrRetry() *Error {
	return Refuse(CodeRetry, "The server could not complete the call; retry with the same requestId.")
}

// Quote is how a refusal's message shows a caller's text: quoted, and cut
// at 80 bytes, so a long name keeps the message readable.
func Quote(s string) string {
	const most = 80
	if len(s) > most {
		end := most
		for end > 0 && !utf8.RuneStart(s[end]) {
			end--
		}
		s = s[:end] + "…"
	}
	return fmt.Sprintf("%q", s)
}
