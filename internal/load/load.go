// Package load measures a Baton deployment under load, as `baton bench`
// does: runs started and walked to their end over MCP by concurrent
// clients, and the same shape of work done straight against Temporal with
// no-op handlers, so every figure can be read as a ratio of Temporal's own.
package load

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/baton-run/baton/internal/drive"
	"github.com/baton-run/baton/interpreter"
)

// Options configure a load run. Zero fields take the defaults their
// comments give.
type Options struct {
	// URL is the MCP endpoint. Required.
	URL string
	// Token returns the bearer token of an identity. Required.
	Token func(drive.Who) (string, error)
	// Process is the published process to run. Required. Runs walk it with
	// sample values (see drive.Walk): it should need no waits.
	Process *interpreter.Process
	// Runs is how many runs each phase makes. Default 200.
	Runs int
	// Concurrency is how many clients work at once. Default 32.
	Concurrency int
	// Bare, when set, runs the same shape of work straight against
	// Temporal with no-op handlers (see Bare).
	Bare *Bare
	// PID, when set, is the Baton process whose resident memory is
	// reported after each phase.
	PID int
	// Samples is how many get_work and list_runs calls are timed after the
	// runs are started. Default 200.
	Samples int
	// Out receives the report. Default os.Stdout.
	Out io.Writer
	// Phases names the phases to run, of starts, handed, listings and
	// full. Default starts, listings and full.
	Phases []string
	// Handed is how many runs the handed phase starts and walks until a
	// person has a work item, then leaves open, so that the listings show
	// a person with many items. Default Runs.
	Handed int
	// Rounds is how many times the full phase runs, each time followed by
	// Bare's full shape when Bare is set (the phases "full 2",
	// "bare-full 2" and so on after the first). Default 1.
	Rounds int
	// SDKClient makes the calls through the MCP SDK's client sessions
	// instead of as plain JSON-RPC requests (drive.MCPOptions.Plain). The
	// clients run beside the server they measure, and the SDK's cost a
	// call about twice the CPU.
	SDKClient bool
}

func (o *Options) phase(name string) bool {
	if len(o.Phases) == 0 {
		return name != "handed"
	}
	for _, p := range o.Phases {
		if p == name {
			return true
		}
	}
	return false
}

func (o *Options) defaults() error {
	if o.URL == "" || o.Token == nil || o.Process == nil {
		return errors.New("load: URL, Token and Process are required")
	}
	if o.Runs <= 0 {
		o.Runs = 200
	}
	if o.Concurrency <= 0 {
		o.Concurrency = 32
	}
	if o.Samples <= 0 {
		o.Samples = 200
	}
	if o.Rounds <= 0 {
		o.Rounds = 1
	}
	if o.Handed <= 0 {
		o.Handed = o.Runs
	}
	if o.Out == nil {
		o.Out = os.Stdout
	}
	return nil
}

// timings collects call latencies by name.
type timings struct {
	mu  sync.Mutex
	d   map[string][]time.Duration
	err map[string]int
}

func newTimings() *timings {
	return &timings{d: map[string][]time.Duration{}, err: map[string]int{}}
}

func (t *timings) add(name string, took time.Duration, err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if err != nil {
		t.err[name]++
		return
	}
	t.d[name] = append(t.d[name], took)
}

// Percentile returns the q-th quantile of ds (sorted in place).
func Percentile(ds []time.Duration, q float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	return ds[int(q*float64(len(ds)-1)+0.5)]
}

// Phase is one measured phase of a load run.
type Phase struct {
	Name    string
	Runs    int
	Failed  int
	Elapsed time.Duration
	// Calls holds each tool's latencies.
	Calls map[string][]time.Duration
	// Errors counts calls that failed outright, by tool.
	Errors map[string]int
	// RSS is the resident memory of Options.PID after the phase, bytes.
	RSS int64
	// CPU is the CPU time this process used in the phase, user and system:
	// the clients' cost, and in the bare phases the bare worker's too.
	CPU time.Duration
}

