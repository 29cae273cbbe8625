package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"regexp"
	"time"

	"github.com/baton-run/baton/internal/toolreg"
	"github.com/baton-run/baton/interpreter"
	"github.com/baton-run/baton/interpreter/proctest"
)

const testUsage = `usage: baton test [--json] [--run REGEXP] [--explore N] [--seed S] [PATH...]

Runs the process tests under each PATH (default .): every case of every file
named *.test.yaml, on the run machine with virtual time; no server is needed.
docs/process-tests.md describes the file format.

Prints a line per case, "ok" or "FAIL" with the test file's line:column, the
step, the action, and what was expected and what came; then the routes of
each process no case took (next choices, on_reject, on_timeout, parallel
branches, finishes), and a summary. --explore N walks N random scripts of
each process too, from the printed seed, and reports finishes never reached,
runs that cannot end and refusals an actor could not avoid.

Exit status: 0 when every case passes, 1 when any fails, 2 when a test file
or its process is invalid, or on a usage error.

Flags:
`

// runTest is "baton test".
func runTest(args []string, stdout, stderr io.Writer) int {
	fl := flag.NewFlagSet("test", flag.ContinueOnError)
	fl.SetOutput(stderr)
	asJSON := fl.Bool("json", false, "print the report as one JSON object")
	runPat := fl.String("run", "", "run only the cases whose names match this regular expression")
	explore := fl.Int("explore", 0, "walk up to N random scripts of each process")
	seed := fl.Int64("seed", 0, "seed of --explore (default: the time)")
	fl.Usage = func() {
		fmt.Fprint(stderr, testUsage)
		fl.PrintDefaults()
	}
	if err := fl.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	o := proctest.Options{Explore: *explore, Seed: *seed, Tools: func(path string) (*interpreter.ToolCatalog, error) {
		f, err := toolreg.ReadFile(path)
		if err != nil {
			return nil, err
		}
		return f.Catalog(), nil
	}}
	if o.Explore > 0 && o.Seed == 0 {
		o.Seed = time.Now().UnixNano()
	}
	if *runPat != "" {
		re, err := regexp.Compile(*runPat)
		if err != nil {
			fmt.Fprintf(stderr, "baton test: --run: %v\n", err)
			return 2
		}
		o.Run = re
	}
	paths := fl.Args()
	if len(paths) == 0 {
		paths = []string{"."}
	}
	rep, err := proctest.Run(paths, o)
	if err != nil {
		fmt.Fprintf(stderr, "baton test: %v\n", err)
		return 2
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			fmt.Fprintf(stderr, "baton test: %v\n", err)
			return 2
		}
	} else {
		rep.WriteText(stdout)
	}
	return rep.Status()
}
