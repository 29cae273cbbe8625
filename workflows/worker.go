package workflows

import (
	"time"

	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
)

func workflowOptions() workflow.RegisterOptions {
	return workflow.RegisterOptions{Name: WorkflowName}
}

// Register registers the workflow on a worker.
func Register(r interface {
	RegisterWorkflowWithOptions(w interface{}, options workflow.RegisterOptions)
}) {
	r.RegisterWorkflowWithOptions(ProcessRun, workflowOptions())
}

// WorkerOptions are the options of a worker that runs ProcessRun, which
// stops within stopTimeout (zero: the SDK's default).
//
// Its workflow-task pollers scale with the work. The SDK's default of two
// fixed pollers often has none waiting when many runs start at once; a
// new run's first workflow task then misses Temporal's direct hand-over to
// a waiting poller and waits in the task queue's backlog instead. With 32
// starts at once on one host that made start_run's p99 10 to 24 times its
// p50 (docs/design.md, "Performance").
func WorkerOptions(stopTimeout time.Duration) worker.Options {
	return worker.Options{
		WorkerStopTimeout:          stopTimeout,
		WorkflowTaskPollerBehavior: worker.NewPollerBehaviorAutoscaling(worker.PollerBehaviorAutoscalingOptions{}),
	}
}
