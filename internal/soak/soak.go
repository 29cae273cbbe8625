package soak

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/baton-run/baton/internal/drive"
	"github.com/baton-run/baton/interpreter"
)

// Options configure [Run]. Zero fields take the defaults their comments
// give.
type Options struct {
	// Binary is the baton binary the deployment runs. Required.
	Binary string
	// Duration is how long the clients start new work (and the chaos
	// injects faults). Default 2 minutes.
	Duration time.Duration
	// Chaos injects faults while the work runs.
	Chaos bool
	// Clients is how many clients work at once. Default 16.
	Clients int
	// Settle bounds how long the clients may take to finish their runs
	// once the duration is over. Default 10 minutes.
	Settle time.Duration
	// Seed seeds the choice of scripts and faults. Default: the time.
	Seed uint64
	// Dir keeps the deployment's state. Default: a temporary folder,
	// removed afterwards unless a check broke.
	Dir string
	// Out receives the report. Default os.Stdout.
	Out io.Writer
	// Log receives the chaos's and the deployment's progress. Default
	// Out.
	Log io.Writer
}

// Report is what a soak did and found.
type Report struct {
	Checks  []Check
	runBook int
	Writes  int
	// Faults counts the faults injected, by kind.
	Faults map[string]int
	// Elapsed is how long the clients worked, settling included.
	Elapsed time.Duration
}

// OK reports whether every check held.
func (r *Report) OK() bool {
	for _, c := range r.Checks {
		if !c.OK() {
			return false
		}
	}
	return len(r.Checks) > 0
}

// Run starts a deployment, drives the mix from Options.Clients clients for
// Options.Duration while the chaos (with Options.Chaos) injects faults,
// lets the clients finish their runs, checks every guarantee and prints
// the report. An error means the soak itself could not run; a broken
// guarantee is a failed check in the report.
func Run(ctx context.Context, o Options) (*Report, error) {
	if o.Binary == "" {
		return nil, errors.New("soak: Options.Binary is required")
	}
	if o.Duration <= 0 {
		o.Duration = 2 * time.Minute
	}
	if o.Clients <= 0 {
		o.Clients = 16
	}
	if o.Settle <= 0 {
		o.Settle = 10 * time.Minute
	}
	if o.Seed == 0 {
		o.Seed = uint64(time.Now().UnixNano())
	}
	if o.Out == nil {
		o.Out = os.Stdout
	}
	if o.Log == nil {
		o.Log = o.Out
	}
	kept := false
	if o.Dir == "" {
		dir, err := ReachableTempDir()
		if err != nil {
			return nil, err
		}
		o.Dir = dir
		defer func() {
			if !kept {
				os.RemoveAll(dir)
			}
		}()
	}
	tools, err := StartToolServer()
	if err != nil {
		return nil, err
	}
	defer tools.Close()
	toolsFile, err := writeToolsFile(o.Dir, tools.URL())
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(o.Log, "soak: starting PostgreSQL, Temporal, 2 workers and 2 gateways (seed %d)\n", o.Seed)
	setup, cancelSetup := context.WithTimeout(ctx, 5*time.Minute)
	defer cancelSetup()
	d, err := NewDeployment(setup, &DeploymentOptions{Binary: o.Binary, Dir: o.Dir, ToolsFile: toolsFile})
	if d != nil {
		defer d.Stop()
	}
	if err != nil {
		return nil, fmt.Errorf("start the deployment: %w", err)
	}
	if err := d.publishAll(setup); err != nil {
		return nil, fmt.Errorf("publish the mix: %w", err)
	}

	runs, journal := newRuns(), newJournal()
	var unstarted []error
	var mu sync.Mutex
	begin := time.Now()
	work, stopWork := context.WithTimeout(ctx, o.Duration+o.Settle)
	defer stopWork()
	var wg sync.WaitGroup
	for i := range o.Clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(o.Seed, uint64(i)))
			c := newClient(d.GatewayURLs(), i, d.Token, journal)
			defer c.Close()
			a := &actor{c: c, runs: runs,
				agent:  drive.Who{ID: fmt.Sprintf("a_soak_%d", i), Kind: interpreter.ActorAgent},
				agent2: drive.Who{ID: fmt.Sprintf("a_soak_%d_b", i), Kind: interpreter.ActorAgent}}
			for time.Since(begin) < o.Duration && work.Err() == nil {
				s := pick(r)
				a.current = ""
				err := s.run(work, a)
				if err == nil {
					continue
				}
				if a.current != "" {
					runs.failed(a.current, err)
				} else {
					mu.Lock()
					unstarted = append(unstarted, fmt.Errorf("%s: %w", s.name, err))
					mu.Unlock()
				}
			}
		}()
	}
	var ch *chaos
	chaosDone := make(chan struct{})
	if o.Chaos {
		ch = newChaos(d, o.Seed, o.Log)
		go func() { defer close(chaosDone); ch.run(work, o.Duration) }()
	} else {
		close(chaosDone)
	}
	<-chaosDone
	wg.Wait()
	elapsed := time.Since(begin)
	fmt.Fprintf(o.Log, "soak: the clients finished %s after they began; checking\n", elapsed.Round(time.Second))

	check, cancelCheck := context.WithTimeout(ctx, 15*time.Minute)
	defer cancelCheck()
	reader := newClient(d.GatewayURLs(), 0, d.Token, newJournal())
	defer reader.Close()
	all := runs.all()
	rep := &Report{runBook: len(all), Writes: len(journal.Writes()), Elapsed: elapsed, Faults: map[string]int{}}
	s, err := read(check, reader, all)
	if err != nil {
		return rep, fmt.Errorf("read the settled deployment: %w", err)
	}
	rep.Checks = append(rep.Checks,
		checkScripts(all, unstarted),
		checkRuns(all, s),
		checkReplays(check, reader, journal.Writes()),
		checkViews(all, s),
		checkDownstream(runs.toolCalls(), tools.Received()),
		checkOpenWork(all, s),
		checkTokens(check, reader, all, s),
		// Last of the reads: it deletes workflows.
		checkRecords(check, reader, d.TemporalAddr, all, s, journal.Writes()),
		checkProcesses(d),
	)
	if ch != nil {
		rep.Checks = append(rep.Checks, ch.checks()...)
		rep.Faults = ch.counts
	}
	rep.print(o, journal)
	if !rep.OK() {
		if err := keep(o.Dir, d, journal); err != nil {
			fmt.Fprintf(o.Log, "soak: keep the evidence: %v\n", err)
		}
		fmt.Fprintf(o.Log, "soak: every process's output, the journal of writes and PostgreSQL's data are in %s\n", o.Dir)
		kept = true
	}
	return rep, nil
}

