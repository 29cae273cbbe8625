package main

import (
	"context"
	"net"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/sdk/client"

	"github.com/baton-run/baton/internal/testing/pgtest"
	"github.com/baton-run/baton/workflows"
)

func TestTemporalRefuses(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no store", nil, "--database-url"},
		{"two stores", []string{"--database-url", unreachable[1], "--file", "t.db"}, "--file"},
		{"bad listen", []string{"--file", "t.db", "--listen", "7233"}, "--listen"},
		{"bad port", []string{"--file", "t.db", "--listen", "127.0.0.1:0"}, "--listen"},
	}
	for _, tt := range tests {
		code, _, stderr := runBaton(append([]string{"temporal"}, tt.args...)...)
		if code != 2 || !strings.Contains(stderr, tt.want) {
			t.Errorf("%s: exit %d, stderr %q; want 2 naming %s", tt.name, code, stderr, tt.want)
		}
	}
}

// baton temporal serves Temporal on PostgreSQL with Baton's search
// attributes, until its context ends.
func TestTemporalOnPostgres(t *testing.T) {
	t.Parallel()
	db := pgtest.NewDatabase(t)
	u, err := url.Parse(db)
	if err != nil {
		t.Fatal(err)
	}
	cfg := temporalConfig{
		databaseURL: db, database: strings.TrimPrefix(u.Path, "/") + "_temporal",
		listen: "127.0.0.1:" + freePortString(t), namespace: "default", retention: 24 * time.Hour,
	}
	opts, err := cfg.options()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out := &syncBuffer{}
	done := make(chan error, 1)
	go func() { done <- serveTemporal(ctx, opts, out) }()
	line := regexp.MustCompile(`(?m)^Temporal frontend: (\S+) \(namespace default\)$`)
	var frontend string
	for deadline := time.Now().Add(time.Minute); frontend == ""; {
		if m := line.FindStringSubmatch(out.String()); m != nil {
			frontend = m[1]
			break
		}
		select {
		case err := <-done:
			t.Fatalf("baton temporal stopped before it was ready: %v\n%s", err, out)
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("baton temporal not ready after a minute:\n%s", out)
		}
	}
	if frontend != cfg.listen {
		t.Errorf("frontend %s, want %s", frontend, cfg.listen)
	}
	c, err := client.Dial(client.Options{HostPort: frontend})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	resp, err := c.OperatorService().ListSearchAttributes(ctx, &operatorservice.ListSearchAttributesRequest{Namespace: "default"})
	if err != nil {
		t.Fatal(err)
	}
	for name, typ := range workflows.SearchAttributes {
		if got := resp.GetCustomAttributes()[name]; got != typ {
			t.Errorf("search attribute %s is %v, want %v", name, got, typ)
		}
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("baton temporal stopped with %v", err)
		}
	case <-time.After(time.Minute):
		t.Error("baton temporal did not stop within a minute")
	}
}

// freePortString returns a loopback port that was free a moment ago.
func freePortString(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
}
