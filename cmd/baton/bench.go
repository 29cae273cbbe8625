package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/baton-run/baton/gateway/auth"
	"github.com/baton-run/baton/internal/drive"
	"github.com/baton-run/baton/internal/load"
	"github.com/baton-run/baton/interpreter"
)

const benchUsage = `usage: baton bench [flags]

Measures a running Baton over MCP: --runs runs started by --concurrency
clients at once, then get_work and list_runs with those runs open, then
--runs runs started and walked to their end (claim, submit, decide, with
sample values). The handed phase, when named in --phases, walks --handed
runs until a person has their work item and leaves them open; the
listings then time get_work and list_runs as that person too. Prints runs/s, writes/s and p50/p99 per tool. With
--temporal-address it also does the same shapes straight against that
Temporal server with no-op handlers, and prints Baton's figures as ratios
of those; --rounds N then repeats the full runs and their bare shape in
turn N-1 times more and prints the ratio of each round and their median,
which a machine whose speed drifts between phases needs. With --pid it
reports that process's resident memory.

With --soak D it measures nothing of an existing server: it starts Baton
from this binary as separate processes (PostgreSQL, Temporal on it, two
workers, two gateways) beside a tool server that records every request,
drives a mix of work for D from --concurrency clients that retry as the
specification says, and with --chaos meanwhile kills gateways and workers
(kill -9), drains one (SIGTERM), restarts PostgreSQL and Temporal and sends
stalled requests; then lets the runs finish and checks every run, every
requestId, every view, every downstream call and every claim token. It
prints one line per check, the counts, throughput and p99 per tool, and
exits 1 on any broken check (docs/production.md, "The chaos soak").

With --fanout N it measures sub-processes instead (docs/profile-subprocess.md):
a for_each over N items of bench-fanout, whose child bench-child ends at once,
from the step ready to the parent's next step ready, against N start_run calls
of bench-child, --concurrency at once; with --temporal-address it counts the
parent's history. Publish them first: baton dev --processes examples/bench-fanout.

The process (--process-file) must be published on the server and need no
waits; examples/bench is one: baton dev --processes examples/bench.
Tokens come from --data (the data folder of baton dev) or from
--agent-token and --person-token (a person in every group the process's
work items go to).

Flags (flags win over environment variables, which win over defaults):
`