// RunsPerSecond is the phase's throughput.
func (p *Phase) RunsPerSecond() float64 {
	if p.Elapsed <= 0 {
		return 0
	}
	return float64(p.Runs-p.Failed) / p.Elapsed.Seconds()
}

// Report is a load run's result.
type Report struct {
	Phases []*Phase
}

// Phase returns the phase named name, or nil.
func (r *Report) Phase(name string) *Phase {
	for _, p := range r.Phases {
		if p.Name == name {
			return p
		}
	}
	return nil
}

// errHanded stops a walk of the handed phase at a person's work item.
var errHanded = errors.New("handed to a person")

// Run measures, in order: starts (Runs runs started at Concurrency),
// handed when asked for (Handed runs walked to a person's work item), the
// listings with those runs open (get_work and list_runs, one at a time),
// full runs (Runs runs started and walked to their end at Concurrency) and,
// with Bare, the same two shapes against Temporal alone; then, for Rounds
// above 1, full runs and Bare's full shape again in turn. It prints the
// report as it goes.
func Run(ctx context.Context, o Options) (*Report, error) {
	if err := o.defaults(); err != nil {
		return nil, err
	}
	rep := &Report{}
	if o.Bare != nil {
		// Started first, so that every phase runs beside its idle pollers.
		if err := o.Bare.start(); err != nil {
			return rep, err
		}
		defer o.Bare.stop(context.WithoutCancel(ctx))
	}
	transport := &http.Transport{MaxIdleConns: 4 * o.Concurrency, MaxIdleConnsPerHost: 4 * o.Concurrency, IdleConnTimeout: time.Minute}
	defer transport.CloseIdleConnections()
	newDriver := func(t *timings) *drive.MCP {
		return drive.NewMCP(o.URL, o.Token, &drive.MCPOptions{Transport: transport, Timed: t.add, Plain: !o.SDKClient})
	}

	// measure runs one phase over MCP as oo says, and reports it.
	measure := func(oo *Options, name string, one func(context.Context, *drive.MCP) error) error {
		p, err := oo.parallel(ctx, name, newTimings(), one, newDriver)
		if err != nil {
			return err
		}
		rep.Phases = append(rep.Phases, p)
		o.print(p)
		return nil
	}

	// Starts.
	if o.phase("starts") {
		if err := measure(&o, "starts", func(ctx context.Context, d *drive.MCP) error {
			_, err := d.Start(ctx, drive.WalkStarter, o.Process.Name, interpreter.Samples(o.Process.Inputs), "")
			return err
		}); err != nil {
			return rep, err
		}
	}

	// Runs handed to a person: each walked until a person has its work
	// item, and left open.
	var person *drive.Who
	var personMu sync.Mutex
	if o.phase("handed") {
		ho := o
		ho.Runs = o.Handed
		if err := measure(&ho, "handed", func(ctx context.Context, d *drive.MCP) error {
			w := drive.Walk{Process: o.Process, Check: func(_ string, v any) error {
				if view, ok := v.(*interpreter.View); ok && len(view.WorkItems) > 0 {
					who := drive.DefaultMember(view.WorkItems[0])
					personMu.Lock()
					person = &who
					personMu.Unlock()
					return errHanded
				}
				return nil
			}}
			if _, err := w.Run(ctx, d); !errors.Is(err, errHanded) {
				if err == nil {
					err = errors.New("the run ended without a person's work item")
				}
				return err
			}
			return nil
		}); err != nil {
			return rep, err
		}
	}

	// Listings with the started runs open, as the agent and, after the
	// handed phase, as the person who has the work items.
	if o.phase("listings") {
		lp := &Phase{Name: "listings", Calls: map[string][]time.Duration{}, Errors: map[string]int{}}
		begin := time.Now()
		as := []struct {
			suffix string
			who    drive.Who
		}{{"", drive.WalkAgent}}
		if person != nil {
			as = append(as, struct {
				suffix string
				who    drive.Who
			}{" (person)", *person})
		}
		for _, a := range as {
			t := newTimings()
			d := newDriver(t)
			for i := 0; i < o.Samples; i++ {
				_ = d.Call(ctx, a.who, "get_work", map[string]any{"limit": 20}, nil)
				_ = d.Call(ctx, a.who, "list_runs", map[string]any{"process": o.Process.Name, "limit": 20}, nil)
			}
			_ = d.Close()
			for name, ds := range t.d {
				lp.Calls[name+a.suffix] = ds
			}
			for name, n := range t.err {
				lp.Errors[name+a.suffix] = n
			}
		}
		lp.Elapsed, lp.RSS = time.Since(begin), o.rss()
		rep.Phases = append(rep.Phases, lp)
		o.print(lp)
	}

	// Full runs, and the same shape against Temporal alone; with Rounds,
	// the two again in turn, so that a machine's drift over the run
	// weighs on both alike.
	full := func(name string) error {
		return measure(&o, name, func(ctx context.Context, d *drive.MCP) error {
			w := drive.Walk{Process: o.Process, Idle: func(context.Context) error { return errors.New("the run waits on time; bench a process without waits") }}
			_, err := w.Run(ctx, d)
			return err
		})
	}
	if o.phase("full") {
		if err := full("full"); err != nil {
			return rep, err
		}
	}
	bare := func(name string, updates int) error {
		p, err := o.Bare.phase(ctx, &o, name, updates)
		rep.Phases = append(rep.Phases, p)
		return err
	}
	if o.Bare != nil {
		if err := bare("bare-starts", 0); err != nil {
			return rep, err
		}
		if err := bare("bare-full", 3); err != nil {
			return rep, err
		}
	}
	for r := 2; r <= o.Rounds && o.phase("full"); r++ {
		if err := full(roundName("full", r)); err != nil {
			return rep, err
		}
		if o.Bare != nil {
			if err := bare(roundName("bare-full", r), 3); err != nil {
				return rep, err
			}
		}
	}
	if o.Bare != nil {
		o.ratios(rep)
	}
	return rep, nil
}

