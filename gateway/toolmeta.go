package gateway

import (
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// toolMeta is what a tool says of itself in tools/list beyond its name: a
// title and a description for people, the MCP annotations clients act on
// (VS Code approves read-only tools without asking; a planning client
// calls them freely), and its schemas. Whether a tool is read-only is its
// kind's (tools.go): a read changes nothing; every write takes a
// requestId, so a repeated call answers the first call's result and has
// no further effect (idempotent).
type toolMeta struct {
	title, description string
	// destructive writes may end or undo work (cancel, decide's failed
	// and rejected); the other writes only add.
	destructive bool
	// openWorld tools reach systems beyond Baton.
	openWorld bool
	// arguments is the argument schema (schemas.go), result the schema of
	// the data of an answer with ok: true (outputschemas.go).
	arguments, result string
}

// annotations are the tool's MCP annotations. Every hint is set, so no
// client falls back to the protocol's defaults (destructive, open world).
func (t *tool) annotations() *mcp.ToolAnnotations {
	readOnly, m := t.kind == readTool, t.meta
	a := &mcp.ToolAnnotations{Title: m.title, ReadOnlyHint: readOnly, OpenWorldHint: &m.openWorld}
	if !readOnly {
		a.IdempotentHint = true
		a.DestructiveHint = &m.destructive
	}
	return a
}
