package tests

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/baton-run/baton/gateway/auth"
	"github.com/baton-run/baton/internal/drive"
	"github.com/baton-run/baton/internal/load"
	"github.com/baton-run/baton/internal/testing/spectest"
	"github.com/baton-run/baton/interpreter"
)

// startBench starts a Baton with examples/bench published, and returns it,
// the process and a token source for load.Options.
func startBench(t *testing.T) (*baton, *interpreter.Process, func(drive.Who) (string, error)) {
	bt := start(t, options{})
	src, err := os.ReadFile(filepath.Join("..", "examples", "bench", "PROCESS.md"))
	if err != nil {
		t.Fatal(err)
	}
	bt.publish(string(src))
	proc, err := interpreter.Parse(src, nil)
	if err != nil {
		t.Fatal(err)
	}
	token := func(w drive.Who) (string, error) {
		return bt.issuer.Issue(auth.Identity{ID: w.ID, Kind: auth.Kind(w.Kind), Groups: w.Groups}, time.Hour)
	}
	return bt, proc, token
}

// baton bench's phases on a real Baton: starts leave runs at the agent's
// step, handed leaves runs at a person's work item, and the listings time
// get_work and list_runs as the agent and as that person, who sees the
// handed runs' items.
func TestBenchPhases(t *testing.T) {
	bt, proc, token := startBench(t)
	rep, err := load.Run(context.Background(), load.Options{
		URL: bt.url + "/mcp", Token: token, Process: proc, Runs: 6, Handed: 4, Concurrency: 2, Samples: 3,
		Phases: []string{"starts", "handed", "listings"}, Out: io.Discard,
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		phase string
		runs  int
		calls map[string]int
	}{
		{"starts", 6, map[string]int{"start_run": 6}},
		{"handed", 4, map[string]int{"start_run": 4, "claim": 4, "submit": 4}},
		{"listings", 0, map[string]int{"get_work": 3, "list_runs": 3, "get_work (person)": 3, "list_runs (person)": 3}},
	} {
		p := rep.Phase(tc.phase)
		if p == nil {
			t.Fatalf("no %s phase in the report", tc.phase)
		}
		if p.Runs != tc.runs || p.Failed != 0 {
			t.Errorf("%s: %d runs, %d failed; want %d, none failed", tc.phase, p.Runs, p.Failed, tc.runs)
		}
		for name, n := range tc.calls {
			if len(p.Calls[name]) != n || p.Errors[name] != 0 {
				t.Errorf("%s: %d %s calls timed, %d failed; want %d", tc.phase, len(p.Calls[name]), name, p.Errors[name], n)
			}
		}
	}

	// Ten runs are open: six at the agent's step, four at the person's.
	var agentWork, personWork struct {
		Items []map[string]any `json:"items"`
	}
	bt.connect(auth.Identity{ID: drive.WalkAgent.ID, Kind: auth.KindAgent}).ok("get_work", map[string]any{"limit": 50}, &agentWork)
	member := drive.DefaultMember(interpreter.WorkItem{AssignedTo: interpreter.Assignee{Group: "reviewers"}})
	bt.connect(personID(member.ID, member.Groups...)).ok("get_work", map[string]any{"limit": 50}, &personWork)
	if len(agentWork.Items) != 6 || len(personWork.Items) != 4 {
		t.Errorf("get_work lists %d steps for the agent and %d items for the person; want 6 and 4", len(agentWork.Items), len(personWork.Items))
	}
}

// baton bench --rounds: the full phase and its bare shape run in turn,
// round after round, and the report holds each round's ratio.
func TestBenchRounds(t *testing.T) {
	bt, proc, token := startBench(t)
	c, err := temporal.NewClient(context.Background(), client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var out strings.Builder
	rep, err := load.Run(context.Background(), load.Options{
		URL: bt.url + "/mcp", Token: token, Process: proc, Runs: 3, Concurrency: 2, Rounds: 3,
		Phases: []string{"full"}, Bare: &load.Bare{Client: c}, Out: &out,
	})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range rep.Phases {
		names = append(names, p.Name)
		if p.Runs != 3 || p.Failed != 0 {
			t.Errorf("%s: %d runs, %d failed; want 3, none failed", p.Name, p.Runs, p.Failed)
		}
		if p.CPU <= 0 {
			t.Errorf("%s: the bench's own CPU is %v", p.Name, p.CPU)
		}
		want := map[string]int{"start_run": 3, "claim": 3, "submit": 3, "decide": 3}
		switch {
		case p.Name == "bare-starts":
			want = map[string]int{"bare-start": 3}
		case strings.HasPrefix(p.Name, "bare-full"):
			want = map[string]int{"bare-start": 3, "bare-update": 9}
		}
		for name, n := range want {
			if len(p.Calls[name]) != n {
				t.Errorf("%s: %d %s calls timed; want %d", p.Name, len(p.Calls[name]), name, n)
			}
		}
	}
	if got, want := strings.Join(names, ", "), "full, bare-starts, bare-full, full 2, bare-full 2, full 3, bare-full 3"; got != want {
		t.Errorf("phases %s; want %s", got, want)
	}
	if rs := rep.FullRatios(); len(rs) != 3 || rs[0] <= 0 || rs[1] <= 0 || rs[2] <= 0 {
		t.Errorf("ratios by round %v; want three", rep.FullRatios())
	}
	if !strings.Contains(out.String(), "median of 3 rounds: ") {
		t.Errorf("the report has no median of the rounds:\n%s", out.String())
	}
}

// baton bench's clients call over plain JSON-RPC requests (one POST a
// call, no session): a run walks to its end through them, every result
// valid against the official schemas; a refusal comes back as the tool's
// error, a call the server cannot take as a failure; and a result's text is
// the one the MCP SDK's client reads, byte for byte.
func TestPlainMCPClient(t *testing.T) {
	bt, proc, token := startBench(t)
	var observed []string
	d := drive.NewMCP(bt.url+"/mcp", token, &drive.MCPOptions{Plain: true, Observe: func(tool string, result []byte) {
		observed = append(observed, tool)
		spectest.ValidateToolResult(t, tool, json.RawMessage(result))
	}})
	defer d.Close()
	w := drive.Walk{Process: proc, Idle: func(context.Context) error { return errors.New("the bench process does not wait") }}
	v, err := w.Run(context.Background(), d)
	if err != nil {
		t.Fatal(err)
	}
	if v.Run.State != string(interpreter.RunEnded) {
		t.Fatalf("the run is %s after its walk, want ended", v.Run.State)
	}
	if got, want := strings.Join(observed, " "), "start_run claim submit decide"; got != want {
		t.Errorf("tools called %q, want %q", got, want)
	}

	_, err = d.GetRun(context.Background(), drive.WalkAgent, "r_none")
	var refusal *interpreter.Error
	if !errors.As(err, &refusal) || refusal.Code != interpreter.CodeNotFound {
		t.Errorf("get_run of no run: %v, want a not_found refusal", err)
	}
	if err := d.Call(context.Background(), drive.WalkAgent, "no_such_tool", nil, nil); err == nil || errors.As(err, &refusal) {
		t.Errorf("an unknown tool: %v, want a failed call", err)
	}

	// The same read through both clients reads the same text.
	texts := map[bool]string{}
	for _, plain := range []bool{true, false} {
		c := drive.NewMCP(bt.url+"/mcp", token, &drive.MCPOptions{Plain: plain, Observe: func(_ string, result []byte) { texts[plain] = string(result) }})
		if _, err := c.GetRun(context.Background(), drive.WalkAgent, v.Run.ID); err != nil {
			t.Fatal(err)
		}
		_ = c.Close()
	}
	if texts[true] == "" || texts[true] != texts[false] {
		t.Errorf("get_run reads differently:\nplain: %s\nSDK:   %s", texts[true], texts[false])
	}
}
