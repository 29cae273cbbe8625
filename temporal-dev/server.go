package temporaldev

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	enums "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/namespace/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"
	"go.temporal.io/server/common/authorization"
	"go.temporal.io/server/common/cluster"
	"go.temporal.io/server/common/config"
	"go.temporal.io/server/common/dynamicconfig"
	"go.temporal.io/server/common/membership/static"
	sqliteplugin "go.temporal.io/server/common/persistence/sql/sqlplugin/sqlite"
	"go.temporal.io/server/common/primitives"
	sqliteschema "go.temporal.io/server/schema/sqlite"
	"go.temporal.io/server/temporal"
	"google.golang.org/protobuf/types/known/durationpb"
)

// FreePort, as Options.UIPort, serves the UI on a port the system picks.
const FreePort = -1

// Defaults for Options.
const (
	DefaultIP        = "127.0.0.1"
	DefaultNamespace = "default"
	DefaultRetention = 7 * 24 * time.Hour
)

// MinRetention is the shortest Options.Retention the server accepts for a
// local namespace.
const MinRetention = time.Hour

// readyTimeout bounds the wait for a started server to answer, when the
// context given to Start has no deadline of its own.
const readyTimeout = 30 * time.Second

// clusterName is the name of the one cluster a dev server runs.
const clusterName = "active"

// Options configure a server. The zero value (or nil) is an in-memory server
// on a free loopback port, without UI, with namespace "default".
type Options struct {
	// DatabaseFile is the SQLite file that holds the server's state. It is
	// created, with the schema, when it does not exist; its folder must.
	// Default "": the state lives in memory, under a name unique to this
	// server, and is gone when the process ends (unless PostgresURL is set).
	DatabaseFile string

	// PostgresURL, when set, keeps the server's state in PostgreSQL instead
	// of SQLite: a postgres://USER[:PASSWORD]@HOST:PORT[/DATABASE][?PARAMS]
	// URL. The server uses two databases of its own, PostgresDatabase and
	// PostgresDatabase + "_visibility", created from DATABASE (default
	// "postgres") when missing, with Temporal's SQL schema set up in a new
	// one and updated to this server's version on every start. Unlike
	// SQLite's one connection, PostgreSQL takes the server's writes in
	// parallel, and several processes may use one PostgreSQL in turn.
	// Excludes DatabaseFile. Default "": SQLite.
	PostgresURL string

	// PostgresDatabase names the databases of a server on PostgresURL.
	// Default DefaultPostgresDatabase ("temporal", so "temporal" and
	// "temporal_visibility"). Letters, digits and underscores, at most 52.
	PostgresDatabase string

	// IP is the address the frontend and the UI listen on. Default
	// "127.0.0.1". The server's internal services always listen on loopback.
	IP string

	// FrontendPort is the frontend's gRPC port. Default 0 (or FreePort): a
	// free port, see Server.FrontendAddress.
	FrontendPort int

	// UIPort is the Temporal Web UI's HTTP port. Default 0: no UI. FreePort
	// (-1): a free port, see Server.UIAddress. `baton dev` uses 8233.
	UIPort int

	// Namespace is created if missing. Default "default".
	Namespace string

	// SearchAttributes are registered in the namespace on every start
	// (Baton's are workflows.SearchAttributes). Default none. SQLite allows
	// per namespace at most 10 Keyword, 3 KeywordList and 3 of each other
	// type.
	SearchAttributes map[string]enums.IndexedValueType

	// Retention is how long closed workflows stay in the namespace; an
	// existing namespace is updated to it. Default DefaultRetention (7 days),
	// so finished runs stay visible in the UI. At least MinRetention.
	Retention time.Duration

	// Logger receives the server's errors (never its chatter) and one line per
	// start and stop, and is the default logger of clients from
	// Server.NewClient. Default nil: nothing is logged.
	Logger *slog.Logger

	// SuggestContinueAsNew is the length of a workflow's history, in events,
	// from which the server suggests that it continue as new. Default 0:
	// Temporal's own, 4096. Tests set it low to make runs continue as new.
	SuggestContinueAsNew int
}

