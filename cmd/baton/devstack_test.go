package main

import (
	"bytes"
	"context"
	"flag"
	"io"
	"log/slog"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/baton-run/baton/gateway/auth"
	"github.com/baton-run/baton/internal/drive"
)

// devRun is one `baton dev` running in this process.
type devRun struct {
	mcpURL, asURL string
	inboxURL      string
	metricsURL    string
	printed       string // what it printed up to being ready
	cancel        func() // tells it to stop, as SIGTERM does
	stop          func() // stops it and reports an error it returned; idempotent
}

// launchDev runs dev(cfg) as `baton dev` does and waits until it prints its
// MCP URL. It is stopped when the test ends, if not before.
func launchDev(t *testing.T, cfg devConfig) *devRun {
	t.Helper()
	return goDev(t, cfg)()
}

// goDev starts dev(cfg) as `baton dev` does and returns what waits until it
// prints its MCP URL (call it from the test's goroutine). It is stopped
// when the test ends, if not before.
func goDev(t *testing.T, cfg devConfig) (wait func() *devRun) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	out := &syncBuffer{}
	done := make(chan error, 1)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	go func() { done <- dev(ctx, cfg, out, log) }()
	stopped := false
	stop := func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("dev returned %v", err)
			}
		case <-time.After(time.Minute):
			t.Error("dev did not stop within a minute")
		}
	}
	t.Cleanup(stop)
	return func() *devRun {
		t.Helper()
		r := awaitDev(t, out, done, &stopped, stop)
		r.cancel = cancel
		return r
	}
}

// awaitDev waits until a dev printing to out prints its MCP URL.
func awaitDev(t *testing.T, out *syncBuffer, done chan error, stopped *bool, stop func()) *devRun {
	t.Helper()
	mcpLine := regexp.MustCompile(`(?m)^MCP: (\S+)$`)
	asLine := regexp.MustCompile(`(?m)^OAuth sign-in: (\S+) `)
	inboxLine := regexp.MustCompile(`(?m)^Inbox: (\S+) `)
	metricsLine := regexp.MustCompile(`(?m)^Metrics: (\S+)$`)
	deadline := time.Now().Add(2 * time.Minute)
	for {
		printed := out.String()
		if m := mcpLine.FindStringSubmatch(printed); m != nil {
			r := &devRun{mcpURL: m[1], printed: printed, stop: stop}
			if a := asLine.FindStringSubmatch(printed); a != nil {
				r.asURL = a[1]
			}
			if in := inboxLine.FindStringSubmatch(printed); in != nil {
				r.inboxURL = in[1]
			}
			if m := metricsLine.FindStringSubmatch(printed); m != nil {
				r.metricsURL = m[1]
			}
			return r
		}
		select {
		case err := <-done:
			*stopped = true
			t.Fatalf("dev stopped before it was ready: %v\n%s", err, printed)
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("dev not ready after two minutes:\n%s", printed)
		}
	}
}

// devConfigFor is the configuration of a `baton dev` on free loopback
// ports with data folder data: the flags' defaults (not the environment's),
// then args.
func devConfigFor(data string, args ...string) devConfig {
	var cfg devConfig
	fl := flag.NewFlagSet("dev", flag.PanicOnError)
	devFlags(fl, &cfg)
	fl.Parse(append([]string{"--listen", "127.0.0.1:0", "--data", data, "--temporal-port", "0", "--ui-port", "0"}, args...))
	return cfg
}

// baton runs the command line in this process and returns its exit status,
// stdout and stderr.
func baton(args ...string) (int, string, string) {
	var stdout, stderr bytes.Buffer
	code := run(args, &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

// batonOK runs the command line and fails the test unless it exits 0.
func batonOK(t *testing.T, args ...string) string {
	t.Helper()
	code, out, errOut := baton(args...)
	if code != 0 {
		t.Fatalf("baton %s: exit %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), code, out, errOut)
	}
	return out
}

// devDriver drives the baton dev whose data folder is data over MCP at
// mcpURL, minting each caller's token with its dev key.
func devDriver(t *testing.T, data, mcpURL string) *drive.MCP {
	t.Helper()
	issuer, err := auth.LoadOrCreateDevKey(data)
	if err != nil {
		t.Fatal(err)
	}
	mint := func(w drive.Who) (string, error) {
		return issuer.Issue(auth.Identity{ID: w.ID, Kind: auth.Kind(w.Kind), Groups: w.Groups}, time.Hour)
	}
	drv := drive.NewMCP(mcpURL, mint, nil)
	t.Cleanup(func() { drv.Close() })
	return drv
}
