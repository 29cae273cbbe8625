package gateway

import (
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/baton-run/baton/interpreter"
)

// toolMeta is what a tool says of itself in tools/list beyond its name and
// schemas: a title for people and the MCP annotations clients act on (VS
// Code approves read-only tools without asking; a planning client calls
// them freely).
type toolMeta struct {
	title string
	// readOnly tools change nothing. The others are writes: every one
	// takes a requestId, so a repeated call answers the first call's
	// result and has no further effect (idempotent).
	readOnly bool
	// destructive writes may end or undo work (cancel, decide's failed
	// and rejected); the other writes only add.
	destructive bool
	// openWorld tools reach systems beyond Baton.
	openWorld bool
}

var toolMetas = map[string]toolMeta{
	"describe":               {title: "Describe this Baton server", readOnly: true},
	"list_processes":         {title: "List published processes", readOnly: true},
	"start_run":              {title: "Start a run"},
	"get_run":                {title: "Show a run", readOnly: true},
	"get_work":               {title: "Find work to do", readOnly: true},
	"claim":                  {title: "Claim a step"},
	"renew":                  {title: "Renew a lease"},
	"upload":                 {title: "Upload an evidence file"},
	"submit":                 {title: "Submit a step's work"},
	"escalate":               {title: "Escalate a step to a person"},
	"decide":                 {title: "Decide a work item", destructive: true},
	"cancel":                 {title: "Cancel a run", destructive: true},
	"send_event":             {title: "Send an event to a run"},
	"list_runs":              {title: "List runs", readOnly: true},
	interpreter.ToolCallTool: {title: "Call a claimed step's tool", destructive: true, openWorld: true},
}

// annotations are the tool's MCP annotations. Every hint is set, so no
// client falls back to the protocol's defaults (destructive, open world).
func (m toolMeta) annotations() *mcp.ToolAnnotations {
	a := &mcp.ToolAnnotations{Title: m.title, ReadOnlyHint: m.readOnly, OpenWorldHint: &m.openWorld}
	if !m.readOnly {
		a.IdempotentHint = true
		a.DestructiveHint = &m.destructive
	}
	return a
}