// Server is a running Temporal server. Its methods are safe for concurrent
// use.
type Server struct {
	srv       temporal.Server
	srvLogger *serverLogger
	ui        *webUI // nil without UI
	frontend  string
	namespace string
	logger    *slog.Logger // never nil

	stopOnce sync.Once
	stopErr  error
}

// Start starts a Temporal server and returns once it serves the namespace
// with its search attributes registered, and the UI (if any) answers. ctx
// bounds the start (30 seconds if it has no deadline); the server runs until
// Stop. Nil opts means defaults.
func Start(ctx context.Context, opts *Options) (*Server, error) {
	begin := time.Now()
	o, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	attrs, err := searchAttributes(o.SearchAttributes)
	if err != nil {
		return nil, err
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, readyTimeout)
		defer cancel()
	}

	host := dialHost(o.IP)
	pickFrontend := o.FrontendPort == 0 || o.FrontendPort == FreePort
	if !pickFrontend {
		if err := checkPortFree(net.JoinHostPort(o.IP, strconv.Itoa(o.FrontendPort))); err != nil {
			return nil, fmt.Errorf("temporaldev: Options.FrontendPort: %w", err)
		}
	}
	uiPort := o.UIPort
	switch {
	case uiPort == FreePort:
		ports, err := freePorts(o.IP, 1)
		if err != nil {
			return nil, fmt.Errorf("temporaldev: pick a UI port: %w", err)
		}
		uiPort = ports[0]
	case uiPort > 0:
		if err := checkPortFree(net.JoinHostPort(o.IP, strconv.Itoa(uiPort))); err != nil {
			return nil, fmt.Errorf("temporaldev: Options.UIPort: %w", err)
		}
	}
	logger := o.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	srvLogger := newServerLogger(o.Logger)
	persistence, where, err := prepareStore(o, attrs, srvLogger)
	if err != nil {
		return nil, err
	}
	// A port picked free can be taken before the server binds it (by
	// another server starting, or as the local port of any outgoing
	// connection): then the server starts again on other ports.
	var srv temporal.Server
	var frontend string
	for attempt := 1; ; attempt++ {
		frontendPort := o.FrontendPort
		if pickFrontend {
			ports, err := pickPorts(o.IP, 1)
			if err != nil {
				return nil, fmt.Errorf("temporaldev: pick a frontend port: %w", err)
			}
			frontendPort = ports[0]
		}
		internal, err := pickPorts("127.0.0.1", 3)
		if err != nil {
			return nil, fmt.Errorf("temporaldev: pick ports for internal services: %w", err)
		}
		frontend = net.JoinHostPort(host, strconv.Itoa(frontendPort))
		conf := serverConfig(o.IP, frontendPort, frontend, internal, persistence)
		srv, err = newServer(conf, frontend, internal, srvLogger, o.SuggestContinueAsNew)
		if err == nil {
			if err = guard(srv.Start); err != nil {
				srvLogger.quiet.Store(true)
				_ = guard(srv.Stop)
				srvLogger.quiet.Store(false)
				err = fmt.Errorf("temporaldev: start the server: %w", err)
			}
		}
		if err == nil {
			break
		}
		if attempt == startAttempts || !strings.Contains(err.Error(), "address already in use") {
			return nil, err
		}
		logger.Warn("temporal dev server: a port was taken while it started; starting again on others", "error", err)
	}

	s := &Server{srv: srv, srvLogger: srvLogger, frontend: frontend, namespace: o.Namespace, logger: logger}
	if err := s.ready(ctx, o, attrs); err != nil {
		_ = s.Stop()
		return nil, err
	}
	if uiPort != 0 {
		ui, err := startUI(ctx, o.IP, uiPort, frontend, o.Namespace)
		if err != nil {
			_ = s.Stop()
			return nil, err
		}
		s.ui = ui
	}
	logger.Info("temporal dev server started", "frontend", frontend, "ui", s.UIAddress(),
		"namespace", o.Namespace, "database", where, "took", time.Since(begin).Round(time.Millisecond))
	return s, nil
}