// roundName is a phase's name in round r: the first round's has no number.
func roundName(name string, r int) string {
	if r <= 1 {
		return name
	}
	return fmt.Sprintf("%s %d", name, r)
}

// FullRatios returns, round by round, Baton's full runs a second over the
// bare ones; a round without both phases is left out.
func (r *Report) FullRatios() []float64 {
	var out []float64
	for i := 1; ; i++ {
		full, bare := r.Phase(roundName("full", i)), r.Phase(roundName("bare-full", i))
		if full == nil && bare == nil {
			return out
		}
		if full != nil && bare != nil && bare.RunsPerSecond() > 0 {
			out = append(out, full.RunsPerSecond()/bare.RunsPerSecond())
		}
	}
}

// parallel runs one(ctx, driver) Runs times from Concurrency clients, each
// with a driver of its own (nil without newDriver).
func (o *Options) parallel(ctx context.Context, name string, t *timings, one func(context.Context, *drive.MCP) error, newDriver func(*timings) *drive.MCP) (*Phase, error) {
	var next, failed atomic.Int64
	var firstErr atomic.Value
	var wg sync.WaitGroup
	begin, cpu := time.Now(), processCPU()
	for c := 0; c < o.Concurrency; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var d *drive.MCP
			if newDriver != nil {
				d = newDriver(t)
				defer d.Close()
			}
			for next.Add(1) <= int64(o.Runs) && ctx.Err() == nil {
				if err := one(ctx, d); err != nil {
					failed.Add(1)
					firstErr.CompareAndSwap(nil, err)
				}
			}
		}()
	}
	wg.Wait()
	p := &Phase{Name: name, Runs: o.Runs, Failed: int(failed.Load()), Elapsed: time.Since(begin), Calls: t.d, Errors: t.err, RSS: o.rss(), CPU: processCPU() - cpu}
	if err, _ := firstErr.Load().(error); err != nil {
		fmt.Fprintf(o.Out, "%s: %d of %d runs failed; the first: %v\n", name, p.Failed, p.Runs, err)
		if p.Failed == p.Runs {
			return p, fmt.Errorf("%s: every run failed: %w", name, err)
		}
	}
	return p, ctx.Err()
}

