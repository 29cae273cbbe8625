package soak

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"
)

// The faults the chaos injects.
const (
	faultKillGateway = "kill -9 gateway"
	faultKillWorker  = "kill -9 worker"
	faultDrain       = "SIGTERM drain"
	faultPostgres    = "PostgreSQL restart"
	faultTemporal    = "Temporal restart"
	faultSlowLoris   = "slow-loris wave"
)

// slowLorisWave is how many stalled requests one wave sends at once.
const slowLorisWave = 16

// chaos injects faults into a deployment until its context ends: a kill
// -9 of a gateway or a worker every few seconds, and at set points of the
// duration a slow-loris wave, a PostgreSQL restart, a drain, a Temporal
// restart, and a second wave, so that each happens at least once.
type chaos struct {
	d   *Deployment
	r   *rand.Rand
	log io.Writer

	mu     sync.Mutex
	counts map[string]int
	// broken lists what went wrong in the faults themselves: a process
	// that did not come back, a stalled connection not closed.
	broken []string
	// stalls counts the stalled requests sent and the slowest close.
	stalls       int
	slowestStall time.Duration
}

func newChaos(d *Deployment, seed uint64, log io.Writer) *chaos {
	return &chaos{d: d, r: rand.New(rand.NewPCG(seed, seed^0x5eed)), log: log, counts: map[string]int{}}
}

// run injects faults for duration, then returns once every process is
// up again.
func (c *chaos) run(ctx context.Context, duration time.Duration) {
	begin := time.Now()
	required := []struct {
		at    float64
		fault string
	}{{0.15, faultSlowLoris}, {0.3, faultPostgres}, {0.45, faultDrain}, {0.6, faultTemporal}, {0.8, faultSlowLoris}}
	for ctx.Err() == nil && time.Since(begin) < duration {
		fault := faultKillGateway
		if c.r.IntN(2) == 0 {
			fault = faultKillWorker
		}
		if len(required) > 0 && time.Since(begin) >= time.Duration(required[0].at*float64(duration)) {
			fault, required = required[0].fault, required[1:]
		}
		c.inject(ctx, fault)
		wait := 4*time.Second + time.Duration(c.r.Int64N(int64(8*time.Second)))
		select {
		case <-ctx.Done():
		case <-time.After(wait):
		}
	}
}

// inject injects one fault and brings the deployment back.
func (c *chaos) inject(ctx context.Context, fault string) {
	begin := time.Now()
	var err error
	what := fault
	switch fault {
	case faultKillGateway, faultKillWorker:
		ps := c.d.Gateways
		if fault == faultKillWorker {
			ps = c.d.Workers
		}
		p := ps[c.r.IntN(len(ps))]
		what += " " + p.Name
		p.Kill()
		c.sleep(ctx, time.Second+time.Duration(c.r.Int64N(int64(2*time.Second))))
		err = p.Start(2 * time.Minute)
	case faultDrain:
		ps := append(append([]*Process(nil), c.d.Gateways...), c.d.Workers...)
		p := ps[c.r.IntN(len(ps))]
		what += " " + p.Name
		p.Stop()
		err = p.Start(2 * time.Minute)
	case faultPostgres:
		err = c.d.RestartPostgres(ctx, 3*time.Second)
	case faultTemporal:
		// Down for up to twice the lease: claims lapse while no write
		// reaches their runs.
		down := 2*time.Second + time.Duration(c.r.Int64N(int64(2*c.d.opts.Lease)))
		what += fmt.Sprintf(" (down %s)", down.Round(time.Second))
		c.d.Temporal.Kill()
		c.sleep(ctx, down)
		err = c.d.Temporal.Start(3 * time.Minute)
	case faultSlowLoris:
		err = c.slowLoris()
	}
	c.mu.Lock()
	c.counts[fault]++
	if err != nil {
		c.broken = append(c.broken, fmt.Sprintf("%s: %v", what, err))
	}
	c.mu.Unlock()
	fmt.Fprintf(c.log, "chaos %s: %s (%s)\n", time.Now().Format("15:04:05"), what, time.Since(begin).Round(100*time.Millisecond))
}

// slowLoris sends a wave of stalled unauthenticated requests to a gateway
// at once: each must get its 401 and its connection closed.
func (c *chaos) slowLoris() error {
	addr := c.d.GatewayAddrs[c.r.IntN(len(c.d.GatewayAddrs))]
	var wg sync.WaitGroup
	var mu sync.Mutex
	var failures []string
	var slowest time.Duration
	for range slowLorisWave {
		wg.Add(1)
		go func() {
			defer wg.Done()
			status, took, err := Stall(addr)
			mu.Lock()
			defer mu.Unlock()
			slowest = max(slowest, took)
			switch {
			case err != nil:
				failures = append(failures, err.Error())
			case status != http.StatusUnauthorized:
				failures = append(failures, fmt.Sprintf("answered %d, want 401", status))
			}
		}()
	}
	wg.Wait()
	c.mu.Lock()
	c.stalls += slowLorisWave
	c.slowestStall = max(c.slowestStall, slowest)
	c.mu.Unlock()
	if len(failures) > 0 {
		sort.Strings(failures)
		return fmt.Errorf("%d of %d stalled requests to %s: %s", len(failures), slowLorisWave, addr, strings.Join(failures[:min(3, len(failures))], "; "))
	}
	return nil
}

func (c *chaos) sleep(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}
