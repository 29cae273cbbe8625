package spectest

import (
	"testing"
)

// A parent's results are core-2's plus the additions of
// baton-subprocess-1, each checked against the profile's schema.
func TestValidateSubprocessAdditions(t *testing.T) {
	t.Parallel()
	withStep := func(step map[string]any, output any) map[string]any {
		v := decodeRunView(t)
		v["steps"] = append(v["steps"].([]any), step)
		if output != nil {
			v["data"].(map[string]any)["steps"].(map[string]any)[step["id"].(string)] = map[string]any{
				"output": output, "by": "server", "at": "2026-10-06T09:05:00Z", "history": []any{},
			}
		}
		return map[string]any{"ok": true, "data": v}
	}
	child := map[string]any{"runId": "r_c1", "outcome": "cleared", "note": nil}
	listing := func(processes any) map[string]any {
		item := map[string]any{"name": "rfp", "description": "d", "version": 2, "inputs": map[string]any{}}
		if processes != nil {
			item["processes"] = processes
		}
		return map[string]any{"ok": true, "data": map[string]any{"items": []any{item}, "nextCursor": nil}}
	}
	tests := []struct {
		name  string
		tool  string
		value any
		valid bool
	}{
		{name: "a waiting process step", tool: "get_run", valid: true, value: withStep(map[string]any{"id": "screen_each", "kind": "process", "state": "waiting",
			"children": map[string]any{"total": 3, "running": 1, "ended": 1, "runningIds": []any{"r_c2"}}}, nil)},
		{name: "a done for_each step and its output", tool: "decide", valid: true, value: withStep(map[string]any{"id": "screen_each", "kind": "process", "state": "done"},
			map[string]any{"items": []any{child, map[string]any{"runId": "r_c2", "outcome": "failed", "note": "offline"}}})},
		{name: "one child's output", tool: "submit", valid: true, value: withStep(map[string]any{"id": "legal", "kind": "process", "state": "done"}, child)},
		{name: "children without runningIds", tool: "get_run", value: withStep(map[string]any{"id": "s", "kind": "process", "state": "waiting",
			"children": map[string]any{"total": 3, "running": 1, "ended": 1}}, nil)},
		{name: "a due on a process step", tool: "get_run", value: withStep(map[string]any{"id": "s", "kind": "process", "state": "waiting", "due": "2026-10-08T09:04:12Z"}, nil)},
		{name: "children on a core step", tool: "get_run", value: withStep(map[string]any{"id": "s", "kind": "agent", "state": "ready",
			"children": map[string]any{"total": 1, "running": 1, "ended": 0, "runningIds": []any{"r"}}}, nil)},
		{name: "an output without a note", tool: "get_run", value: withStep(map[string]any{"id": "legal", "kind": "process", "state": "done"},
			map[string]any{"runId": "r_c1", "outcome": "signed"})},
		{name: "processes on a listing", tool: "list_processes", valid: true, value: listing([]any{map[string]any{"step": "screen_each", "process": "supplier-screening", "version": 3}})},
		{name: "a listing without processes", tool: "list_processes", valid: true, value: listing(nil)},
		{name: "processes without a version", tool: "list_processes", value: listing([]any{map[string]any{"step": "screen_each", "process": "supplier-screening"}})},
		{name: "empty processes", tool: "list_processes", value: listing([]any{})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := validateToolResult(tt.tool, tt.value)
			if tt.valid && err != nil {
				t.Errorf("want valid, got %v", err)
			}
			if !tt.valid && err == nil {
				t.Error("want an error, got none")
			}
		})
	}
}
