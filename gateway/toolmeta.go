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

var toolMetas = map[interpreter.Tool]toolMeta{
	interpreter.ToolDescribe:      {title: "Describe this Baton server", readOnly: true},
	interpreter.ToolListProcesses: {title: "List published processes", readOnly: true},
	interpreter.ToolStartRun:      {title: "Start a run"},
	interpreter.ToolGetRun:        {title: "Show a run", readOnly: true},
	interpreter.ToolGetWork:       {title: "Find work to do", readOnly: true},
	interpreter.ToolClaim:         {title: "Claim a step"},
	interpreter.ToolRenew:         {title: "Renew a lease"},
	interpreter.ToolUpload:        {title: "Upload an evidence file"},
	interpreter.ToolSubmit:        {title: "Submit a step's work"},
	interpreter.ToolEscalate:      {title: "Escalate a step to a person"},
	interpreter.ToolDecide:        {title: "Decide a work item", destructive: true},
	interpreter.ToolCancel:        {title: "Cancel a run", destructive: true},
	interpreter.ToolSendEvent:     {title: "Send an event to a run"},
	interpreter.ToolListRuns:      {title: "List runs", readOnly: true},
	interpreter.ToolCallTool:      {title: "Call a claimed step's tool", destructive: true, openWorld: true},
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
