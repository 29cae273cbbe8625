package drivetest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"

	"github.com/baton-run/baton/activities"
	"github.com/baton-run/baton/gateway/store"
	"github.com/baton-run/baton/workflows"
)

// Worker is a worker for runs, ProcessRun and its activities, on a task
// queue of its own.
type Worker struct {
	// Queue is the worker's task queue.
	Queue string
	// Runs starts runs on Queue and writes to them.
	Runs *workflows.Client
}

// NewWorker starts a worker for runs on a fresh task queue of c, with
// whatever extra registers beside them. Its activities write the read
// model at dbURL, which must be migrated, through a pool of their own, as
// in baton dev and serve. The worker stops when the test ends.
func NewWorker(t testing.TB, c client.Client, dbURL string, extra ...func(worker.Registry)) *Worker {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := store.Open(ctx, dbURL)
	if err != nil {
		t.Fatalf("open the read model: %v", err)
	}
	t.Cleanup(s.Close)
	acts, err := activities.New(s, c, nil)
	if err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	queue := "q-" + hex.EncodeToString(b)
	w := worker.New(c, queue, worker.Options{})
	workflows.Register(w)
	acts.Register(w)
	for _, f := range extra {
		f(w)
	}
	if err := w.Start(); err != nil {
		t.Fatalf("start the worker: %v", err)
	}
	t.Cleanup(w.Stop)
	runs, err := workflows.NewClient(c, &workflows.ClientOptions{TaskQueue: queue})
	if err != nil {
		t.Fatal(err)
	}
	return &Worker{Queue: queue, Runs: runs}
}
