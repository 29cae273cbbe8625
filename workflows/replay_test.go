package workflows_test

import (
	"log/slog"
	"path/filepath"
	"testing"

	sdklog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/baton-run/baton/workflows"
)

// TestReplayRecordedHistories replays every history in testdata/ against
// the current ProcessRun: a change that would break running workflows
// fails here (guard such changes with workflow.GetVersion). It needs no
// server. The histories come from integration runs:
//
//	go test ./workflows -run 'TestFixturesOnTemporal|TestEventBySignal|TestTemporalCancellation|TestOneDeadlineTimer' -args -record
func TestReplayRecordedHistories(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no recorded histories in testdata/; record them with: go test ./workflows -run 'TestFixturesOnTemporal|TestEventBySignal|TestTemporalCancellation|TestOneDeadlineTimer' -args -record")
	}
	logger := sdklog.NewStructuredLogger(slog.New(slog.DiscardHandler))
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			r := worker.NewWorkflowReplayer()
			r.RegisterWorkflowWithOptions(workflows.ProcessRun, workflow.RegisterOptions{Name: workflows.WorkflowName})
			if err := r.ReplayWorkflowHistoryFromJSONFile(logger, f); err != nil {
				t.Fatalf("replay %s: %v", f, err)
			}
		})
	}
}
