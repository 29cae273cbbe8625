package workflows

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/baton-run/baton/interpreter"
)

// fanoutBench is a parent run's input and its child's version, bound as
// publication binds them.
func fanoutBench(tb testing.TB, n int) (Input, ChildVersion) {
	tb.Helper()
	offer := interpreter.DefaultOffer()
	offer.Profiles = append(offer.Profiles, interpreter.ProfileSubprocess)
	child, err := interpreter.Parse([]byte(EndsAtOnceSrc), &interpreter.ParseOptions{Offer: &offer})
	if err != nil {
		tb.Fatal(err)
	}
	cat := interpreter.NewCatalog("published in this organization")
	cat.Add(interpreter.CatalogEntry{Process: child, Version: 1}, true)
	offer.Processes = cat
	parent, bound, err := interpreter.ParseAndBind([]byte(FanSrc), &interpreter.ParseOptions{Offer: &offer})
	if err != nil {
		tb.Fatal(err)
	}
	items := make([]any, n)
	for i := range items {
		items[i] = fmt.Sprintf("item-%d", i)
	}
	in := Input{Org: "o_test", Lean: true, Notices: true, Start: interpreter.Start{
		RunID: "r_parent", Process: parent, Version: 1, Inputs: interpreter.Values{"items": items},
		Mode: interpreter.ModeLive, Starter: person, Children: bound,
	}}
	return in, ChildVersion{Process: child}
}

// runFanout runs one parent over n children in the SDK's test
// environment: the children are started (a mock workflow) and each ends
// by result at once. It returns the time from the parent's start to its
// workflow completing, and the listings written.
func runFanout(tb testing.TB, n int, batch bool) (time.Duration, int) {
	tb.Helper()
	took, listings, _ := fanout(tb, n, batch)
	return took, listings
}

// fanout is runFanout that also returns the inputs the children started
// with.
func fanout(tb testing.TB, n int, batch bool) (time.Duration, int, []Input) {
	tb.Helper()
	in, cv := fanoutBench(tb, n)
	var suite testsuite.WorkflowTestSuite
	suite.SetLogger(log.NewStructuredLogger(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))))
	env := suite.NewTestWorkflowEnvironment()
	env.SetDataConverter(DataConverter)
	env.SetStartTime(time.Date(2026, 10, 6, 9, 0, 0, 0, time.UTC))
	env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: in.Start.RunID})
	env.SetWorkerOptions(worker.Options{DeadlockDetectionTimeout: time.Hour})
	env.RegisterWorkflowWithOptions(ProcessRun, workflowOptions())
	listings := 0
	env.RegisterActivityWithOptions(func(ctx context.Context, org string, l *interpreter.Listing, a *Answered, notices []*interpreter.Notice) (Published, error) {
		if l != nil {
			listings++
		}
		return Published{}, nil
	}, activity.RegisterOptions{Name: ActivityPublishRun})
	env.RegisterActivityWithOptions(func(ctx context.Context, org string, b interpreter.ChildBinding) (ChildVersion, error) {
		return cv, nil
	}, activity.RegisterOptions{Name: ActivityLoadChild})
	env.RegisterActivityWithOptions(func(ctx context.Context, org, channel string, n *interpreter.Notice) error {
		return nil
	}, activity.RegisterOptions{Name: ActivityNotify})
	var inputs []Input
	// The mock stands for every ProcessRun, the parent's too: the parent
	// runs as itself.
	env.OnWorkflow(WorkflowName, mock.Anything, mock.Anything).Return(func(ctx workflow.Context, in Input) (*Outcome, error) {
		if in.Start.Parent == nil {
			return ProcessRun(ctx, in)
		}
		inputs = append(inputs, in)
		return &Outcome{Outcome: "done"}, nil
	})
	if !batch {
		env.OnGetVersion(changeFanoutBatch, workflow.DefaultVersion, 2).Return(workflow.DefaultVersion)
	}
	began := time.Now()
	env.ExecuteWorkflow(WorkflowName, in)
	took := time.Since(began)
	if err := env.GetWorkflowError(); err != nil {
		tb.Fatal(err)
	}
	if len(inputs) != n {
		tb.Fatalf("%d children started, want %d", len(inputs), n)
	}
	var out Outcome
	if err := env.GetWorkflowResult(&out); err != nil || out.Outcome != "done" {
		tb.Fatalf("the parent ended %+v (%v), want done", out, err)
	}
	return took, listings, inputs
}

// TestChildrenDeliverNotices checks that a child starts as every run
// does: it delivers its notices without asking for the version that does.
func TestChildrenDeliverNotices(t *testing.T) {
	_, _, inputs := fanout(t, 3, true)
	if len(inputs) != 3 {
		t.Fatalf("%d children started, want 3", len(inputs))
	}
	for _, in := range inputs {
		if !in.Notices || !in.Lean || in.Start.Parent == nil {
			t.Errorf("child %s started with notices %v, lean %v, parent %v; want notices and lean with its parent", in.RunID, in.Notices, in.Lean, in.Start.Parent)
		}
	}
}

// BenchmarkChildEnds measures a parent's work per child: a for_each over
// n children that end at once, from the parent's start to its close, in
// the version of changeFanoutBatch that starts each child and publishes
// each end on its own (each) and in the one that batches them (batched).
// The per-child figure should not grow with n.
func BenchmarkChildEnds(b *testing.B) {
	for _, c := range []struct {
		name  string
		batch bool
	}{{"each", false}, {"batched", true}} {
		// The test environment queues at most 1,000 callbacks, and
		// each child takes several at once: 300 children is near its
		// limit.
		for _, n := range []int{100, 300} {
			b.Run(fmt.Sprintf("%s/children=%d", c.name, n), func(b *testing.B) {
				var total time.Duration
				writes := 0
				for range b.N {
					took, l := runFanout(b, n, c.batch)
					total += took
					writes += l
				}
				b.ReportMetric(float64(total.Microseconds())/float64(b.N*n), "µs/child")
				b.ReportMetric(float64(writes)/float64(b.N*n), "writes/child")
			})
		}
	}
}