// withDefaults returns a copy of o with defaults filled in, or an error that
// names the field at fault.
func (o *Options) withDefaults() (Options, error) {
	var d Options
	if o != nil {
		d = *o
	}
	if d.IP == "" {
		d.IP = DefaultIP
	}
	if net.ParseIP(d.IP) == nil {
		return d, fmt.Errorf("temporaldev: Options.IP %q is not an IP address", d.IP)
	}
	if d.Namespace == "" {
		d.Namespace = DefaultNamespace
	}
	if d.Retention == 0 {
		d.Retention = DefaultRetention
	}
	if d.Retention < MinRetention {
		return d, fmt.Errorf("temporaldev: Options.Retention %s is below the minimum of %s", d.Retention, MinRetention)
	}
	if d.FrontendPort < FreePort || d.FrontendPort > 65535 {
		return d, fmt.Errorf("temporaldev: Options.FrontendPort %d is not a port (0 or -1 for a free one, else 1 to 65535)", d.FrontendPort)
	}
	if d.UIPort < FreePort || d.UIPort > 65535 {
		return d, fmt.Errorf("temporaldev: Options.UIPort %d is not a port (0 for no UI, -1 for a free one, else 1 to 65535)", d.UIPort)
	}
	if d.UIPort > 0 && d.UIPort == d.FrontendPort {
		return d, fmt.Errorf("temporaldev: Options.UIPort and Options.FrontendPort are both %d", d.UIPort)
	}
	if d.PostgresURL == "" {
		if d.PostgresDatabase != "" {
			return d, errors.New("temporaldev: Options.PostgresDatabase is set but Options.PostgresURL is not")
		}
		return d, nil
	}
	if d.DatabaseFile != "" {
		return d, errors.New("temporaldev: Options.DatabaseFile and Options.PostgresURL are both set; give one")
	}
	if d.PostgresDatabase == "" {
		d.PostgresDatabase = DefaultPostgresDatabase
	}
	if !validDatabaseName(d.PostgresDatabase) {
		return d, fmt.Errorf("temporaldev: Options.PostgresDatabase %q: use letters, digits and underscores, at most %d, starting with a letter", d.PostgresDatabase, maxDatabaseName)
	}
	return d, nil
}

// maxDatabaseName leaves room for the visibility database's suffix within
// PostgreSQL's 63 bytes.
const maxDatabaseName = 63 - len(visibilitySuffix)

func validDatabaseName(name string) bool {
	if name == "" || len(name) > maxDatabaseName {
		return false
	}
	for i, r := range name {
		letter := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z'
		if !letter && (i == 0 || r != '_' && (r < '0' || r > '9')) {
			return false
		}
	}
	return true
}

// prepareStore readies the store the options name, PostgreSQL or SQLite,
// and returns the server's persistence configuration and, for the log,
// where the state lives.
func prepareStore(o Options, attrs map[string]enums.IndexedValueType, logger *serverLogger) (config.Persistence, string, error) {
	if o.PostgresURL != "" {
		main, vis, err := preparePostgres(o, attrs, logger)
		if err != nil {
			return config.Persistence{}, "", err
		}
		const mainStore, visStore = "postgres-default", "postgres-visibility"
		return config.Persistence{
			DefaultStore:     mainStore,
			VisibilityStore:  visStore,
			NumHistoryShards: postgresHistoryShards,
			DataStores:       map[string]config.DataStore{mainStore: {SQL: main}, visStore: {SQL: vis}},
		}, fmt.Sprintf("PostgreSQL %s, databases %s and %s", main.ConnectAddr, main.DatabaseName, vis.DatabaseName), nil
	}
	sqlConf, err := prepareDatabase(o.DatabaseFile, o.Namespace, o.Retention, attrs)
	if err != nil {
		return config.Persistence{}, "", err
	}
	const store = "sqlite-default"
	where := o.DatabaseFile
	if where == "" {
		where = "(memory)"
	}
	return config.Persistence{
		DefaultStore:     store,
		VisibilityStore:  store,
		NumHistoryShards: 1,
		DataStores:       map[string]config.DataStore{store: {SQL: sqlConf}},
	}, where, nil
}