// checkProcesses: no process panicked or ended without being asked to.
func checkProcesses(d *Deployment) Check {
	c := Check{Name: "processes"}
	lives := 0
	for _, p := range d.Processes() {
		for _, line := range p.Panics() {
			c.breakf("%s panicked: %s", p.Name, line)
		}
		for _, e := range p.UnexpectedExits() {
			c.breakf("%s: %s", p.Name, e)
		}
		lives++
	}
	c.Detail = fmt.Sprintf("%d processes: no panic, no exit not asked for", lives)
	return c
}

// checks are the chaos's own: every process came back after its fault,
// and every stalled request was refused and closed.
func (c *chaos) checks() []Check {
	c.mu.Lock()
	defer c.mu.Unlock()
	faults := Check{Name: "faults"}
	stalls := Check{Name: "slow-loris", Detail: fmt.Sprintf("%d stalled requests refused and closed, the slowest in %s", c.stalls, c.slowestStall.Round(time.Millisecond))}
	for _, b := range c.broken {
		if strings.HasPrefix(b, faultSlowLoris) {
			stalls.Broken = append(stalls.Broken, b)
		} else {
			faults.Broken = append(faults.Broken, b)
		}
	}
	for _, f := range []string{faultPostgres, faultTemporal, faultDrain, faultSlowLoris} {
		if c.counts[f] == 0 {
			faults.breakf("no %s was injected: the soak was too short for it", f)
		}
	}
	faults.Detail = "every process came back: " + counts(c.counts)
	return []Check{faults, stalls}
}

// print writes the report: the counts, throughput and latency per tool,
// then one line per check.
func (r *Report) print(o Options, j *Journal) {
	w := o.Out
	j.mu.Lock()
	took := j.took
	retried := fmt.Sprintf("retry answers %d, failed connections %d", j.retried["retry"], j.retried["transport"])
	j.mu.Unlock()
	fmt.Fprintf(w, "\n== soak: %s of work from %d clients", o.Duration, o.Clients)
	if o.Chaos {
		fmt.Fprint(w, " under chaos")
	}
	fmt.Fprintf(w, ", %s with settling (seed %d)\n", r.Elapsed.Round(time.Second), o.Seed)
	calls := 0
	for _, ds := range took {
		calls += len(ds)
	}
	fmt.Fprintf(w, "  runs %d, calls %d (writes %d), %s\n", r.runBook, calls, r.Writes, retried)
	if len(r.Faults) > 0 {
		fmt.Fprintf(w, "  faults: %s\n", counts(r.Faults))
	}
	secs := r.Elapsed.Seconds()
	fmt.Fprintf(w, "  throughput: %.2f runs/s, %.1f writes/s\n", float64(r.runBook)/secs, float64(r.Writes)/secs)
	names := make([]string, 0, len(took))
	for n := range took {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		ds := append([]time.Duration(nil), took[n]...)
		fmt.Fprintf(w, "  %-12s n=%-6d p50 %8.1f ms  p99 %8.1f ms\n", n, len(ds), ms(percentile(ds, 0.5)), ms(percentile(ds, 0.99)))
	}
	for _, c := range r.Checks {
		status := "ok  "
		if !c.OK() {
			status = "FAIL"
		}
		fmt.Fprintf(w, "%s %-11s %s\n", status, c.Name, c.Detail)
		for i, b := range c.Broken {
			if i == 5 {
				fmt.Fprintf(w, "       … and %d more\n", len(c.Broken)-5)
				break
			}
			fmt.Fprintf(w, "       %s\n", b)
		}
	}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// percentile is the q-th quantile of ds (sorted in place).
func percentile(ds []time.Duration, q float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	return ds[int(q*float64(len(ds)-1)+0.5)]
}
