package interpreter

import (
	"fmt"
	"strings"
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

func refuse(code Code, message string, issues ...string) *Error {
	return &Error{Code: code, Message: message, Issues: issues}
}

func errRunEnded() *Error {
	return refuse(CodeConflict, "The run has ended; nothing more can be written to it.", IssueRunEnded)
}
