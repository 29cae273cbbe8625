package inbox

import (
	"github.com/baton-run/baton/interpreter"
)

// The result shapes of tools.md that the interpreter has no type for. The
// run view of get_run, decide and cancel, and its work items, decode into
// interpreter.View and interpreter.WorkItem, so a new field of the view
// needs no edit here. Tool results are decoded with numbers kept exactly
// as the tools wrote them.

// workList is get_work's result for a person or operator.
type workList struct {
	Items      []interpreter.PersonWork `json:"items"`
	NextCursor *string                  `json:"nextCursor"`
}

// runList is list_runs' result.
type runList struct {
	Items      []interpreter.RunListItem `json:"items"`
	NextCursor *string                   `json:"nextCursor"`
}

// uploaded is upload's result.
type uploaded struct {
	ID     string `json:"id"`
	SHA256 string `json:"sha256"`
	Bytes  int64  `json:"bytes"`
}

// described is the part of describe's result the inbox uses.
type described struct {
	MaxUploadBytes int64 `json:"maxUploadBytes"`
}
