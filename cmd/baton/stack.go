package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"

	"github.com/baton-run/baton/activities"
	"github.com/baton-run/baton/activities/downstream"
	"github.com/baton-run/baton/activities/evaluator"
	"github.com/baton-run/baton/gateway"
	"github.com/baton-run/baton/gateway/auth"
	"github.com/baton-run/baton/internal/store"
	"github.com/baton-run/baton/internal/telemetry"
	"github.com/baton-run/baton/workflows"
)

// openStore opens PostgreSQL and applies the migrations.
func openStore(ctx context.Context, url string) (*store.Store, error) {
	st, err := store.Open(ctx, url)
	if err != nil {
		return nil, err
	}
	if _, err := st.Migrate(ctx); err != nil {
		st.Close()
		return nil, err
	}
	return st, nil
}

// defaultWorkflowCache is how many runs a worker keeps in memory by
// default. A run mostly waits on people, so most cached runs would sit
// idle; see docs/design.md for the measurement behind it.
const defaultWorkflowCache = 2000

// sizeWorkflowCache sets how many runs this process's workers keep in
// memory between their workflow tasks; zero keeps the SDK's default
// (10,000). The SDK's cache is process-wide and sized when the first
// worker of the process starts, later calls change nothing while one
// runs: call it before anything in the process starts a worker, an
// embedded Temporal server included (its system workers are SDK workers).
func sizeWorkflowCache(n int) {
	if n > 0 {
		worker.SetStickyWorkflowCacheSize(n)
	}
}

// startWorker registers the workflow and the activities on a task queue.
// The worker writes the read model through a pool of its own, never the
// gateway's (see store.Open); stop it with the returned function.
//
// cache is how many runs the worker keeps in memory between their
// workflow tasks (Temporal's sticky cache); a run not kept is replayed from
// its history when it next has work. Zero keeps the SDK's default.
func startWorker(ctx context.Context, dbURL string, c client.Client, queue string, cache int, m *telemetry.Metrics, opts activities.Options) (stop func(), err error) {
	st, err := openStore(ctx, dbURL)
	if err != nil {
		return nil, err
	}
	sizeWorkflowCache(cache)
	w := worker.New(c, queue, worker.Options{})
	workflows.Register(w)
	if m != nil {
		// Every run's read-model write, evaluator call and downstream call
		// is counted.
		opts.Metrics = m
		if opts.Evaluator != nil {
			opts.Evaluator = evaluator.Observed(opts.Evaluator, m.EvaluatorCall)
		}
		d, err := downstream.New(&downstream.Options{Observe: m.DownstreamCall})
		if err != nil {
			st.Close()
			return nil, err
		}
		opts.Downstream = d
	}
	acts, err := activities.New(st, c, &opts)
	if err != nil {
		st.Close()
		return nil, err
	}
	acts.Register(w)
	if err := w.Start(); err != nil {
		st.Close()
		return nil, fmt.Errorf("start worker: %w", err)
	}
	return func() { w.Stop(); st.Close() }, nil
}

// secret loads the master key that signs claim tokens and file links from
// a file, creating it when missing, so tokens survive restarts.
func secret(path string) ([]byte, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, err
	}
	return auth.LoadOrCreateKey(path)
}

// sweepRequests deletes the gateway's expired idempotency records until ctx
// ends.
func sweepRequests(ctx context.Context, g *gateway.Gateway, retention time.Duration, log *slog.Logger) {
	if err := g.SweepRequests(ctx, &gateway.SweepOptions{Retention: retention}); err != nil {
		log.Error("idempotency records will not be swept", "error", err)
	}
}

// newHTTPServer returns the gateway's HTTP server. Every phase of a request
// is bounded: headers in 10 seconds, a body of up to gateway.MaxRequestBytes
// in gateway.ReadTimeout, the answer within gateway.CallTimeout after that,
// and an idle connection is closed after 2 minutes. An upload gets longer:
// the gateway pushes its deadlines back by gateway.UploadTimeout.
func newHTTPServer(h http.Handler) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       gateway.ReadTimeout,
		WriteTimeout:      gateway.ReadTimeout + gateway.CallTimeout,
		IdleTimeout:       2 * time.Minute,
	}
}

// serveHTTP serves h until ctx ends, then shuts down.
func serveHTTP(ctx context.Context, addr string, h http.Handler, ready func(url string)) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", addr, err)
	}
	return serveAll(ctx, []served{{ln, h}}, func() {
		if ready != nil {
			ready("http://" + ln.Addr().String())
		}
	})
}

// served is a handler and the listener it is served on.
type served struct {
	ln net.Listener
	h  http.Handler
}

// serveAll serves every handler on its listener (each an HTTP server
// bounded as newHTTPServer says), calls ready once all are serving, and
// returns when ctx ends (after shutting them all down) or when one of them
// fails.
func serveAll(ctx context.Context, servers []served, ready func()) error {
	errc := make(chan error, len(servers))
	srvs := make([]*http.Server, len(servers))
	for i, s := range servers {
		srv := newHTTPServer(s.h)
		srvs[i] = srv
		go func() { errc <- srv.Serve(s.ln) }()
	}
	if ready != nil {
		ready()
	}
	var err error
	select {
	case <-ctx.Done():
	case err = <-errc:
		if errors.Is(err, http.ErrServerClosed) {
			err = nil
		}
	}
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, srv := range srvs {
		if serr := srv.Shutdown(sctx); err == nil {
			err = serr
		}
	}
	return err
}
