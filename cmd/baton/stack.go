package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"path/filepath"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"

	"github.com/baton-run/baton/activities"
	"github.com/baton-run/baton/gateway"
	"github.com/baton-run/baton/gateway/auth"
	"github.com/baton-run/baton/gateway/store"
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

// startWorker registers the workflow and the activities on a task queue.
// The worker writes the read model through a pool of its own, never the
// gateway's (see store.Open); stop it with the returned function.
func startWorker(ctx context.Context, dbURL string, c client.Client, queue, webhook, inboxURL string, log *slog.Logger) (stop func(), err error) {
	st, err := openStore(ctx, dbURL)
	if err != nil {
		return nil, err
	}
	w := worker.New(c, queue, worker.Options{})
	workflows.Register(w)
	acts, err := activities.New(st, c, &activities.Options{WebhookURL: webhook, InboxURL: inboxURL, Logger: log})
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

// serveHTTP serves the gateway until ctx ends, then shuts down.
func serveHTTP(ctx context.Context, addr string, g *gateway.Gateway, ready func(url string)) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", addr, err)
	}
	return serveAll(ctx, []served{{ln, g.Handler()}}, func() {
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

// serveAll serves every handler on its listener, calls ready once all are
// serving, and returns when ctx ends (after shutting them all down) or when
// one of them fails.
func serveAll(ctx context.Context, servers []served, ready func()) error {
	errc := make(chan error, len(servers))
	srvs := make([]*http.Server, len(servers))
	for i, s := range servers {
		srv := &http.Server{Handler: s.h, ReadHeaderTimeout: 10 * time.Second}
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

// serveOps serves the operator listener: Go's profiles under /debug/pprof.
// It is for operators only; keep it on loopback or a private network.
func serveOps(addr string, log *slog.Logger) (stop func(), err error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("operator listener stopped", "error", err)
		}
	}()
	log.Info("operator listener", "url", "http://"+ln.Addr().String()+"/debug/pprof/")
	return func() { _ = srv.Close() }, nil
}
