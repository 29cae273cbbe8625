package gateway

import (
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/baton-run/baton/interpreter"
)

// connectInMemory is an SDK client session on the gateway's MCP server,
// with no transport or identity in between: enough for the lists.
func connectInMemory(t *testing.T, g *Gateway) *mcp.ClientSession {
	t.Helper()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := g.server.Connect(t.Context(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "0"}, nil).Connect(t.Context(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// Every tool carries a title and true hints, so that clients approve reads
// without asking and ask before what may end work.
func TestToolTitlesAndAnnotations(t *testing.T) {
	b := setup(t, &Options{Profiles: []string{interpreter.ProfileParallel, interpreter.ProfileTools}})
	res, err := connectInMemory(t, b.g).ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	type hints struct {
		title                                        string
		readOnly, idempotent, destructive, openWorld bool
	}
	// destructive is only meaningful on writes; reads do not state it.
	want := map[string]hints{
		"describe":       {"Describe this Baton server", true, false, false, false},
		"list_processes": {"List published processes", true, false, false, false},
		"start_run":      {"Start a run", false, true, false, false},
		"get_run":        {"Show a run", true, false, false, false},
		"get_work":       {"Find work to do", true, false, false, false},
		"claim":          {"Claim a step", false, true, false, false},
		"renew":          {"Renew a lease", false, true, false, false},
		"upload":         {"Upload an evidence file", false, true, false, false},
		"submit":         {"Submit a step's work", false, true, false, false},
		"escalate":       {"Escalate a step to a person", false, true, false, false},
		"decide":         {"Decide a work item", false, true, true, false},
		"cancel":         {"Cancel a run", false, true, true, false},
		"send_event":     {"Send an event to a run", false, true, false, false},
		"list_runs":      {"List runs", true, false, false, false},
		"call_tool":      {"Call a claimed step's tool", false, true, true, true},
	}
	if len(res.Tools) != len(want) {
		t.Fatalf("%d tools listed, want %d", len(res.Tools), len(want))
	}
	for _, tool := range res.Tools {
		w, ok := want[tool.Name]
		if !ok {
			t.Errorf("unexpected tool %s", tool.Name)
			continue
		}
		a := tool.Annotations
		if a == nil || a.OpenWorldHint == nil {
			t.Errorf("%s: annotations %+v, want every hint set", tool.Name, a)
			continue
		}
		got := hints{tool.Title, a.ReadOnlyHint, a.IdempotentHint, a.DestructiveHint != nil && *a.DestructiveHint, *a.OpenWorldHint}
		if got != w || a.Title != w.title {
			t.Errorf("%s: got %+v (annotation title %q), want %+v", tool.Name, got, a.Title, w)
		}
		if !a.ReadOnlyHint && a.DestructiveHint == nil {
			t.Errorf("%s: a write without destructiveHint reads as destructive", tool.Name)
		}
	}
}
