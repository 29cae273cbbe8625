package main

import (
	"context"
	"crypto/x509"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/baton-run/baton/gateway"
	"github.com/baton-run/baton/gateway/auth"
	"github.com/baton-run/baton/gateway/inbox"
	"github.com/baton-run/baton/gateway/oauth"
	"github.com/baton-run/baton/internal/devpg"
	"github.com/baton-run/baton/internal/telemetry"
	"github.com/baton-run/baton/interpreter"
	temporaldev "github.com/baton-run/baton/temporal-dev"
	"github.com/baton-run/baton/workflows"
)

const devUsage = `usage: baton dev [flags]

Runs all of Baton in one process, for development: an embedded Temporal server
with its Web UI, a private PostgreSQL (or --database-url), the worker and the
MCP gateway, all on loopback, with an OAuth authorization server on the
gateway's listener (under /oauth) where MCP clients sign in (pick an agent,
person or operator; no password), so a client needs the MCP URL alone. State
lives in --data and survives restarts. Process folders given with --processes
are published at start, each role bound to the group of the same name unless
--role says otherwise. Prints the MCP URL, the web inbox URL (people and
operators sign in there as on the sign-in page), the sign-in URL, the metrics
URL, the Temporal UI URL and dev tokens for an agent, a person and an
operator. Ctrl-C stops it. With --listen beyond loopback the password-less
sign-in (inbox and OAuth) is off: the printed tokens still work.

The gateway listens on 127.0.0.1:8080, Temporal on 7233 and its UI on 8233
by default; a default port that is taken gives way to a free one, and baton
dev says so. A port named by a flag must be free. Another baton dev needs
only its own --data (each working folder has its own .baton).

Flags (flags win over environment variables, which win over defaults):
`

type devConfig struct {
	runtimeConfig
	data, databaseURL               string
	temporalStore, temporalDatabase string
	temporalPort, uiPort            int
	processes                       listFlag
	roles                           roleFlag
	// ports records which fixed ports were named and which defaults gave
	// way to free ones.
	ports devPorts
	// clientMetadataRoots verify the servers of client ID metadata
	// documents; nil means the system's. Not a flag: tests set it.
	clientMetadataRoots *x509.CertPool
}

// devFlags registers baton dev's flags on fl, into cfg.
func devFlags(fl *flag.FlagSet, cfg *devConfig) {
	cfg.roles = roleFlag{}
	cfg.runtimeConfig.flags(fl, runtimeFlags{gateway: true, worker: true, evaluator: "unsure", opsListen: "127.0.0.1:0"})
	stringFlag(fl, &cfg.data, "data", defaultData, "data folder: PostgreSQL (Baton's and Temporal's), keys, Temporal's SQLite file with --temporal-store sqlite")
	stringFlag(fl, &cfg.temporalStore, "temporal-store", "", "where Temporal keeps its state: postgres (databases --temporal-database and --temporal-database_visibility beside Baton's) or sqlite (DATA/temporal.db); default postgres, or sqlite for a data folder that has a temporal.db")
	stringFlag(fl, &cfg.temporalDatabase, "temporal-database", temporaldev.DefaultPostgresDatabase, "Temporal's database with --temporal-store postgres; two baton dev sharing one --database-url server need one each")
	stringFlag(fl, &cfg.databaseURL, "database-url", "", "use this PostgreSQL instead of a private one")
	intFlag(fl, &cfg.temporalPort, "temporal-port", defaultDevTemporalPort, "Temporal frontend port; 0 for a free one (the default gives way to one when taken)")
	intFlag(fl, &cfg.uiPort, "ui-port", defaultDevUIPort, "Temporal Web UI port; -1 for a free one, 0 for none (the default gives way to a free one when taken)")
	fl.Var(&cfg.processes, "processes", "[ORG=]DIR: process folder (or folder of process folders) to publish into organization ORG (default --org); repeatable")
	fl.Var(cfg.roles, "role", "bind ROLE=GROUP when publishing; repeatable")
}

