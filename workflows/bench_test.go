package workflows_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/baton-run/baton/internal/testing/workertest"
	"github.com/baton-run/baton/interpreter"
	"github.com/baton-run/baton/workflows"
)

// chainSteps is how many agent steps the benchmark's process has in a
// row; a run is started (outside the measurement) every chainSteps ops.
const chainSteps = 20

// chainSrc is a process of chainSteps agent steps in a row (cycles may only
// go through on_reject, so the benchmark walks a long chain instead of a
// loop).
func chainSrc() string {
	var b strings.Builder
	b.WriteString("---\nname: work-chain\ndescription: Do the pieces of work one after the other.\nsteps:\n")
	for i := range chainSteps {
		fmt.Fprintf(&b, "  - id: w%d\n    agent: Do piece %d.\n    output: { piece: number }\n", i, i)
	}
	b.WriteString("  - id: done\n    finish: finished\n---\nBody.\n")
	return b.String()
}

// latencies records update round trips and reports updates/s and the
// median.
type latencies struct {
	d []time.Duration
}

func (l *latencies) time(b *testing.B, f func() error) {
	b.Helper()
	t := time.Now()
	if err := f(); err != nil {
		b.Fatal(err)
	}
	l.d = append(l.d, time.Since(t))
}

// report reports sequential throughput (updates over the time spent in
// them) and the median and 99th percentile round trip.
func (l *latencies) report(b *testing.B) {
	b.StopTimer()
	var total time.Duration
	for _, d := range l.d {
		total += d
	}
	slices.Sort(l.d)
	b.ReportMetric(float64(len(l.d))/total.Seconds(), "updates/s")
	b.ReportMetric(float64(l.d[len(l.d)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(l.d[len(l.d)*99/100].Microseconds())/1000, "p99-ms")
}

// BenchmarkSubmitUpdate measures claim+submit round trips on a live run
// through the Temporal client: each op is two updates, each of which runs
// the machine, writes the read model to PostgreSQL and re-arms the
// workflow's timer before it answers.
func BenchmarkSubmitUpdate(b *testing.B) {
	h := setup(b)
	o := interpreter.DefaultOffer()
	p, err := interpreter.Parse([]byte(chainSrc()), &interpreter.ParseOptions{Offer: &o})
	if err != nil {
		b.Fatal(err)
	}
	summary := "Done."
	var r *run
	l := &latencies{}
	b.ResetTimer()
	for i := range b.N {
		if i%chainSteps == 0 {
			r = h.start(p, interpreter.Values{})
		}
		step, lease := fmt.Sprintf("w%d", i%chainSteps), fmt.Sprintf("l%d", i)
		l.time(b, func() error {
			_, err := r.update(workflows.UpdateClaim, "c"+lease, claimReq(step, lease))
			return err
		})
		l.time(b, func() error {
			_, err := r.update(workflows.UpdateSubmit, "s"+lease, workflows.Write{Digest: lease,
				Command: interpreter.Submit{StepID: step, LeaseID: lease, Actor: agent, Submission: interpreter.Submission{
					Output: interpreter.Values{"piece": i}, Summary: &summary}}})
			return err
		})
	}
	l.report(b)
}

// noopUpdate is the bare workflow's one update.
const noopUpdate = "noop"

// noopWorkflow answers no-op updates until cancelled, continuing as new
// when Temporal suggests it, as ProcessRun does.
func noopWorkflow(ctx workflow.Context) error {
	n := 0
	err := workflow.SetUpdateHandlerWithOptions(ctx, noopUpdate, func(ctx workflow.Context, i int) (int, error) {
		n++
		return i, nil
	}, workflow.UpdateHandlerOptions{Validator: func(ctx workflow.Context, i int) error {
		if i < 0 {
			return errors.New("negative")
		}
		return nil
	}})
	if err != nil {
		return err
	}
	if err := workflow.Await(ctx, func() bool { return workflow.GetInfo(ctx).GetContinueAsNewSuggested() }); err != nil {
		return err
	}
	if err := workflow.Await(ctx, func() bool { return workflow.AllHandlersFinished(ctx) }); err != nil {
		return err
	}
	return workflow.NewContinueAsNewError(ctx, "NoopWorkflow")
}

// BenchmarkNoopUpdate does as many updates as BenchmarkSubmitUpdate (two
// per op) on a bare workflow on the same server: the floor under it.
func BenchmarkNoopUpdate(b *testing.B) {
	h := setupWith(b, &workertest.Options{Register: func(r worker.Registry) {
		r.RegisterWorkflowWithOptions(noopWorkflow, workflow.RegisterOptions{Name: "NoopWorkflow"})
	}})
	ctx := context.Background()
	id := "noop-" + randomHex(6)
	if _, err := h.c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: h.queue,
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_FAIL}, "NoopWorkflow"); err != nil {
		b.Fatal(err)
	}
	defer func() { _ = h.c.CancelWorkflow(ctx, id, "") }()
	l := &latencies{}
	b.ResetTimer()
	for i := range 2 * b.N {
		l.time(b, func() error {
			uh, err := h.c.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{WorkflowID: id, UpdateID: fmt.Sprint(i),
				UpdateName: noopUpdate, Args: []any{i}, WaitForStage: client.WorkflowUpdateStageCompleted})
			if err != nil {
				return err
			}
			return uh.Get(ctx, nil)
		})
	}
	l.report(b)
}
