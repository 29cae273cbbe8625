// Package workertest runs Baton's worker for tests: ProcessRun and its
// activities on a task queue of their own, writing the read model of a
// migrated database (New), and a fake model server speaking the OpenAI chat
// completions API for the check profile's evaluator (NewModel). The tests
// of workflows/ and tests/ run it; only tests import it.
package workertest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"sync"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/worker"

	"github.com/baton-run/baton/activities"
	"github.com/baton-run/baton/activities/downstream"
	"github.com/baton-run/baton/activities/evaluator"
	"github.com/baton-run/baton/internal/store"
	"github.com/baton-run/baton/internal/telemetry"
	"github.com/baton-run/baton/workflows"
)

// Options configure New.
type Options struct {
	// Evaluator answers the check profile's questions. Default none: a
	// submission to a checked step then gets retry, as on a server without
	// one.
	Evaluator evaluator.Evaluator
	// Downstream calls the tools of the baton-tools-1 profile. Default
	// downstream.New(nil), or one that reports to Metrics when it is set.
	Downstream *downstream.Client
	// Metrics, when set, is told of every read-model write, evaluator call
	// and downstream call (activities.New wires them). Default none.
	Metrics *telemetry.Metrics
	// Logger receives the activities' logs. Default slog.Default().
	Logger *slog.Logger
	// Register, when set, registers more on each worker beside ProcessRun
	// and its activities. Default none.
	Register func(worker.Registry)
	// Interceptors intercept the workflows and activities of each worker,
	// as worker.Options.Interceptors do. Default none.
	Interceptors []interceptor.WorkerInterceptor
}

// Worker runs runs, ProcessRun and its activities, on a task queue of its
// own. Stop and Start stop it and start another on the same queue, as a
// worker process that dies and is restarted would.
type Worker struct {
	// Queue is the worker's task queue.
	Queue string
	// Runs starts runs on Queue and writes to them.
	Runs *workflows.Client

	t    testing.TB
	c    client.Client
	acts *activities.Activities
	reg  func(worker.Registry)
	ints []interceptor.WorkerInterceptor

	mu sync.Mutex
	w  worker.Worker
}

// New starts a worker for runs on a fresh task queue of c. Its
// activities write the read model at dbURL, which must be migrated,
// through a pool of their own, as in baton dev and serve. Nil options mean
// defaults. The worker stops when the test ends.
func New(t testing.TB, c client.Client, dbURL string, opts *Options) *Worker {
	t.Helper()
	var o Options
	if opts != nil {
		o = *opts
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := store.Open(ctx, dbURL)
	if err != nil {
		t.Fatalf("open the read model: %v", err)
	}
	t.Cleanup(s.Close)
	aopts := &activities.Options{Logger: o.Logger, Evaluator: o.Evaluator, Downstream: o.Downstream}
	if o.Metrics != nil {
		aopts.Metrics = o.Metrics
	}
	acts, err := activities.New(s, c, aopts)
	if err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	w := &Worker{Queue: "q-" + hex.EncodeToString(b), t: t, c: c, acts: acts, reg: o.Register, ints: o.Interceptors}
	w.Start()
	if w.Runs, err = workflows.NewClient(c, &workflows.ClientOptions{TaskQueue: w.Queue}); err != nil {
		t.Fatal(err)
	}
	return w
}

// Start starts a worker on the queue, beside any still running. It stops
// when the test ends.
func (w *Worker) Start() {
	w.t.Helper()
	wo := workflows.WorkerOptions(0)
	wo.Interceptors = w.ints
	tw := worker.New(w.c, w.Queue, wo)
	workflows.Register(tw)
	w.acts.Register(tw)
	if w.reg != nil {
		w.reg(tw)
	}
	if err := tw.Start(); err != nil {
		w.t.Fatalf("start the worker: %v", err)
	}
	w.t.Cleanup(tw.Stop)
	w.mu.Lock()
	w.w = tw
	w.mu.Unlock()
}

// Stop stops the worker Start started last.
func (w *Worker) Stop() {
	w.mu.Lock()
	tw := w.w
	w.mu.Unlock()
	tw.Stop()
}