func runDev(args []string, stdout, stderr io.Writer) int {
	var cfg devConfig
	fl := flag.NewFlagSet("dev", flag.ContinueOnError)
	fl.SetOutput(stderr)
	fl.Usage = func() { fmt.Fprint(stderr, devUsage); fl.PrintDefaults() }
	devFlags(fl, &cfg)
	if code, ok := parseCommand("dev", fl, args, stderr); !ok {
		return code
	}
	if fl.NArg() > 0 {
		fmt.Fprintf(stderr, "baton dev: unexpected arguments %q\n", fl.Args())
		return 2
	}
	cfg.ports.given = givenFlags(fl)
	if _, err := temporalStore(cfg.temporalStore, ""); err != nil {
		fmt.Fprintf(stderr, "baton dev: %v\n", err)
		return 2
	}
	if err := cfg.check(true); err != nil {
		fmt.Fprintf(stderr, "baton dev: %v\n", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	log, err := cfg.logger(stderr)
	if err != nil {
		fmt.Fprintf(stderr, "baton dev: %v\n", err)
		return 2
	}
	if err := dev(ctx, cfg, stdout, log); err != nil {
		fmt.Fprintf(stderr, "baton dev: %v\n", err)
		return 1
	}
	return 0
}

// oauthPath is where baton dev serves its authorization server, on the
// gateway's listener: the issuer is BASE-URL/oauth.
const oauthPath = "/oauth"

func dev(ctx context.Context, cfg devConfig, stdout io.Writer, log *slog.Logger) error {
	network := beyondLoopback(cfg.listen)
	if network {
		log.Warn("BATON DEV IS REACHABLE BEYOND THIS MACHINE: --listen " + cfg.listen + " is not a loopback address. " +
			"baton dev prints 30-day bearer tokens in the clear, takes uploads and serves files to whoever can reach it, " +
			"and has no TLS. Use --listen 127.0.0.1:8080 unless you mean it; run 'baton serve' for real use.")
		log.Warn(devSignInOff(cfg.listen))
	}
	data, err := filepath.Abs(cfg.data)
	if err != nil {
		return err
	}
	store, err := temporalStore(cfg.temporalStore, data)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(data, 0o755); err != nil {
		return fmt.Errorf("create data folder: %w", err)
	}
	unlockData, err := lockData(data)
	if err != nil {
		return err
	}
	defer unlockData()
	if err := cfg.ports.resolve(&cfg); err != nil {
		return err
	}

	obs, err := cfg.observe(ctx, log)
	if err != nil {
		return err
	}
	defer obs.stop()

	dbURL := cfg.databaseURL
	if dbURL == "" {
		// Waits while a command given --data (import, publish, processes) has it open.
		pg, err := devpg.Start(ctx, data, &devpg.Options{Logger: log})
		if err != nil {
			return fmt.Errorf("start PostgreSQL (or pass --database-url): %w", err)
		}
		defer pg.Stop()
		dbURL = pg.URL()
	}

	topts := &temporaldev.Options{
		SearchAttributes: workflows.SearchAttributes,
		FrontendPort:     cfg.temporalPort,
		UIPort:           cfg.uiPort,
		Logger:           log,
	}
	if store == storePostgres {
		topts.PostgresURL, topts.PostgresDatabase = dbURL, cfg.temporalDatabase
	} else {
		topts.DatabaseFile = filepath.Join(data, sqliteFile)
	}
	// Before the server: it starts workers of its own, and the first
	// worker in a process fixes the size of the cache they all share.
	sizeWorkflowCache(cfg.workflowCache)
	tsrv, err := cfg.startTemporal(ctx, topts, log)
	if err != nil {
		return fmt.Errorf("start Temporal: %w", err)
	}
	defer func() { _ = tsrv.Stop() }()
	// Uncompressed, as the embedded server's clients are (NewClient).
	copts := client.Options{DataConverter: workflows.DataConverter}
	if err := telemetry.Temporal(&copts, obs.metrics, obs.tracing); err != nil {
		return err
	}
	c, err := tsrv.NewClient(ctx, copts)
	if err != nil {
		return err
	}
	defer c.Close()

	ln, err := cfg.ports.listen(&cfg)
	if err != nil {
		return err
	}
	defer ln.Close()
	baseURL := listenURL(cfg.listen, ln)
	issuer, err := auth.LoadOrCreateDevKey(data)
	if err != nil {
		return err
	}
	key, err := secret(filepath.Join(data, "secret.key"))
	if err != nil {
		return err
	}
	resource := baseURL + "/mcp"
	// The dev sign-in has no password: on loopback only.
	asURL, inboxURL := baseURL+oauthPath, baseURL+inbox.Path
	var authServers []string
	if network {
		asURL, inboxURL = "", ""
	} else {
		authServers = []string{asURL}
	}
	// Tokens of 'baton token' and those the authorization server issues
	// for this gateway's MCP URL pass; those for another resource do not.
	s, err := cfg.startStack(ctx, stackOptions{
		dbURL: dbURL, temporal: c, taskQueue: workflows.DefaultTaskQueue, gateway: true, worker: true,
		baseURL: baseURL, verifier: issuer.VerifierFor(resource), secret: key, authServers: authServers,
		inboxURL: inboxURL, notifyURL: inboxURL,
	}, obs, log, stdout)
	if err != nil {
		return err
	}
	defer s.close()
	g := s.gateway
	groups := map[string]bool{interpreter.DefaultOperators: true}
	for _, v := range cfg.processes {
		org, dir := orgPath(v, cfg.org)
		reg := gateway.NewRegistry(s.store, org, g.Offer())
		folders, err := processFolders(dir)
		if err != nil {
			return err
		}
		// Each child before the processes that run it (baton-subprocess-1).
		for _, f := range reg.ImportAndPublishFolders(ctx, folders, "baton-dev", cfg.roles) {
			pv, d, err := f.Version, f.Draft, f.Err
			if err != nil {
				// One process this server cannot run does not stop the rest.
				fmt.Fprintf(stdout, "Not published %s: %v\n", f.Dir, err)
				continue
			}
			for _, g := range pv.Roles {
				groups[g] = true
			}
			fmt.Fprintf(stdout, "Published %s v%d (sha256:%s)", pv.Name, pv.Version, pv.Hash)
			if org != cfg.org {
				fmt.Fprintf(stdout, " in %s", org)
			}
			if d.Process.Requires != nil {
				fmt.Fprintf(stdout, "; it requires systems: %s", strings.Join(d.Process.Requires.Systems, ", "))
			}
			fmt.Fprintln(stdout)
		}
	}

	var gs []string
	for grp := range groups {
		gs = append(gs, grp)
	}
	sort.Strings(gs)
	if network {
		off := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			http.Error(w, devSignInOff(cfg.listen), http.StatusForbidden)
		})
		g.Mount(inbox.Path, off)
		g.Mount(oauthPath+"/", off)
	} else {
		in, err := inbox.New(g, &inbox.Options{BaseURL: baseURL, Secret: key, DevSignIn: true, Groups: gs, Logger: log, Org: cfg.org})
		if err != nil {
			return err
		}
		g.Mount(inbox.Path, in.Handler())
		as, err := oauth.New(issuer, &oauth.Options{
			Issuer: asURL, Resource: resource, StateFile: filepath.Join(data, oauthStateFile),
			Groups: gs, Logger: log, DefaultOrg: cfg.org,
			// Clients on this machine may serve their metadata documents
			// on loopback.
			LoopbackClientMetadata: true, ClientMetadataRoots: cfg.clientMetadataRoots,
		})
		if err != nil {
			return err
		}
		for _, p := range as.Patterns() {
			g.Mount(p, as.Handler())
		}
	}
	return s.serve(ctx, ln, func() {
		agentTok, _ := issuer.Issue(auth.Identity{ID: "a_dev", Kind: auth.KindAgent}, 30*24*time.Hour)
		personTok, _ := issuer.Issue(auth.Identity{ID: "dev@example.com", Kind: auth.KindPerson, Groups: gs}, 30*24*time.Hour)
		opTok, _ := issuer.Issue(auth.Identity{ID: "u_ops", Kind: auth.KindOperator, Groups: []string{interpreter.DefaultOperators}}, 30*24*time.Hour)
		cfg.ports.print(stdout, baseURL, tsrv.FrontendAddress(), tsrv.UIAddress())
		fmt.Fprintf(stdout, "Check evaluator: %s\n", cfg.evaluator.describe())
		fmt.Fprintf(stdout, "Temporal UI: %s\n", tsrv.UIAddress())
		fmt.Fprintf(stdout, "Temporal frontend: %s (namespace %s, state in %s)\n", tsrv.FrontendAddress(), tsrv.Namespace(), store)
		fmt.Fprintf(stdout, "Dev tokens (30 days; more with 'baton token --data %s'):\n", cfg.data)
		fmt.Fprintf(stdout, "  agent a_dev:             %s\n", agentTok)
		fmt.Fprintf(stdout, "  person dev@example.com:  %s\n", personTok)
		fmt.Fprintf(stdout, "  operator u_ops:          %s\n", opTok)
		if obs.metricsURL != "" {
			fmt.Fprintf(stdout, "Metrics: %s\n", obs.metricsURL)
		}
		if network {
			fmt.Fprintf(stdout, "Dev sign-in: off (%s); use the tokens above\n", "--listen "+cfg.listen+" reaches beyond this machine")
		} else {
			fmt.Fprintf(stdout, "OAuth sign-in: %s (MCP clients need only the MCP URL)\n", asURL)
			fmt.Fprintf(stdout, "Inbox: %s (people and operators sign in here)\n", inboxURL)
		}
		fmt.Fprintf(stdout, "MCP: %s\n", resource)
	})
}