// prepareDatabase returns the SQLite configuration, creating the schema for a
// new file, and the namespace (with its search attributes and retention) when
// it does not exist yet.
func prepareDatabase(file, ns string, retention time.Duration, attrs map[string]enums.IndexedValueType) (*config.SQL, error) {
	sqlConf := &config.SQL{PluginName: sqliteplugin.PluginName}
	if file == "" {
		// The plugin creates the schema of an in-memory database itself and
		// keeps it open for the life of the process.
		sqlConf.DatabaseName = "baton-dev-" + randomHex(8)
		sqlConf.ConnectAttributes = map[string]string{"mode": "memory", "cache": "shared"}
	} else {
		abs, err := filepath.Abs(file)
		if err != nil {
			return nil, fmt.Errorf("temporaldev: Options.DatabaseFile %q: %w", file, err)
		}
		sqlConf.DatabaseName = abs
		sqlConf.ConnectAttributes = map[string]string{"mode": "rwc"}
		switch _, err := os.Stat(abs); {
		case errors.Is(err, os.ErrNotExist):
			dir := filepath.Dir(abs)
			if st, err := os.Stat(dir); err != nil || !st.IsDir() {
				return nil, fmt.Errorf("temporaldev: Options.DatabaseFile %q: folder %q does not exist; create it first", file, dir)
			}
			if err := sqliteschema.SetupSchema(sqlConf); err != nil {
				return nil, fmt.Errorf("temporaldev: create the schema in %q: %w", abs, err)
			}
		case err != nil:
			return nil, fmt.Errorf("temporaldev: Options.DatabaseFile %q: %w", file, err)
		}
	}
	if err := createNamespace(sqlConf, ns, retention, attrs); err != nil {
		return nil, err
	}
	return sqlConf, nil
}

// createNamespace writes the namespace, with its search attributes and
// retention, into the store's database when it has no namespace of that
// name, so the server serves it from its first moment. (The function the
// server module offers for this lives in its SQLite package but writes
// through any SQL plugin.)
func createNamespace(sqlConf *config.SQL, ns string, retention time.Duration, attrs map[string]enums.IndexedValueType) error {
	nsConf, err := sqliteschema.NewNamespaceConfig(clusterName, ns, false, attrs)
	if err != nil {
		return fmt.Errorf("temporaldev: namespace %q: %w", ns, err)
	}
	nsConf.Detail.Config.Retention = durationpb.New(retention)
	if err := sqliteschema.CreateNamespaces(sqlConf, nsConf); err != nil {
		return fmt.Errorf("temporaldev: create namespace %q in %s: %w", ns, sqlConf.DatabaseName, err)
	}
	return nil
}

// serverConfig is the static configuration of a single-host server: the
// frontend on ip:frontendPort, history, matching and worker on loopback.
func serverConfig(ip string, frontendPort int, frontend string, internal []int, persistence config.Persistence) *config.Config {
	loopback := func(port int) config.Service {
		return config.Service{RPC: config.RPC{GRPCPort: port, BindOnLocalHost: true}}
	}
	return &config.Config{
		Global: config.Global{
			Membership: config.Membership{MaxJoinDuration: 30 * time.Second, BroadcastAddress: "127.0.0.1"},
		},
		Persistence: persistence,
		ClusterMetadata: &cluster.Config{
			EnableGlobalNamespace:    false,
			FailoverVersionIncrement: 10,
			MasterClusterName:        clusterName,
			CurrentClusterName:       clusterName,
			ClusterInformation: map[string]cluster.ClusterInformation{
				clusterName: {Enabled: true, InitialFailoverVersion: 1, RPCAddress: frontend},
			},
		},
		DCRedirectionPolicy: config.DCRedirectionPolicy{Policy: "noop"},
		Services: map[string]config.Service{
			string(primitives.FrontendService): {RPC: config.RPC{GRPCPort: frontendPort, BindOnIP: ip}},
			string(primitives.HistoryService):  loopback(internal[0]),
			string(primitives.MatchingService): loopback(internal[1]),
			string(primitives.WorkerService):   loopback(internal[2]),
		},
		Archival: config.Archival{
			History:    config.HistoryArchival{State: "disabled"},
			Visibility: config.VisibilityArchival{State: "disabled"},
		},
		NamespaceDefaults: config.NamespaceDefaults{Archival: config.ArchivalNamespaceDefaults{
			History:    config.HistoryArchivalNamespaceDefaults{State: "disabled"},
			Visibility: config.VisibilityArchivalNamespaceDefaults{State: "disabled"},
		}},
		PublicClient: config.PublicClient{HostPort: frontend},
	}
}