func runBench(args []string, stdout, stderr io.Writer) int {
	var (
		url, data, processFile, agentTok, personTok, temporalAddr, namespace string
		compression                                                          string
		runs, concurrency, pid, samples, handed, rounds, fanout              int
		phases, mcpClient, insightsDB                                        string
		soakFor                                                              time.Duration
		chaos                                                                bool
		seed                                                                 uint64
	)
	fl := flag.NewFlagSet("bench", flag.ContinueOnError)
	fl.SetOutput(stderr)
	fl.Usage = func() { fmt.Fprint(stderr, benchUsage); fl.PrintDefaults() }
	stringFlag(fl, &url, "url", "http://127.0.0.1:8080/mcp", "MCP endpoint")
	stringFlag(fl, &data, "data", defaultData, "data folder of baton dev, to mint dev tokens")
	stringFlag(fl, &processFile, "process-file", "examples/bench/PROCESS.md", "the process to run, as published")
	stringFlag(fl, &agentTok, "agent-token", "", "bearer token of an agent (instead of --data)")
	stringFlag(fl, &personTok, "person-token", "", "bearer token of a person in every group the work goes to (instead of --data)")
	stringFlag(fl, &temporalAddr, "temporal-address", "", "Temporal frontend, for the bare-Temporal comparison (none: skip it)")
	stringFlag(fl, &namespace, "namespace", "default", "Temporal namespace of the bare comparison")
	stringFlag(fl, &compression, "temporal-compression", "auto", "gRPC compression of the bare comparison's client, as baton serve's --temporal-compression")
	intFlag(fl, &runs, "runs", 200, "runs per phase")
	intFlag(fl, &concurrency, "concurrency", 32, "clients at once")
	intFlag(fl, &pid, "pid", 0, "Baton process whose resident memory to report")
	intFlag(fl, &samples, "samples", 200, "get_work and list_runs calls to time (with --insights, insights reports)")
	intFlag(fl, &rounds, "rounds", 1, "times the full phase runs, each followed by the bare full shape with --temporal-address")
	intFlag(fl, &handed, "handed", 0, "runs the handed phase walks to a person's work item and leaves open (default --runs)")
	stringFlag(fl, &mcpClient, "client", "plain", "how the clients call over MCP: plain (one JSON-RPC request a call, little CPU beside the server) or sdk (the MCP Go SDK's client sessions)")
	intFlag(fl, &fanout, "fanout", 0, "items of the sub-process fan-out measurement, instead of the phases (0: none)")
	stringFlag(fl, &phases, "phases", "starts,listings,full", "phases to run, of starts, handed, listings and full (the bare comparison runs with --temporal-address)")
	stringFlag(fl, &insightsDB, "insights", "", `instead of the phases, time the insights query against 100,000 ended and 10,000 open runs of one process, seeded into this PostgreSQL URL ("dev": the --data folder's) and deleted after; prints p50, p99 and EXPLAIN ANALYZE`)
	fl.DurationVar(&soakFor, "soak", 0, "run the chaos soak for this long instead of measuring --url (see above)")
	fl.BoolVar(&chaos, "chaos", false, "with --soak: kill, drain and restart processes while the work runs")
	fl.Uint64Var(&seed, "seed", 0, "with --soak: seed of the work and the faults (default: the time)")
	if err := fl.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if soakFor > 0 {
		return runSoak(soakFor, chaos, concurrency, seed, stdout, stderr)
	}
	if chaos {
		fmt.Fprintln(stderr, "baton bench: --chaos needs --soak")
		return 2
	}
	if insightsDB != "" {
		return benchInsights(insightsDB, data, samples, stdout, stderr)
	}
	if mcpClient != "plain" && mcpClient != "sdk" {
		fmt.Fprintf(stderr, "baton bench: --client %q: want plain or sdk\n", mcpClient)
		return 2
	}
	if fanout > 0 {
		return benchFanout(fanoutFlags{items: fanout, concurrency: concurrency, url: url, data: data, agentTok: agentTok, personTok: personTok,
			temporalAddr: temporalAddr, namespace: namespace, compression: compression}, stdout, stderr)
	}
	src, err := os.ReadFile(processFile)
	if err != nil {
		fmt.Fprintf(stderr, "baton bench: %v\n", err)
		return 1
	}
	offer := interpreter.DefaultOffer()
	offer.Profiles = []string{interpreter.ProfileParallel, interpreter.ProfileCheck}
	proc, err := interpreter.Parse(src, &interpreter.ParseOptions{Offer: &offer})
	if err != nil {
		fmt.Fprintf(stderr, "baton bench: %s: %v\n", processFile, err)
		return 1
	}
	token, err := benchTokens(data, agentTok, personTok)
	if err != nil {
		fmt.Fprintf(stderr, "baton bench: %v\n", err)
		return 1
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	o := load.Options{URL: url, Token: token, Process: proc, Runs: runs, Concurrency: concurrency, PID: pid, Samples: samples, Handed: handed, Rounds: rounds, Out: stdout, SDKClient: mcpClient == "sdk",
		Phases: strings.Split(phases, ",")}
	if temporalAddr != "" {
		// The bare comparison compresses as Baton's own clients do.
		comp, err := temporalCompression(compression, temporalAddr)
		if err != nil {
			fmt.Fprintf(stderr, "baton bench: %v\n", err)
			return 2
		}
		c, err := client.Dial(client.Options{HostPort: temporalAddr, Namespace: namespace, ConnectionOptions: client.ConnectionOptions{GrpcCompression: comp}})
		if err != nil {
			fmt.Fprintf(stderr, "baton bench: Temporal at %s: %v\n", temporalAddr, err)
			return 1
		}
		defer c.Close()
		o.Bare = &load.Bare{Client: c}
	}
	if _, err := load.Run(ctx, o); err != nil {
		fmt.Fprintf(stderr, "baton bench: %v\n", err)
		return 1
	}
	return 0
}

// benchTokens returns the bench's token source: fixed tokens by identity
// kind, or dev tokens minted for each identity.
func benchTokens(data, agentTok, personTok string) (func(drive.Who) (string, error), error) {
	if agentTok != "" || personTok != "" {
		if agentTok == "" || personTok == "" {
			return nil, errors.New("give both --agent-token and --person-token, or neither (then --data mints dev tokens)")
		}
		return func(w drive.Who) (string, error) {
			if w.Kind == interpreter.ActorAgent {
				return agentTok, nil
			}
			return personTok, nil
		}, nil
	}
	if _, err := os.Stat(filepath.Join(data, auth.DevKeyFile)); err != nil {
		return nil, fmt.Errorf("no dev key in %s (is it the --data of a baton dev?); or give --agent-token and --person-token: %w", data, err)
	}
	issuer, err := auth.LoadOrCreateDevKey(data)
	if err != nil {
		return nil, err
	}
	return func(w drive.Who) (string, error) {
		return issuer.Issue(auth.Identity{ID: w.ID, Kind: auth.Kind(w.Kind), Groups: w.Groups}, 24*time.Hour)
	}, nil
}