// startTemporal starts baton dev's Temporal server on the ports of topts.
// While a default port is in play, this user's baton dev processes take
// turns (portsLock), and a default taken since it was checked gives way
// to a free port.
func (cfg *devConfig) startTemporal(ctx context.Context, topts *temporaldev.Options, log *slog.Logger) (*temporaldev.Server, error) {
	if cfg.ports.defaultsInPlay(cfg) {
		unlock := portsLock(func(msg string) { log.Info(msg) })
		defer unlock()
		if err := cfg.ports.resolve(cfg); err != nil {
			return nil, err
		}
		topts.FrontendPort, topts.UIPort = cfg.temporalPort, cfg.uiPort
	}
	tsrv, err := temporaldev.Start(ctx, topts)
	if cfg.ports.temporalTaken(cfg, err) {
		topts.FrontendPort, topts.UIPort = cfg.temporalPort, cfg.uiPort
		tsrv, err = temporaldev.Start(ctx, topts)
	}
	return tsrv, err
}

// devSignInOff says why baton dev offers no sign-in.
func devSignInOff(listen string) string {
	return "The dev sign-in (web inbox and OAuth) is off: baton dev listens on " + listen +
		", beyond this machine, and its sign-in has no password, so anyone who reaches it could act as any person or operator. " +
		"Listen on 127.0.0.1 to sign in, or run 'baton serve' with an identity provider."
}

