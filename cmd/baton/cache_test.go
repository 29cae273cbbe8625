package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"testing"
	"time"

	"github.com/baton-run/baton/internal/drive"
	"github.com/baton-run/baton/internal/testing/pgtest"
	"github.com/baton-run/baton/interpreter"
)

// cacheChild marks the test binary run as the child of
// TestDevKeepsItsWorkflowCache.
const cacheChild = "BATON_TEST_WORKFLOW_CACHE_CHILD"

// baton dev keeps at most --workflow-cache runs in memory. The SDK sizes
// its process-wide cache when the first worker starts, and the embedded
// Temporal server starts workers of its own before Baton's: a size set
// after it was ignored, so dev cached every open run (10,000 runs held
// 1.2 GB). The test runs in a child process, whose cache no earlier test
// has sized.
func TestDevKeepsItsWorkflowCache(t *testing.T) {
	if os.Getenv(cacheChild) == "" {
		cmd := exec.Command(os.Args[0], "-test.run=^TestDevKeepsItsWorkflowCache$", "-test.v", "-test.count=1")
		cmd.Env = append(os.Environ(), cacheChild+"=1")
		out, err := cmd.CombinedOutput()
		if err != nil || !bytes.Contains(out, []byte("--- PASS: TestDevKeepsItsWorkflowCache")) {
			t.Fatalf("the child: %v\n%s", err, out)
		}
		return
	}

	const cache, runs = 3, 10
	cfg := devConfigFor(t.TempDir())
	cfg.databaseURL = pgtest.NewDatabase(t)
	cfg.processes = listFlag{filepath.Join(repoRoot(t), "examples", "bench")}
	cfg.workflowCache = cache
	d := launchDev(t, cfg)

	drv := devDriver(t, cfg.data, d.mcpURL)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	starter := drive.Who{ID: "dev@example.com", Kind: interpreter.ActorPerson, Groups: []string{"reviewers"}}
	for range runs {
		if _, err := drv.Start(ctx, starter, "bench", map[string]any{}, "live"); err != nil {
			t.Fatal(err)
		}
	}

	// A run the worker keeps waits in ProcessRun's loop on a goroutine
	// of its own.
	var stacks bytes.Buffer
	if err := pprof.Lookup("goroutine").WriteTo(&stacks, 2); err != nil {
		t.Fatal(err)
	}
	kept := strings.Count(stacks.String(), "github.com/baton-run/baton/workflows.ProcessRun(")
	if kept == 0 || kept > cache {
		t.Fatalf("%d of %d open runs kept in memory, want 1 to %d", kept, runs, cache)
	}
	t.Logf("%d of %d open runs kept in memory", kept, runs)
}
