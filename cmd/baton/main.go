// Command baton is the Baton process server's one binary. Each subcommand
// reads its own flags; the work happens in the packages it calls.
package main

import (
	"fmt"
	"io"
	"os"
	"sort"
)

// command runs one subcommand with its arguments and returns the exit status.
type command struct {
	run     func(args []string, stdout, stderr io.Writer) int
	summary string
}

var commands = map[string]command{
	"validate":  {run: runValidate, summary: "check PROCESS.md files and print their content hashes"},
	"map":       {run: runMap, summary: "print the Mermaid flowchart of a process"},
	"test":      {run: runTest, summary: "run the process tests (*.test.yaml) on the machine, with virtual time"},
	"dev":       {run: runDev, summary: "run all of Baton in one process for development"},
	"serve":     {run: runServe, summary: "run the gateway and a worker against Temporal and PostgreSQL"},
	"gateway":   {run: runGateway, summary: "run the MCP gateway alone"},
	"worker":    {run: runWorker, summary: "run a worker alone"},
	"token":     {run: runToken, summary: "print a dev bearer token"},
	"import":    {run: runImport, summary: "import process folders as drafts"},
	"publish":   {run: runPublish, summary: "bind a draft's roles and publish it"},
	"processes": {run: runProcesses, summary: "list published processes"},
	"bench":     {run: runBench, summary: "measure a running Baton under load, against Temporal's own floor"},
	"runs":      {run: runRuns, summary: "list, show and cancel runs, as an operator"},
	"insights":  {run: runInsights, summary: "print where a process's runs wait, how long steps take and who does them"},
	"notify":    {run: runNotify, summary: "show deliveries of run events to the organizations' channels, check a channels file"},
	"migrate":   {run: runMigrate, summary: "apply the schema migrations to PostgreSQL, before a rollout"},
	"temporal":  {run: runTemporal, summary: "run Temporal alone on PostgreSQL, beside baton worker and gateway processes"},
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run dispatches to a subcommand: 0 success, 1 failure, 2 usage error.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return 2
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		usage(stdout)
		return 0
	}
	cmd, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "baton: unknown command %q\n", args[0])
		usage(stderr)
		return 2
	}
	return cmd.run(args[1:], stdout, stderr)
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: baton <command> [flags] [arguments]")
	fmt.Fprintln(w, "\ncommands:")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-10s %s\n", n, commands[n].summary)
	}
	fmt.Fprintln(w, "\nRun 'baton <command> -h' for a command's flags.")
}
