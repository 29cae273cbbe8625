package gateway

import (
	"maps"
	"slices"
	"testing"

	"github.com/baton-run/baton/interpreter"
)

// TestToolTablesCoverEveryTool holds the gateway's tables to the
// interpreter's tool names: the pipeline table serves the fourteen tools of
// spec §4 and call_tool, and every one of them has an argument schema, a
// result schema and a title, with no entry for a tool that is not served.
func TestToolTablesCoverEveryTool(t *testing.T) {
	want := append(slices.Clone(interpreter.Tools), interpreter.ToolCallTool)
	var served []interpreter.Tool
	for _, tl := range toolTable() {
		if slices.Contains(served, tl.name) {
			t.Errorf("tool table lists %s twice", tl.name)
		}
		served = append(served, tl.name)
	}
	if !sameTools(served, want) {
		t.Errorf("tool table serves %q, want %q", served, want)
	}
	toolMetas := indexTools(func(t *tool) toolMeta { return t.meta })
	tables := map[string][]interpreter.Tool{
		"argument schemas": slices.Collect(maps.Keys(argumentSchemas)),
		"result schemas":   slices.Collect(maps.Keys(resultSchemas)),
		"titles":           slices.Collect(maps.Keys(toolMetas)),
	}
	for name, got := range tables {
		if !sameTools(got, want) {
			t.Errorf("%s cover %q, want %q", name, got, want)
		}
	}
	for _, tl := range want {
		if toolMetas[tl].title == "" {
			t.Errorf("tool %s has no title", tl)
		}
		if _, err := outputSchema(tl); err != nil {
			t.Errorf("tool %s: %v", tl, err)
		}
	}
}

// sameTools reports whether a and b hold the same tools, in any order.
func sameTools(a, b []interpreter.Tool) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}
