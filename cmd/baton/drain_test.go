package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/baton-run/baton/internal/drive"
	"github.com/baton-run/baton/internal/testing/crmtest"
	"github.com/baton-run/baton/internal/testing/pgtest"
	"github.com/baton-run/baton/interpreter"
)

const ticketProcess = `---
name: ticket
description: Open a ticket.
steps:
  - id: open
    agent: Open the ticket.
    tools: [crm/create_ticket]
    output: { ticket: string }
  - id: done
    finish: opened
---
`

// drainCall is one call_tool of the drain test and what it answered.
type drainCall struct {
	args   map[string]any
	result map[string]any
	err    error
}

// A SIGTERM while 32 tool calls are in flight. With time to drain, every
// call finishes and answers; readyz answers 503 meanwhile. Cut by a short
// --drain, calls answer retry, and after a restart each requestId replayed
// answers what its run kept: the crm's first answer to the call's key.
// Every request the crm received is counted, those it answered from an
// idempotency key included: each call reached it under one key, took one
// effect, and a call that finished in the drain was sent once.
func TestDevDrain(t *testing.T) {
	const n = 32
	crm, err := crmtest.Start(nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { crm.Close() })
	dir := t.TempDir()
	tools := filepath.Join(dir, "tools.yaml")
	if err := os.WriteFile(tools, []byte(fmt.Sprintf(`servers:
  - name: crm
    url: %s
    timeout: 10s
    tools:
      create_ticket: { policy: write, idempotency: key }
`, crm.URL())), 0o600); err != nil {
		t.Fatal(err)
	}
	proc := filepath.Join(dir, "ticket")
	if err := os.MkdirAll(proc, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(proc, "PROCESS.md"), []byte(ticketProcess), 0o600); err != nil {
		t.Fatal(err)
	}
	data := pgtest.DataDir(t)
	dbURL := pgtest.NewDatabase(t)
	u, _ := url.Parse(dbURL)
	launch := func(drain string) *devRun {
		cfg := devConfigFor(data, "--tools", tools, "--processes", proc, "--drain", drain,
			"--temporal-database", strings.TrimPrefix(u.Path, "/")+"_temporal")
		cfg.databaseURL = dbURL
		return launchDev(t, cfg)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	d := launch("30s")
	drv := devDriver(t, data, d.mcpURL)
	// One agent a run: an identity gets at most
	// gateway.DefaultRequestsPerIdentity requests at once.
	tokens, agents := make([]string, n), make([]drive.Who, n)
	for i := range tokens {
		agents[i] = drive.Who{ID: fmt.Sprintf("a_drain%d", i), Kind: interpreter.ActorAgent}
		v, err := drv.Start(ctx, drive.WalkStarter, "ticket", nil, "live")
		if err != nil {
			t.Fatal(err)
		}
		c, err := drv.Claim(ctx, agents[i], v.Run.ID, "open")
		if err != nil {
			t.Fatal(err)
		}
		tokens[i] = c.Token
	}
	// round sends one call_tool per run, all at once, and returns once
	// the crm has them all: they are in flight.
	round := func(drv *drive.MCP, name string) ([]*drainCall, func()) {
		calls := make([]*drainCall, n)
		before := len(crm.Calls("create_ticket"))
		var wg sync.WaitGroup
		for i := range calls {
			c := &drainCall{args: map[string]any{"token": tokens[i], "tool": "crm/create_ticket", "requestId": drive.RequestID(),
				"arguments": map[string]any{"customer": "alice@example.com", "subject": fmt.Sprintf("%s %d", name, i)}}}
			calls[i] = c
			wg.Add(1)
			go func() { defer wg.Done(); c.err = drv.Call(ctx, agents[i], "call_tool", c.args, &c.result) }()
		}
		deadline := time.Now().Add(time.Minute)
		for len(crm.Calls("create_ticket")) < before+n {
			if time.Now().After(deadline) {
				t.Fatalf("%s: the crm got %d of %d calls", name, len(crm.Calls("create_ticket"))-before, n)
			}
			time.Sleep(10 * time.Millisecond)
		}
		return calls, wg.Wait
	}

	// 1. Time to drain: every call finishes.
	crm.SetDelay(2 * time.Second)
	first, wait := round(drv, "first")
	d.cancel()
	// While the calls drain, readyz says not ready.
	drained := make(chan struct{})
	go func() { wait(); close(drained) }()
	readyz := strings.TrimSuffix(d.metricsURL, "/metrics") + readyzPath
	for notReady := false; !notReady; time.Sleep(10 * time.Millisecond) {
		resp, err := http.Get(readyz)
		if err == nil {
			resp.Body.Close()
			notReady = resp.StatusCode == http.StatusServiceUnavailable
		}
		select {
		case <-drained:
			if !notReady {
				t.Errorf("readyz never answered 503 while the calls drained (last: %v %v)", resp, err)
			}
			notReady = true
		default:
		}
	}
	<-drained
	d.stop()
	for i, c := range first {
		if c.err != nil || c.result["status"] != "completed" {
			t.Errorf("first call %d: %v %v; want it completed within the drain", i, c.err, c.result)
		}
	}

	// 2. A drain too short: the calls are cut and answer retry.
	d = launch("1s")
	drv = devDriver(t, data, d.mcpURL)
	crm.SetDelay(6 * time.Second)
	second, wait := round(drv, "second")
	d.cancel()
	wait()
	d.stop()
	cut := 0
	for i, c := range second {
		var e *interpreter.Error
		if c.err == nil && c.result["status"] == "completed" {
			continue // finished in time: also an answer
		}
		if !errors.As(c.err, &e) || e.Code != interpreter.CodeRetry {
			t.Errorf("second call %d: %v %v; want its answer or retry", i, c.err, c.result)
			continue
		}
		cut++
	}
	if cut == 0 {
		t.Errorf("none of the %d calls in flight was cut by a 1s drain while the crm took 6s: the drain was not tested", n)
	}

	// 3. After a restart, each requestId answers what its run kept.
	crm.SetDelay(0)
	d = launch("30s")
	drv = devDriver(t, data, d.mcpURL)
	sent := sends(crm)
	for name, calls := range map[string][]*drainCall{"first": first, "second": second} {
		for i, c := range calls {
			subject := c.args["arguments"].(map[string]any)["subject"].(string)
			s := sent[subject]
			if len(s.keys) != 1 || s.effects != 1 {
				t.Errorf("%s call %d reached the crm %d times under keys %v with %d effects; want one key and one effect", name, i, s.requests, s.keys, s.effects)
				continue
			}
			if name == "first" && s.requests != 1 {
				t.Errorf("first call %d finished within the drain and was sent %d times", i, s.requests)
			}
			var key string
			for k := range s.keys {
				key = k
			}
			want, _ := crm.Answer(key)
			var again map[string]any
			if err := drv.Call(ctx, agents[i], "call_tool", c.args, &again); err != nil || again["status"] != "completed" {
				t.Errorf("%s call %d replayed: %v %v", name, i, err, again)
				continue
			}
			res, _ := again["result"].(map[string]any)
			if !sameJSON(t, res["structuredContent"], want) {
				t.Errorf("%s call %d replayed %v; the crm's first answer to its key was %s", name, i, res["structuredContent"], want)
			}
			if c.result != nil && !sameJSON(t, again["result"], c.result["result"]) {
				t.Errorf("%s call %d replayed %v, first answered %v", name, i, again["result"], c.result["result"])
			}
		}
	}
	if got := crm.Effects("create_ticket"); got != 2*n {
		t.Errorf("the crm opened %d tickets for %d calls", got, 2*n)
	}
	total, replayed := 0, 0
	for _, s := range sent {
		total += s.requests
		replayed += s.requests - s.effects
	}
	t.Logf("the crm received %d calls for %d: %d cut by the short drain, %d answered from their key", total, 2*n, cut, replayed)
}

// sent is what the crm received for one call: its requests (those
// answered from the key included), the keys they carried, and the effects
// they took.
type sent struct {
	requests, effects int
	keys              map[string]bool
}

// sends groups every create_ticket request the crm received by its
// subject, which is one call's.
func sends(crm *crmtest.Server) map[string]*sent {
	out := map[string]*sent{}
	for _, c := range crm.Calls("create_ticket") {
		var args struct {
			Subject string `json:"subject"`
		}
		_ = json.Unmarshal(c.Arguments, &args)
		s := out[args.Subject]
		if s == nil {
			s = &sent{keys: map[string]bool{}}
			out[args.Subject] = s
		}
		s.requests++
		s.keys[c.MetaKey] = true
		if !c.Replayed {
			s.effects++
		}
	}
	return out
}

// sameJSON reports whether a and b encode to equal JSON values.
func sameJSON(t *testing.T, a, b any) bool {
	t.Helper()
	norm := func(v any) any {
		raw, ok := v.(json.RawMessage)
		if !ok {
			var err error
			if raw, err = json.Marshal(v); err != nil {
				t.Fatal(err)
			}
		}
		var out any
		if err := json.Unmarshal(raw, &out); err != nil {
			return nil
		}
		return out
	}
	return reflect.DeepEqual(norm(a), norm(b))
}