// dynamicConfig is what `temporal server start-dev` sets, less one: limits
// sized for one host, and Nexus endpoints read afresh.
//
// The search-attribute cache is not refreshed on every read. On SQL
// visibility (SQLite and PostgreSQL) an added search attribute is an alias
// in the namespace's record onto a column that exists from the start, so
// the cluster metadata that cache holds never changes; refreshing it read
// that metadata from the database on every search-attribute lookup, each
// start and upsert of every run: 6% of baton dev's CPU and one query each,
// at 32 clients at once.
//
// Its history cache of 8096 runs stays: 2000 saved 140 MB with 10,000 open
// runs but walked runs about 10% slower (docs/design.md, "Memory").
func dynamicConfig(suggestContinueAsNew int) dynamicconfig.StaticClient {
	dc := dynamicconfig.StaticClient{
		dynamicconfig.ForceNexusEndpointRefreshOnRead.Key():              true,
		dynamicconfig.FrontendPersistenceMaxQPS.Key():                    10000,
		dynamicconfig.HistoryPersistenceMaxQPS.Key():                     45000,
		dynamicconfig.HistoryCacheHostLevelMaxSize.Key():                 8096,
		dynamicconfig.FrontendMaxNamespaceVisibilityRPSPerInstance.Key(): 100,
	}
	if suggestContinueAsNew > 0 {
		dc[dynamicconfig.HistoryCountSuggestContinueAsNew.Key()] = suggestContinueAsNew
	}
	return dc
}

