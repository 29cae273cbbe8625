package workflows

import (
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
