package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/baton-run/baton/gateway/auth"
)

// Call runs one tool for an identity the caller has authenticated, exactly as
// the MCP endpoint runs it: the same argument checks, idempotency on
// requestId, refusals and rendering (signed file links). It returns the
// tool's data on success and an *interpreter.Error for a refusal; any other
// error is the server failing.
//
// In-process callers such as the web inbox use it, so a person deciding in a
// browser meets the rules of decide and nothing else.
func (g *Gateway) Call(ctx context.Context, id auth.Identity, tool string, args json.RawMessage) (json.RawMessage, error) {
	h := g.toolHandler(tool)
	if h == nil {
		return nil, invalid(fmt.Sprintf("No tool %q: use one of %s.", tool, strings.Join(toolNames, ", ")), "tool: unknown")
	}
	id, err := id.Normalize()
	if err != nil {
		return nil, forbidden("No valid identity: " + err.Error())
	}
	// What follows is the MCP path's run, from the decoded arguments on.
	raw := args
	if len(raw) == 0 || string(raw) == "null" {
		raw = json.RawMessage(`{}`)
	}
	var v any
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	if err := d.Decode(&v); err != nil {
		return nil, invalid("The arguments are not JSON.", "arguments: not JSON")
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, invalid("The arguments must be an object.", "arguments: expected object")
	}
	if issues := g.checkArgs(tool, raw); len(issues) > 0 {
		return nil, invalid("The arguments do not match the tool's schema: "+strings.Join(issues, "; ")+".", issues...)
	}
	data, err := h(ctx, &call{tool: tool, id: &id, args: m, raw: raw})
	if err != nil {
		return nil, err
	}
	if b, ok := data.(json.RawMessage); ok {
		return b, nil
	}
	b, err := json.Marshal(data)
	if err != nil {
		return nil, fmt.Errorf("encode the result of %s: %w", tool, err)
	}
	return b, nil
}

// toolHandler returns the handler of a tool, the one addTools registers
// with the MCP server, or nil for a name that is not a tool.
func (g *Gateway) toolHandler(name string) handler {
	switch name {
	case "describe":
		return g.describe
	case "list_processes":
		return g.listProcesses
	case "start_run":
		return g.startRun
	case "get_run":
		return g.getRun
	case "get_work":
		return g.getWork
	case "claim":
		return g.claim
	case "renew":
		return g.renew
	case "upload":
		return g.upload
	case "submit":
		return g.submit
	case "escalate":
		return g.escalate
	case "decide":
		return g.decide
	case "cancel":
		return g.cancel
	case "send_event":
		return g.sendEvent
	case "list_runs":
		return g.listRuns
	}
	return nil
}