func newServer(conf *config.Config, frontend string, internal []int, logger *serverLogger, suggestContinueAsNew int) (temporal.Server, error) {
	authorizer, err := authorization.GetAuthorizerFromConfig(&conf.Global.Authorization)
	if err != nil {
		return nil, fmt.Errorf("temporaldev: authorizer: %w", err)
	}
	claimMapper, err := authorization.GetClaimMapperFromConfig(&conf.Global.Authorization, logger)
	if err != nil {
		return nil, fmt.Errorf("temporaldev: claim mapper: %w", err)
	}
	loopback := func(port int) static.Hosts {
		return static.SingleLocalHost(net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	}
	var srv temporal.Server
	err = guard(func() error {
		var err error
		srv, err = temporal.NewServer(
			temporal.WithConfig(conf),
			temporal.ForServices(temporal.DefaultServices),
			temporal.WithStaticHosts(map[primitives.ServiceName]static.Hosts{
				primitives.FrontendService: static.SingleLocalHost(frontend),
				primitives.HistoryService:  loopback(internal[0]),
				primitives.MatchingService: loopback(internal[1]),
				primitives.WorkerService:   loopback(internal[2]),
			}),
			temporal.WithLogger(logger),
			temporal.WithAuthorizer(authorizer),
			temporal.WithClaimMapper(func(*config.Config) authorization.ClaimMapper { return claimMapper }),
			temporal.WithDynamicConfigClient(dynamicConfig(suggestContinueAsNew)),
		)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("temporaldev: create the server: %w", err)
	}
	return srv, nil
}

// ready waits until the frontend serves the namespace, then registers the
// search attributes and sets the retention.
func (s *Server) ready(ctx context.Context, o Options, attrs map[string]enums.IndexedValueType) error {
	var c client.Client
	var desc *workflowservice.DescribeNamespaceResponse
	// The namespace registry fills shortly after the services start.
	for {
		var err error
		if c == nil {
			c, err = client.DialContext(ctx, client.Options{
				HostPort:  s.frontend,
				Namespace: o.Namespace,
				Logger:    sdklog.NewStructuredLogger(slog.New(slog.DiscardHandler)),
			})
		}
		if err == nil {
			desc, err = c.WorkflowService().DescribeNamespace(ctx, &workflowservice.DescribeNamespaceRequest{Namespace: o.Namespace})
			if err == nil {
				break
			}
		}
		select {
		case <-ctx.Done():
			if c != nil {
				c.Close()
			}
			return fmt.Errorf("temporaldev: namespace %q not served at %s: %w", o.Namespace, s.frontend, err)
		case <-time.After(10 * time.Millisecond):
		}
	}
	defer c.Close()
	if desc.GetConfig().GetWorkflowExecutionRetentionTtl().AsDuration() != o.Retention {
		_, err := c.WorkflowService().UpdateNamespace(ctx, &workflowservice.UpdateNamespaceRequest{
			Namespace: o.Namespace,
			Config:    &namespace.NamespaceConfig{WorkflowExecutionRetentionTtl: durationpb.New(o.Retention)},
		})
		if err != nil {
			return fmt.Errorf("temporaldev: set the retention of namespace %q to %s: %w", o.Namespace, o.Retention, err)
		}
	}
	return registerSearchAttributes(ctx, c, o.Namespace, attrs)
}

// FrontendAddress is the frontend's host:port, for client.Options.HostPort.
func (s *Server) FrontendAddress() string { return s.frontend }

// UIAddress is the Web UI's base URL, like "http://127.0.0.1:8233/", or ""
// without UI.
func (s *Server) UIAddress() string {
	if s.ui == nil {
		return ""
	}
	return "http://" + s.ui.addr + "/"
}

// Namespace is the server's namespace.
func (s *Server) Namespace() string { return s.namespace }

// NewClient dials the server. It sets opts.HostPort to the frontend, and
// opts.Namespace and opts.Logger when empty (the logger is Options.Logger, or
// a silent one). Its gRPC is not compressed unless opts asks for it: the
// SDK gzips by default, which on loopback only costs CPU, both ways and for
// every workflow task. The caller closes the client.
func (s *Server) NewClient(ctx context.Context, opts client.Options) (client.Client, error) {
	opts.HostPort = s.frontend
	if opts.Namespace == "" {
		opts.Namespace = s.namespace
	}
	if opts.Logger == nil {
		opts.Logger = sdklog.NewStructuredLogger(s.logger)
	}
	if opts.ConnectionOptions.GrpcCompression == nil {
		opts.ConnectionOptions.GrpcCompression = &client.GrpcCompressionNone{}
	}
	c, err := client.DialContext(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("temporaldev: dial %s: %w", s.frontend, err)
	}
	return c, nil
}

// Stop stops the UI, then the server. It waits for both, and returns the
// same result when called again.
func (s *Server) Stop() error {
	s.stopOnce.Do(func() {
		begin := time.Now()
		if s.ui != nil {
			s.ui.stop()
		}
		s.srvLogger.quiet.Store(true)
		s.stopErr = guard(s.srv.Stop)
		if s.stopErr != nil {
			s.stopErr = fmt.Errorf("temporaldev: stop the server: %w", s.stopErr)
		}
		s.logger.Info("temporal dev server stopped", "frontend", s.frontend, "took", time.Since(begin).Round(time.Millisecond))
	})
	return s.stopErr
}

// guard calls f, turning a *fatalError panic (from serverLogger) into an
// error.
func guard(f func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			fe, ok := r.(*fatalError)
			if !ok {
				panic(r)
			}
			err = fe
		}
	}()
	return f()
}

// dialHost is the host clients use to reach a listener on ip.
func dialHost(ip string) string {
	if parsed := net.ParseIP(ip); parsed != nil && parsed.IsUnspecified() {
		return "127.0.0.1"
	}
	return ip
}

// startAttempts is how many times Start tries ports picked free.
const startAttempts = 3

// pickPorts picks the ports Start tries: freePorts, but for tests.
var pickPorts = freePorts

// freePorts returns n distinct ports that were free on ip a moment ago.
func freePorts(ip string, n int) ([]int, error) {
	ports := make([]int, 0, n)
	for range n {
		l, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
		if err != nil {
			return nil, err
		}
		defer l.Close()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// checkPortFree reports an error if addr cannot be listened on.
func checkPortFree(addr string) error {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("cannot listen on %s (in use by another process?): %w", addr, err)
	}
	return l.Close()
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
