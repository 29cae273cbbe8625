package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"

	"github.com/baton-run/baton/activities"
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
// idle; docs/performance.md has the measurement behind it.
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
// gateway's (see store.Open); stop it with the returned function, which
// gives activities in flight up to drain to finish.
//
// cache is how many runs the worker keeps in memory between their
// workflow tasks (Temporal's sticky cache); a run not kept is replayed from
// its history when it next has work. Zero keeps the SDK's default.
func startWorker(ctx context.Context, dbURL string, c client.Client, queue string, cache int, drain time.Duration, m *telemetry.Metrics, opts activities.Options) (stop func(), err error) {
	st, err := openStore(ctx, dbURL)
	if err != nil {
		return nil, err
	}
	sizeWorkflowCache(cache)
	w := worker.New(c, queue, workflows.WorkerOptions(drain))
	workflows.Register(w)
	if m != nil {
		// Every run's read-model write, evaluator call and downstream call
		// is counted.
		opts.Metrics = m
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
// the gateway pushes its deadlines back by gateway.UploadTimeout. An answer
// that closes its connection (a refusal) reads what is left of the body
// for refusedBodyWait at most (closeWhenAnswered).
func newHTTPServer(h http.Handler) *http.Server {
	return &http.Server{
		Handler:           closeWhenAnswered(h),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       gateway.ReadTimeout,
		WriteTimeout:      gateway.ReadTimeout + gateway.CallTimeout,
		IdleTimeout:       2 * time.Minute,
	}
}

// served is a handler and the listener it is served on.
type served struct {
	ln net.Listener
	h  http.Handler
}

// stackOptions is what dev and serve give the stack beside the runtime
// flags.
type stackOptions struct {
	dbURL     string
	temporal  client.Client
	taskQueue string
	// gateway and worker say which halves run.
	gateway, worker bool
	// The gateway's: its public URL, how it checks bearer tokens, its
	// master key, the authorization servers its metadata names, and the
	// inbox it mounts ("" for none).
	baseURL     string
	verifier    auth.Verifier
	secret      []byte
	authServers []string
	scopes      []string
	inboxURL    string
	// notifyURL is the inbox overdue notifications link to ("" for none).
	notifyURL string
}

// stack is Baton as dev and serve run it: a worker, a gateway, or both,
// and the probes that say whether they are ready.
type stack struct {
	cfg *runtimeConfig
	obs *observing
	// store is the gateway's pool; nil without a gateway.
	store   *store.Store
	gateway *gateway.Gateway
	stops   []func()
}

// startStack starts what o asks for: the tool registration of --tools,
// the worker, the gateway. Close it after serving.
func (c *runtimeConfig) startStack(ctx context.Context, o stackOptions, obs *observing, log *slog.Logger, stdout io.Writer) (s *stack, err error) {
	s = &stack{cfg: c, obs: obs}
	defer func() {
		if err != nil {
			s.close()
		}
	}()
	checks := []readyCheck{{"temporal", func(ctx context.Context) error {
		_, err := o.temporal.CheckHealth(ctx, &client.CheckHealthRequest{})
		return err
	}}}
	st := (*store.Store)(nil)
	if o.gateway || len(c.tools) > 0 {
		if st, err = openStore(ctx, o.dbURL); err != nil {
			return s, err
		}
		if o.gateway {
			s.store = st
			s.stops = append(s.stops, st.Close)
		}
	}
	tools, err := registerTools(ctx, st, c.org, c.tools, stdout)
	if st != nil && !o.gateway {
		st.Close()
	}
	if err != nil {
		return s, err
	}
	if o.worker {
		ev, err := c.evaluator.build()
		if err != nil {
			return s, err
		}
		channels, err := loadChannels(c.org, c.notify, stdout)
		if err != nil {
			return s, err
		}
		stopWorker, err := startWorker(ctx, o.dbURL, o.temporal, o.taskQueue, c.workflowCache, c.drain, obs.metrics, activities.Options{
			WebhookURL: c.webhook, Channels: channels, InboxURL: o.notifyURL, Logger: log, Evaluator: ev,
		})
		if err != nil {
			return s, err
		}
		var stopped atomic.Bool
		s.stops = append(s.stops, func() { stopped.Store(true); stopWorker() })
		checks = append(checks, readyCheck{"worker", func(context.Context) error {
			if stopped.Load() {
				return errors.New("stopped")
			}
			return nil
		}})
	}
	if o.gateway {
		checks = append(checks, readyCheck{"postgres", func(ctx context.Context) error {
			n, err := s.store.PendingMigrations(ctx)
			if err == nil && n > 0 {
				err = fmt.Errorf("%d migrations not applied: run baton migrate", n)
			}
			return err
		}})
		runs, err := workflows.NewClient(o.temporal, &workflows.ClientOptions{TaskQueue: o.taskQueue})
		if err != nil {
			return s, err
		}
		s.gateway, err = gateway.New(s.store, runs, o.verifier, &gateway.Options{
			Org: c.org, BaseURL: o.baseURL, Lease: c.lease, CallWait: c.callWait,
			MaxUploadBytes: c.maxUpload, MaxRequestsPerIdentity: c.maxPerIdentity, MaxChildren: c.maxChildren, Secret: o.secret, Logger: log, AuthServers: o.authServers, Scopes: o.scopes,
			UploadQuota: c.gatewayQuota(), Profiles: profiles(c.evaluator.offered(), tools),
			Observe: obs.toolCalls(), InboxURL: o.inboxURL,
		})
		if err != nil {
			return s, err
		}
		if err := watchOpenSteps(obs.metrics, s.store); err != nil {
			return s, err
		}
		go sweepRequests(ctx, s.gateway, c.requestRetention, log)
	}
	obs.health.ready(checks)
	return s, nil
}

// close stops the worker (giving its activities --drain) and closes the
// gateway's pool.
func (s *stack) close() {
	for i := len(s.stops) - 1; i >= 0; i-- {
		s.stops[i]()
	}
	s.stops = nil
}

// serve serves the gateway, with the probes, on ln until ctx ends, then
// drains it (see serveAll); ready is called once it serves. A stack
// without a gateway waits for ctx alone.
func (s *stack) serve(ctx context.Context, ln net.Listener, ready func()) error {
	if s.gateway == nil {
		if ready != nil {
			ready()
		}
		<-ctx.Done()
		s.obs.health.drain()
		return nil
	}
	h := s.obs.health.mount(gateway.LimitConcurrency(s.gateway.Handler(), &gateway.ConcurrencyOptions{MaxRequests: s.cfg.maxRequests}))
	return serveAll(ctx, []served{{ln, s.obs.requests(h)}}, s.cfg.drain, s.obs.health, s.gateway.Cut, ready)
}
