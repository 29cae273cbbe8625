package faults

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/baton-run/baton/internal/drive"
	"github.com/baton-run/baton/internal/soak"
	"github.com/baton-run/baton/interpreter"
)

// restart starts a killed process again, failing the test if it cannot.
func restart(t *testing.T, p *soak.Process) string {
	t.Helper()
	begin := time.Now()
	if err := p.Start(2 * time.Minute); err != nil {
		t.Errorf("restart %s: %v", p.Name, err)
		return "restarting " + p.Name + " failed"
	}
	return fmt.Sprintf("%s restarted (serving again in %s)", p.Name, time.Since(begin).Round(100*time.Millisecond))
}

// kill -9 a worker and a gateway in the middle of 300 runs: every run
// ends, no step completes twice, no answer differs from its replay,
// nothing is lost.
func TestKillWorkerAndGateway(t *testing.T) {
	l := load{
		process: publishBench(t, "faults-kill", org), runs: 300, concurrency: 16, faultAfter: 60,
		faults: func(t *testing.T) []string {
			w, g := dep.workers[0], dep.gateways[0]
			w.Kill()
			time.Sleep(500 * time.Millisecond)
			g.Kill()
			injected := []string{"kill -9 " + w.Name + " after 60 runs ended, " + g.Name + " 0.5s later"}
			time.Sleep(3 * time.Second)
			return append(injected, restart(t, w), restart(t, g))
		},
	}
	o := l.drive(t)
	lost, dup, panics := o.verify(t, l)
	if o.journal.retried["transport"] == 0 {
		t.Errorf("no call failed while %s was down: the load did not reach it", dep.gateways[0].Name)
	}
	o.report(t, l, lost, dup, panics)
}

// PostgreSQL restarted mid-load: callers get retry, nothing is
// half-written, everything continues after.
func TestRestartPostgres(t *testing.T) {
	l := load{
		process: publishBench(t, "faults-postgres", org), runs: 150, concurrency: 16, faultAfter: 40,
		faults: func(t *testing.T) []string {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			begin := time.Now()
			var probe error
			if err := dep.restartPostgres(ctx, 3*time.Second, func() { probe = startWhileDown(ctx) }); err != nil {
				t.Fatalf("restart PostgreSQL: %v", err)
			}
			// The callers already in a write wait for PostgreSQL; whether
			// one of them starts a run while it is down is luck. A caller
			// who arrives then is told to retry.
			if e, ok := probe.(*interpreter.Error); !ok || e.Code != interpreter.CodeRetry {
				t.Errorf("start_run while PostgreSQL was down: %v, want retry", probe)
			}
			return []string{fmt.Sprintf("PostgreSQL stopped (fast shutdown) after 40 runs ended and started again %s later", time.Since(begin).Round(100*time.Millisecond))}
		},
	}
	o := l.drive(t)
	lost, dup, panics := o.verify(t, l)
	o.report(t, l, lost, dup, panics)
}

// startWhileDown starts a run of faults-postgres once, through the first
// gateway, with no retry of its own.
func startWhileDown(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	d := drive.NewMCP(dep.gatewayURLs[0], dep.token, nil)
	defer d.Close()
	_, err := d.Start(ctx, drive.WalkStarter, "faults-postgres", map[string]any{}, "")
	return err
}

// temporalDown is how long Temporal stays down.
const temporalDown = 2 * time.Second

// Temporal killed and restarted mid-load: callers get retry, nothing is
// half-written, everything continues after.
func TestRestartTemporal(t *testing.T) {
	l := load{
		process: publishBench(t, "faults-temporal", org), runs: 150, concurrency: 16, faultAfter: 40,
		faults: func(t *testing.T) []string {
			dep.temporal.Kill()
			time.Sleep(temporalDown)
			return []string{"kill -9 temporal after 40 runs ended", restart(t, dep.temporal)}
		},
	}
	o := l.drive(t)
	lost, dup, panics := o.verify(t, l)
	// The gateways' Temporal clients retry through a short outage, so
	// callers wait instead of getting retry; either way they must have
	// felt it.
	if o.journal.retried["retry"] == 0 && o.journal.slowest < temporalDown {
		t.Errorf("no call waited through the outage or got retry (slowest %s): the load did not reach it", o.journal.slowest)
	}
	o.report(t, l, lost, dup, panics)
}
