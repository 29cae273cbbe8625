package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	temporaldev "github.com/baton-run/baton/temporal-dev"
	"github.com/baton-run/baton/workflows"
)

const temporalUsage = `usage: baton temporal [flags]

Runs the Temporal server that baton dev embeds as a process of its own, with
Baton's search attributes registered, until interrupted. Its state lives in
PostgreSQL (--database-url): two databases of its own, --database and
--database_visibility, created and given Temporal's SQL schema when missing,
and brought up to this server's schema version on every start. Or, with
--file, in a SQLite file.

This is for running Baton as several processes on one machine (baton worker
and baton gateway beside it: see docs/production.md, "From one process to many").
A deployment across machines runs Temporal's own server or Temporal Cloud.

Flags (flags win over environment variables, which win over defaults):
`

type temporalConfig struct {
	databaseURL, database, file, listen, namespace string
	uiPort                                         int
	retention                                      time.Duration
}

func runTemporal(args []string, stdout, stderr io.Writer) int {
	var cfg temporalConfig
	fl := flag.NewFlagSet("temporal", flag.ContinueOnError)
	fl.SetOutput(stderr)
	fl.Usage = func() { fmt.Fprint(stderr, temporalUsage); fl.PrintDefaults() }
	stringFlag(fl, &cfg.databaseURL, "database-url", "", "PostgreSQL URL of a user who may create databases (its database is where they are created from)")
	stringFlag(fl, &cfg.database, "database", temporaldev.DefaultPostgresDatabase, "name of Temporal's database in PostgreSQL; the visibility database adds _visibility")
	stringFlag(fl, &cfg.file, "file", "", "SQLite file instead of PostgreSQL")
	stringFlag(fl, &cfg.listen, "listen", "127.0.0.1:7233", "frontend address IP:PORT (the UI listens on the same IP)")
	intFlag(fl, &cfg.uiPort, "ui-port", 8233, "Temporal Web UI port; 0 for none")
	stringFlag(fl, &cfg.namespace, "namespace", temporaldev.DefaultNamespace, "namespace, created when missing")
	durationFlag(fl, &cfg.retention, "retention", temporaldev.DefaultRetention, "how long closed workflows are kept")
	if code, ok := parseCommand("temporal", fl, args, stderr); !ok {
		return code
	}
	opts, err := cfg.options()
	if err == nil && fl.NArg() > 0 {
		err = fmt.Errorf("unexpected arguments %q", fl.Args())
	}
	if err != nil {
		fmt.Fprintf(stderr, "baton temporal: %v\n", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	opts.Logger = slog.New(slog.NewTextHandler(stderr, nil))
	if err := serveTemporal(ctx, opts, stdout); err != nil {
		fmt.Fprintf(stderr, "baton temporal: %v\n", err)
		return 1
	}
	return 0
}

// options turns the flags into the server's options.
func (c *temporalConfig) options() (*temporaldev.Options, error) {
	if (c.databaseURL == "") == (c.file == "") {
		return nil, errors.New("give --database-url (PostgreSQL) or --file (SQLite)")
	}
	host, port, err := net.SplitHostPort(c.listen)
	if err != nil {
		return nil, fmt.Errorf("--listen %q: want IP:PORT", c.listen)
	}
	p, err := strconv.Atoi(port)
	if err != nil || p < 1 || p > 65535 {
		return nil, fmt.Errorf("--listen %q: want a port from 1 to 65535", c.listen)
	}
	o := &temporaldev.Options{
		DatabaseFile: c.file, IP: host, FrontendPort: p, UIPort: c.uiPort,
		Namespace: c.namespace, Retention: c.retention, SearchAttributes: workflows.SearchAttributes,
	}
	if c.databaseURL != "" {
		o.PostgresURL, o.PostgresDatabase = c.databaseURL, c.database
	}
	return o, nil
}

// serveTemporal runs the server until ctx ends.
func serveTemporal(ctx context.Context, opts *temporaldev.Options, stdout io.Writer) error {
	startCtx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	srv, err := temporaldev.Start(startCtx, opts)
	cancel()
	if err != nil {
		return err
	}
	if ui := srv.UIAddress(); ui != "" {
		fmt.Fprintf(stdout, "Temporal UI: %s\n", ui)
	}
	fmt.Fprintf(stdout, "Temporal frontend: %s (namespace %s)\n", srv.FrontendAddress(), srv.Namespace())
	<-ctx.Done()
	return srv.Stop()
}
