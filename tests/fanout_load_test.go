package tests

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/baton-run/baton/gateway"
	"github.com/baton-run/baton/gateway/auth"
	"github.com/baton-run/baton/internal/drive"
	"github.com/baton-run/baton/internal/load"
)

// baton bench --fanout's measurement (load.Fanout) on the real server,
// with examples/bench-fanout published: the parent joins every child,
// each started once, after which the same number of start_run calls are
// timed; the report gives both figures and what the parent's history
// holds, read from Temporal.
func TestFanoutMeasurement(t *testing.T) {
	t.Parallel()
	b := start(t, options{subprocess: true})
	reg := gateway.NewRegistry(b.store, "o_test", b.gateway.Offer())
	dir, err := filepath.Abs(filepath.Join("..", "examples", "bench-fanout"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range reg.ImportAndPublishFolders(context.Background(), []string{
		filepath.Join(dir, load.FanoutParent), filepath.Join(dir, load.FanoutChild),
	}, "u_admin", nil) {
		if f.Err != nil {
			t.Fatalf("publish %s: %v", f.Dir, f.Err)
		}
	}
	const items = 24
	var out bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	res, err := load.Fanout(ctx, load.FanoutOptions{
		URL: b.url + "/mcp",
		Token: func(w drive.Who) (string, error) {
			return b.issuer.Issue(auth.Identity{ID: w.ID, Kind: auth.Kind(w.Kind), Groups: w.Groups}, time.Hour)
		},
		Items: items, Concurrency: 4, Temporal: b.temporal, Out: &out,
	})
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	t.Log(out.String())
	if res.FanOut <= 0 || res.Calls <= 0 || res.Executions < 1 {
		t.Fatalf("measured %+v", res)
	}
	// Each child costs the parent its start's initiation and record and
	// its close; the run also writes as it starts and as it joins.
	if res.ChildStarts != items || res.HistoryEvents < 3*items || res.WorkflowTasks < 2 || res.Writes < 2 || int64(res.Writes) > res.HistoryEvents {
		t.Fatalf("the parent's history: %+v", res)
	}
	for _, want := range []string{"fan-out   24 children of bench-child", "start_run 24 runs of bench-child over MCP, 4 at once", "ratio     fan-out / start_run calls = ", "24 child starts"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the report lacks %q:\n%s", want, out.String())
		}
	}
}
