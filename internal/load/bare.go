package load

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"sync"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/baton-run/baton/internal/drive"
	"github.com/baton-run/baton/workflows"
)

// Bare does the shape of Baton's work straight against Temporal, with a
// workflow whose update handlers do nothing: a start is an update-with-start,
// a full run is that and three updates (claim, submit, decide), after which
// the workflow completes. It runs its own worker on a task queue of its own,
// on the same Temporal server as Baton's, so Baton's figures read as ratios
// of Temporal's floor.
type Bare struct {
	// Client reaches the Temporal server Baton uses. Required.
	Client client.Client
	// TaskQueue is the bare workflow's. Default: a fresh one.
	TaskQueue string

	queue string
	w     worker.Worker
	open  []string // workflows of the starts shape, waiting
}

const bareUpdate = "noop"

// BareWorkflow accepts no-op updates until it has answered n of them.
func BareWorkflow(ctx workflow.Context, n int) error {
	done := 0
	if err := workflow.SetUpdateHandler(ctx, bareUpdate, func(ctx workflow.Context, i int) (int, error) {
		done++
		return i, nil
	}); err != nil {
		return err
	}
	return workflow.Await(ctx, func() bool { return done >= n })
}

func randomID() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// start starts the bare worker, on a task queue of its own unless
// TaskQueue names one; stop stops it and ends the workflows the starts
// shape left waiting.
func (b *Bare) start() error {
	if b.Client == nil {
		return fmt.Errorf("load: Bare.Client is required")
	}
	b.queue = b.TaskQueue
	if b.queue == "" {
		b.queue = "baton-bench-bare-" + randomID()
	}
	// The bare worker polls as Baton's does, so that the two differ only
	// in what a run does.
	b.w = worker.New(b.Client, b.queue, workflows.WorkerOptions(0))
	b.w.RegisterWorkflowWithOptions(BareWorkflow, workflow.RegisterOptions{Name: "BatonBenchBare"})
	if err := b.w.Start(); err != nil {
		return fmt.Errorf("bare worker: %w", err)
	}
	return nil
}

func (b *Bare) stop(ctx context.Context) {
	// The started-only workflows wait for updates that never come.
	for _, id := range b.open {
		_ = b.Client.TerminateWorkflow(ctx, id, "", "bench done")
	}
	b.open = nil
	b.w.Stop()
}

// phase runs Options.Runs bare runs of updates updates each (0: started
// and left open) from Options.Concurrency clients, as the phase name.
func (b *Bare) phase(ctx context.Context, o *Options, name string, updates int) (*Phase, error) {
	t := newTimings()
	var openMu sync.Mutex
	p, err := o.parallel(ctx, name, t, func(ctx context.Context, _ *drive.MCP) error {
		id, err := b.one(ctx, b.queue, updates, t)
		if err == nil && updates == 0 {
			openMu.Lock()
			b.open = append(b.open, id)
			openMu.Unlock()
		}
		return err
	}, nil)
	o.print(p)
	return p, err
}

// one starts a bare workflow with its first update and sends it updates
// more, timing each.
func (b *Bare) one(ctx context.Context, queue string, updates int, t *timings) (string, error) {
	id := "bench-bare-" + randomID()
	total := updates + 1
	if updates == 0 {
		total = 2 // never completes: terminated at the end
	}
	start := time.Now()
	op := b.Client.NewWithStartWorkflowOperation(client.StartWorkflowOptions{
		ID: id, TaskQueue: queue,
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
	}, "BatonBenchBare", total)
	h, err := b.Client.UpdateWithStartWorkflow(ctx, client.UpdateWithStartWorkflowOptions{
		StartWorkflowOperation: op,
		UpdateOptions:          client.UpdateWorkflowOptions{UpdateID: randomID(), UpdateName: bareUpdate, Args: []any{0}, WaitForStage: client.WorkflowUpdateStageCompleted},
	})
	if err == nil {
		err = h.Get(ctx, nil)
	}
	t.add("bare-start", time.Since(start), err)
	if err != nil {
		return id, err
	}
	for i := 1; i <= updates; i++ {
		start := time.Now()
		h, err := b.Client.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{
			WorkflowID: id, UpdateID: randomID(), UpdateName: bareUpdate, Args: []any{i}, WaitForStage: client.WorkflowUpdateStageCompleted,
		})
		if err == nil {
			err = h.Get(ctx, nil)
		}
		t.add("bare-update", time.Since(start), err)
		if err != nil {
			return id, err
		}
	}
	return id, nil
}
