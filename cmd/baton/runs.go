package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/baton-run/baton/gateway/auth"
	"github.com/baton-run/baton/internal/drive"
	"github.com/baton-run/baton/internal/runs"
	"github.com/baton-run/baton/interpreter"
)

const runsUsage = `usage: baton runs [list] [flags]
       baton runs show [flags] RUN
       baton runs cancel [flags] --reason TEXT RUN

For operators at a terminal: list runs, show one run, cancel one with a
reason. Each calls Baton's own MCP tools (list_runs, get_run, cancel) at
--url as an operator, so the tools' rules apply: a run that has ended cannot
be cancelled, only an operator may cancel, and so on.

The bearer token is --token, or one minted for operator --operator from the
dev key in --data (the data folder of baton dev).

  list    runs, oldest first: --process, --state (active, waiting, ended,
          cancelled), --input KEY=VALUE (repeatable; VALUE is JSON when it
          reads as JSON, such as 48000 or true, else text), --limit
  show    one run: its state, inputs, step table, open work items and the
          history of completions
  cancel  ends the run cancelled, recording --reason and who cancelled

Flags (flags win over environment variables, which win over defaults):
`

// runsFlags are the flags every runs subcommand takes.
type runsFlags struct {
	url, token, data, operator, org string
	asJSON                          bool
}

func (r *runsFlags) register(fl *flag.FlagSet) {
	stringFlag(fl, &r.url, "url", "http://127.0.0.1:8080/mcp", "MCP endpoint")
	stringFlag(fl, &r.token, "token", "", "bearer token of an operator (instead of --data)")
	stringFlag(fl, &r.data, "data", defaultData, "data folder of baton dev, to mint an operator token")
	stringFlag(fl, &r.operator, "operator", "u_ops", "operator id a minted token names")
	stringFlag(fl, &r.org, "org", "", "organization a minted token names (default: the gateway's default organization)")
	fl.BoolVar(&r.asJSON, "json", false, "print the tool's data as JSON")
}

// client returns a client calling as the operator.
func (r *runsFlags) client() (*runs.Client, error) {
	who := drive.Who{ID: r.operator, Kind: interpreter.ActorOperator, Groups: []string{interpreter.DefaultOperators}}
	if r.token != "" {
		return runs.NewClient(r.url, who, func(drive.Who) (string, error) { return r.token, nil }, nil), nil
	}
	if _, err := os.Stat(filepath.Join(r.data, auth.DevKeyFile)); err != nil {
		return nil, fmt.Errorf("no dev key in %s (is it the --data of a baton dev?); or give --token: %w", r.data, err)
	}
	issuer, err := auth.LoadOrCreateDevKey(r.data)
	if err != nil {
		return nil, err
	}
	return runs.NewClient(r.url, who, func(w drive.Who) (string, error) {
		return issuer.Issue(auth.Identity{ID: w.ID, Kind: auth.Kind(w.Kind), Groups: w.Groups, Org: r.org}, time.Hour)
	}, nil), nil
}

// inputFlag collects --input KEY=VALUE filters.
type inputFlag map[string]any

func (f inputFlag) String() string { return fmt.Sprint(map[string]any(f)) }
func (f inputFlag) Set(v string) error {
	k, x, err := runs.ParseInput(v)
	if err != nil {
		return err
	}
	f[k] = x
	return nil
}

// runRuns is "baton runs".
func runRuns(args []string, stdout, stderr io.Writer) int {
	sub := "list"
	if len(args) > 0 && (args[0] == "list" || args[0] == "show" || args[0] == "cancel") {
		sub, args = args[0], args[1:]
	}
	var rf runsFlags
	var filter runs.Filter
	inputs := inputFlag{}
	var reason string
	fl := flag.NewFlagSet("runs "+sub, flag.ContinueOnError)
	rf.register(fl)
	switch sub {
	case "list":
		stringFlag(fl, &filter.Process, "process", "", "only runs of this process")
		stringFlag(fl, &filter.State, "state", "", "only runs in this state: active, waiting, ended or cancelled")
		fl.Var(inputs, "input", "only runs whose input KEY has VALUE (KEY=VALUE); repeatable")
		intFlag(fl, &filter.Limit, "limit", 50, "at most this many runs")
	case "cancel":
		fl.StringVar(&reason, "reason", "", "why the run is cancelled (required)")
	}
	fl.SetOutput(stderr)
	fl.Usage = func() { fmt.Fprint(stderr, runsUsage); fl.PrintDefaults() }
	pos, err := parseInterspersed(fl, args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	want := 1
	if sub == "list" {
		want = 0
	}
	if len(pos) != want {
		if want == 0 {
			fmt.Fprintf(stderr, "baton runs list: unexpected arguments %q\n", pos)
		} else {
			fmt.Fprintf(stderr, "baton runs %s: give one run id\n", sub)
		}
		return 2
	}
	if len(inputs) > 0 {
		filter.Inputs = inputs
	}

	c, err := rf.client()
	if err != nil {
		fmt.Fprintf(stderr, "baton runs %s: %v\n", sub, err)
		return 1
	}
	defer c.Close()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()

	switch sub {
	case "list":
		items, next, err := c.List(ctx, filter)
		if err == nil {
			if rf.asJSON {
				// list_runs' own shape, nextCursor naming what is left.
				var nc *string
				if next != "" {
					nc = &next
				}
				err = writeJSON(stdout, map[string]any{"items": items, "nextCursor": nc})
			} else {
				err = runs.WriteList(stdout, items)
			}
		}
		if err == nil && next != "" {
			fmt.Fprintf(stderr, "More runs match; raise --limit (now %d) to see them.\n", filter.Limit)
		}
		return runsDone(stderr, sub, err)
	case "show":
		v, err := c.Get(ctx, pos[0])
		return runsDone(stderr, sub, printView(stdout, v, err, rf.asJSON))
	default:
		v, err := c.Cancel(ctx, pos[0], reason)
		return runsDone(stderr, sub, printView(stdout, v, err, rf.asJSON))
	}
}

func printView(w io.Writer, v json.RawMessage, err error, asJSON bool) error {
	if err != nil {
		return err
	}
	if asJSON {
		return writeJSON(w, v)
	}
	return runs.WriteView(w, v)
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// runsDone reports err, a tool's refusal as the tool gave it, and returns
// the exit status.
func runsDone(stderr io.Writer, sub string, err error) int {
	if err == nil {
		return 0
	}
	var refusal *interpreter.Error
	if errors.As(err, &refusal) {
		fmt.Fprintf(stderr, "baton runs %s: refused: %v\n", sub, refusal)
		return 1
	}
	fmt.Fprintf(stderr, "baton runs %s: %v\n", sub, err)
	return 1
}

// parseInterspersed parses flags wherever they stand among the arguments
// (baton runs cancel RUN --reason TEXT) and returns the others in order.
func parseInterspersed(fl *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fl.Parse(args); err != nil {
			return nil, err
		}
		rest := fl.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}
