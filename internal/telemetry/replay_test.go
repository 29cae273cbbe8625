package telemetry_test

import (
	"log/slog"
	"path/filepath"
	"testing"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/interceptor"
	sdklog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/baton-run/baton/internal/telemetry"
	"github.com/baton-run/baton/workflows"
)

// Turning tracing on does not break runs already going: the histories
// recorded by untraced workers replay under the tracing interceptor.
func TestTracingReplaysUntracedHistories(t *testing.T) {
	tr, _ := recorded(t)
	var opts client.Options
	if err := telemetry.Temporal(&opts, nil, tr); err != nil {
		t.Fatal(err)
	}
	wi, ok := opts.Interceptors[0].(interceptor.WorkerInterceptor)
	if !ok {
		t.Fatalf("the tracing interceptor %T does not intercept workers", opts.Interceptors[0])
	}
	files, err := filepath.Glob(filepath.Join("..", "..", "workflows", "testdata", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no recorded histories in workflows/testdata (%v)", err)
	}
	logger := sdklog.NewStructuredLogger(slog.New(slog.DiscardHandler))
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			r, err := worker.NewWorkflowReplayerWithOptions(worker.WorkflowReplayerOptions{Interceptors: []interceptor.WorkerInterceptor{wi}})
			if err != nil {
				t.Fatal(err)
			}
			r.RegisterWorkflowWithOptions(workflows.ProcessRun, workflow.RegisterOptions{Name: workflows.WorkflowName})
			if err := r.ReplayWorkflowHistoryFromJSONFile(logger, f); err != nil {
				t.Fatalf("replay %s: %v", f, err)
			}
		})
	}
}
