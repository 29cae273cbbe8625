package tests

import (
	"context"
	"fmt"
	"testing"
	"time"

	"go.temporal.io/sdk/testsuite"

	"github.com/baton-run/baton/activities"
	"github.com/baton-run/baton/workflows"
)

// The watch of carried children with more children than it long-polls at
// once (64) sees a child that closed while it waited its turn within
// seconds, by the visibility scan, not only when its long poll comes: a
// continued parent of a thousand running children learns of each end
// without waiting for every child ahead of it.
func TestWatchOfManyChildrenSeesALateOneClose(t *testing.T) {
	t.Parallel()
	b := start(t, options{})
	starter := b.connect(agentID)
	pv := b.publish(agentLoopSrc)
	ids := make([]string, 70)
	for i := range ids {
		var v view
		starter.ok("start_run", map[string]any{"process": pv.Name, "inputs": map[string]any{}, "requestId": rid()}, &v)
		ids[i] = v.Run.ID
	}
	last := ids[len(ids)-1]
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := b.temporal.TerminateWorkflow(ctx, last, "", "stuck supplier registry"); err != nil {
		t.Fatal(err)
	}
	acts, err := activities.New(b.store, b.temporal, nil)
	if err != nil {
		t.Fatal(err)
	}
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestActivityEnvironment()
	env.RegisterActivity(acts.WatchChildren)
	// The first 64 long polls each last 20 s, longer than the watch: the
	// terminated child, the 70th, is found by the scan or not at all.
	began := time.Now()
	res, err := env.ExecuteActivity(acts.WatchChildren, workflows.WatchChildrenRequest{
		Parent: "r_parent", Children: ids, For: 15 * time.Second, Ends: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	var closed []workflows.ClosedChild
	if err := res.Get(&closed); err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(closed); len(closed) != 1 || closed[0].RunID != last || closed[0].Status != "terminated" || closed[0].Ended {
		t.Fatalf("the watch found %s after %s, want %s terminated", got, time.Since(began).Round(time.Millisecond), last)
	}
}
