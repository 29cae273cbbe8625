package main

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// The probes, on the operator listener and the gateway's.
const (
	// healthzPath answers 200 while the process serves.
	healthzPath = "/healthz"
	// readyzPath answers 200 while every check passes and the process is
	// not stopping, else 503 naming what is not ready.
	readyzPath = "/readyz"
)

// readyTTL is how long a readiness answer is reused: a probe every second
// costs PostgreSQL and Temporal one round trip each per readyTTL.
const readyTTL = 2 * time.Second

// readyTimeout bounds one check.
const readyTimeout = 2 * time.Second

// readyCheck is one thing a process needs to be ready.
type readyCheck struct {
	name  string
	check func(context.Context) error
}

// health answers the probes. It is not ready until the stack gives it its
// checks, and not ready again from the moment the process starts to stop.
type health struct {
	checks   atomic.Pointer[[]readyCheck]
	draining atomic.Bool

	mu     sync.Mutex // one round of checks at a time
	at     time.Time
	answer readiness
}

// readiness is /readyz's body: ready, or the checks that failed with why.
type readiness struct {
	Ready    bool              `json:"ready"`
	NotReady map[string]string `json:"notReady,omitempty"`
}

// ready sets the checks; the process is ready once they pass.
func (h *health) ready(checks []readyCheck) {
	h.checks.Store(&checks)
	h.mu.Lock()
	h.at = time.Time{}
	h.mu.Unlock()
}

// drain marks the process as stopping: /readyz answers 503 from now on.
func (h *health) drain() { h.draining.Store(true) }

// readiness runs the checks, or reuses an answer younger than readyTTL.
func (h *health) readiness(ctx context.Context) readiness {
	if h.draining.Load() {
		return readiness{NotReady: map[string]string{"process": "stopping: calls in flight are draining"}}
	}
	checks := h.checks.Load()
	if checks == nil {
		return readiness{NotReady: map[string]string{"process": "starting"}}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if time.Since(h.at) < readyTTL {
		return h.answer
	}
	r := readiness{Ready: true}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, c := range *checks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cctx, cancel := context.WithTimeout(ctx, readyTimeout)
			defer cancel()
			if err := c.check(cctx); err != nil {
				mu.Lock()
				if r.NotReady == nil {
					r.NotReady = map[string]string{}
				}
				r.NotReady[c.name] = err.Error()
				r.Ready = false
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	h.at, h.answer = time.Now(), r
	return r
}

func (h *health) serveHealthz(w http.ResponseWriter, _ *http.Request) {
	writeProbe(w, http.StatusOK, map[string]string{"status": "ok"})
}

func (h *health) serveReadyz(w http.ResponseWriter, r *http.Request) {
	ans := h.readiness(context.WithoutCancel(r.Context()))
	status := http.StatusOK
	if !ans.Ready {
		status = http.StatusServiceUnavailable
	}
	writeProbe(w, status, ans)
}

func writeProbe(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// handle adds the probes to mux.
func (h *health) handle(mux *http.ServeMux) {
	mux.HandleFunc("GET "+healthzPath, h.serveHealthz)
	mux.HandleFunc("GET "+readyzPath, h.serveReadyz)
}

// mount serves the probes beside next.
func (h *health) mount(next http.Handler) http.Handler {
	mux := http.NewServeMux()
	h.handle(mux)
	mux.Handle("/", next)
	return mux
}

// drainGrace is how long calls cut at the end of the drain get to write
// their retry.
const drainGrace = 5 * time.Second

// serveAll serves every handler on its listener (each an HTTP server
// bounded as newHTTPServer says), calls ready once all are serving, and
// returns when ctx ends or when one of them fails. Then it drains: h (if
// any) answers not ready, the listeners close, and calls in flight get up
// to drain to finish; cut (if any) then ends those still running, which
// answer retry within drainGrace (see gateway.Gateway.Cut).
func serveAll(ctx context.Context, servers []served, drain time.Duration, h *health, cut func(), ready func()) error {
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
	if h != nil {
		h.drain()
	}
	var wg sync.WaitGroup
	for _, srv := range srvs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			dctx, cancel := context.WithTimeout(context.Background(), drain)
			defer cancel()
			if srv.Shutdown(dctx) == nil {
				return
			}
			if cut != nil {
				cut()
			}
			gctx, cancel := context.WithTimeout(context.Background(), drainGrace)
			defer cancel()
			if srv.Shutdown(gctx) != nil {
				_ = srv.Close()
			}
		}()
	}
	wg.Wait()
	return err
}