// Where baton dev's Temporal keeps its state (--temporal-store).
const (
	storePostgres = "postgres"
	storeSQLite   = "sqlite"
	// sqliteFile, in the data folder, is Temporal's SQLite database.
	sqliteFile = "temporal.db"
)

// temporalStore resolves --temporal-store: as given, else PostgreSQL,
// which takes Temporal's writes in parallel (measured faster under load),
// unless the data folder already keeps Temporal's state in SQLite: its
// runs stay where they are.
func temporalStore(flag, data string) (string, error) {
	switch flag {
	case storePostgres, storeSQLite:
		return flag, nil
	case "":
		if _, err := os.Stat(filepath.Join(data, sqliteFile)); err == nil {
			return storeSQLite, nil
		}
		return storePostgres, nil
	}
	return "", fmt.Errorf("--temporal-store %q: want postgres or sqlite", flag)
}

// oauthStateFile, in the data folder, keeps the clients registered with the
// authorization server and their refresh tokens.
const oauthStateFile = "oauth-state.json"

// listenURL is the http URL of a listener opened for addr: its host as
// given (127.0.0.1 when empty or unspecified), its port as bound.
func listenURL(addr string, ln net.Listener) string {
	host, _, err := net.SplitHostPort(addr)
	if ip := net.ParseIP(host); err != nil || host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "127.0.0.1"
	}
	port := "0"
	if a, ok := ln.Addr().(*net.TCPAddr); ok {
		port = strconv.Itoa(a.Port)
	}
	return "http://" + net.JoinHostPort(host, port)
}

// beyondLoopback reports whether a listen address reaches beyond this
// machine: every interface (no host, 0.0.0.0, ::), or any host other than
// localhost and loopback addresses.
func beyondLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false // net.Listen refuses it
	}
	if host == "localhost" {
		return false
	}
	ip := net.ParseIP(host)
	return ip == nil || !ip.IsLoopback()
}

// processFolders returns dir itself when it holds a PROCESS.md, else its
// subfolders that do.
func processFolders(dir string) ([]string, error) {
	if _, err := os.Stat(filepath.Join(dir, "PROCESS.md")); err == nil {
		return []string{dir}, nil
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("read process folder: %w", err)
	}
	var out []string
	for _, e := range entries {
		if _, err := os.Stat(filepath.Join(dir, e.Name(), "PROCESS.md")); e.IsDir() && err == nil {
			out = append(out, filepath.Join(dir, e.Name()))
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s holds no PROCESS.md", dir)
	}
	return out, nil
}
