package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/baton-run/baton/internal/store"
)

const migrateUsage = `usage: baton migrate [flags]

Applies Baton's schema migrations to the PostgreSQL of --database-url and
exits: run it once before rolling out a new version. serve, gateway, worker
and dev also apply them at start. Processes starting together against an
empty database are safe: each migration runs once, under an advisory lock.

Flags (flags win over environment variables, which win over defaults):
`

func runMigrate(args []string, stdout, stderr io.Writer) int {
	var url string
	fl := flag.NewFlagSet("migrate", flag.ContinueOnError)
	fl.SetOutput(stderr)
	fl.Usage = func() { fmt.Fprint(stderr, migrateUsage); fl.PrintDefaults() }
	stringFlag(fl, &url, "database-url", "", "PostgreSQL URL (required)")
	if code, ok := parseCommand("migrate", fl, args, stderr); !ok {
		return code
	}
	if url == "" || fl.NArg() > 0 {
		fmt.Fprintln(stderr, "baton migrate: give --database-url and no arguments")
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	st, err := store.Open(ctx, url)
	if err != nil {
		fmt.Fprintf(stderr, "baton migrate: %v\n", err)
		return 1
	}
	defer st.Close()
	applied, err := st.Migrate(ctx)
	if err != nil {
		fmt.Fprintf(stderr, "baton migrate: %v\n", err)
		return 1
	}
	ms, err := store.Migrations()
	if err != nil {
		fmt.Fprintf(stderr, "baton migrate: %v\n", err)
		return 1
	}
	for _, v := range applied {
		fmt.Fprintf(stdout, "Applied %s\n", ms[v-1].Name)
	}
	fmt.Fprintf(stdout, "Schema at version %d\n", len(ms))
	return 0
}