// processCPU returns the CPU time this process has used, user and system.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// rss returns the resident memory of Options.PID, or 0.
func (o *Options) rss() int64 {
	if o.PID == 0 {
		return 0
	}
	return RSS(o.PID)
}

// RSS reads a process's resident memory from /proc, in bytes; 0 when it
// cannot be read.
func RSS(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			f := strings.Fields(rest)
			if len(f) > 0 {
				kb, _ := strconv.ParseInt(f[0], 10, 64)
				return kb << 10
			}
		}
	}
	return 0
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1f", float64(d.Microseconds())/1000) }

// print writes one phase's lines.
func (o *Options) print(p *Phase) {
	fmt.Fprintf(o.Out, "\n== %s", p.Name)
	if p.Runs > 0 {
		fmt.Fprintf(o.Out, ": %d runs (%d failed) in %s at concurrency %d: %.1f runs/s", p.Runs, p.Failed, p.Elapsed.Round(time.Millisecond), o.Concurrency, p.RunsPerSecond())
	}
	if p.RSS > 0 {
		fmt.Fprintf(o.Out, ", RSS %d MB", p.RSS>>20)
	}
	if p.Runs > 0 && p.CPU > 0 {
		fmt.Fprintf(o.Out, ", bench CPU %.1f ms/run", float64(p.CPU.Microseconds())/1000/float64(p.Runs))
	}
	fmt.Fprintln(o.Out)
	names := make([]string, 0, len(p.Calls))
	for n := range p.Calls {
		names = append(names, n)
	}
	sort.Strings(names)
	var writes int
	for _, n := range names {
		ds := p.Calls[n]
		fmt.Fprintf(o.Out, "  %-18s n=%-6d p50 %6s ms  p99 %6s ms  p99/p50 %.1f", n, len(ds), ms(Percentile(ds, 0.5)), ms(Percentile(ds, 0.99)),
			float64(Percentile(ds, 0.99))/float64(max(Percentile(ds, 0.5), 1)))
		if e := p.Errors[n]; e > 0 {
			fmt.Fprintf(o.Out, "  errors %d", e)
		}
		fmt.Fprintln(o.Out)
		if n != "get_run" && n != "get_work" && n != "list_runs" && !strings.HasPrefix(n, "bare-query") {
			writes += len(ds)
		}
	}
	if p.Runs > 0 && p.Elapsed > 0 {
		fmt.Fprintf(o.Out, "  writes/s %.1f\n", float64(writes)/p.Elapsed.Seconds())
	}
}

// ratios prints Baton's figures over the bare ones.
func (o *Options) ratios(r *Report) {
	full, bare := r.Phase("full"), r.Phase("bare-full")
	starts, bareStarts := r.Phase("starts"), r.Phase("bare-starts")
	fmt.Fprintln(o.Out, "\n== ratios")
	if full != nil && bare != nil && bare.RunsPerSecond() > 0 {
		fmt.Fprintf(o.Out, "  full runs/s over MCP / bare: %.2f\n", full.RunsPerSecond()/bare.RunsPerSecond())
	}
	if rs := r.FullRatios(); len(rs) > 1 {
		fmt.Fprint(o.Out, "  by round:")
		for _, x := range rs {
			fmt.Fprintf(o.Out, " %.2f", x)
		}
		sorted := slices.Clone(rs)
		slices.Sort(sorted)
		m := sorted[len(sorted)/2]
		if len(sorted)%2 == 0 {
			m = (sorted[len(sorted)/2-1] + m) / 2
		}
		fmt.Fprintf(o.Out, "; median of %d rounds: %.2f\n", len(rs), m)
	}
	if starts != nil && bareStarts != nil && bareStarts.RunsPerSecond() > 0 {
		fmt.Fprintf(o.Out, "  starts/s over MCP / bare: %.2f\n", starts.RunsPerSecond()/bareStarts.RunsPerSecond())
	}
	if starts != nil {
		if ds := starts.Calls["start_run"]; len(ds) > 0 {
			fmt.Fprintf(o.Out, "  start_run p99/p50: %.1f\n", float64(Percentile(ds, 0.99))/float64(max(Percentile(ds, 0.5), 1)))
		}
	}
}
