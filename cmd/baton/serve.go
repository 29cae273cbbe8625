package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"
	"unicode"

	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"

	"github.com/baton-run/baton/activities"
	"github.com/baton-run/baton/gateway"
	"github.com/baton-run/baton/gateway/auth"
	"github.com/baton-run/baton/gateway/inbox"
	"github.com/baton-run/baton/internal/telemetry"
	"github.com/baton-run/baton/workflows"
)

const serveUsage = `usage: baton %s [flags]

%s

Flags (flags win over environment variables, which win over defaults):
`

// serveConfig is the configuration of serve, gateway and worker.
type serveConfig struct {
	opsConfig
	listen, baseURL, org, databaseURL, secretFile     string
	temporalAddress, namespace, taskQueue             string
	tlsCert, tlsKey, tlsCA, tlsServerName             string
	jwksURL, issuer, audience, kindClaim, groupsClaim string
	personIDClaim, scopes                             string
	devKeyDir, webhook                                string
	inboxClientID, inboxSecretFile, inboxURL          string
	devTokens, trustUnverifiedEmail                   bool
	lease, uploadQuotaWindow, requestRetention        time.Duration
	callWait                                          time.Duration
	maxUpload, maxRequests, maxRequestsPerIdentity    int
	uploadQuota                                       int64
	evaluator                                         evaluatorConfig
	tools                                             string
	workflowCache                                     int
}

func (c *serveConfig) flags(fl *flag.FlagSet, gatewayFlags, workerFlags bool) {
	c.opsConfig.flags(fl)
	stringFlag(fl, &c.databaseURL, "database-url", "", "PostgreSQL URL (required)")
	stringFlag(fl, &c.temporalAddress, "temporal-address", "127.0.0.1:7233", "Temporal frontend host:port")
	stringFlag(fl, &c.namespace, "namespace", "default", "Temporal namespace")
	stringFlag(fl, &c.taskQueue, "task-queue", workflows.DefaultTaskQueue, "Temporal task queue of runs")
	stringFlag(fl, &c.tlsCert, "tls-cert", "", "client certificate for Temporal (mTLS)")
	stringFlag(fl, &c.tlsKey, "tls-key", "", "client key for Temporal (mTLS)")
	stringFlag(fl, &c.tlsCA, "tls-ca", "", "CA bundle that signed Temporal's certificate")
	stringFlag(fl, &c.tlsServerName, "tls-server-name", "", "server name to verify on Temporal's certificate")
	stringFlag(fl, &c.org, "org", "o_default", "organization id")
	c.evaluator.register(fl, "none")
	stringFlag(fl, &c.tools, "tools", "", "tool registration file (YAML) of the baton-tools-1 profile; give gateways and workers the same file")
	if workerFlags {
		intFlag(fl, &c.workflowCache, "workflow-cache", defaultWorkflowCache, "runs the worker keeps in memory between their tasks; others are replayed from history when they next have work")
		stringFlag(fl, &c.webhook, "webhook", "", "URL receiving overdue notifications as JSON POSTs")
		stringFlag(fl, &c.inboxURL, "inbox-url", "", "web inbox URL that overdue notifications link to (default with serve: BASE-URL/inbox/ when the inbox is on)")
	}
	if gatewayFlags {
		stringFlag(fl, &c.listen, "listen", "127.0.0.1:8080", "gateway address")
		stringFlag(fl, &c.baseURL, "base-url", "", "public URL of the gateway (default http://LISTEN)")
		stringFlag(fl, &c.secretFile, "secret-file", "baton-secret.key", "master key for claim tokens and file links (created if missing)")
		stringFlag(fl, &c.jwksURL, "jwks-url", "", "JWKS of the OAuth issuer whose access tokens are accepted")
		stringFlag(fl, &c.issuer, "issuer", "", "the tokens' iss, named as the authorization server in the MCP metadata")
		stringFlag(fl, &c.audience, "audience", "", "the tokens' aud (default the MCP URL)")
		stringFlag(fl, &c.scopes, "scopes", "", "OAuth scopes every token must grant, space or comma separated: named in the MCP metadata (scopes_supported) and in the 401 challenge (scope=), and checked in --issuer's tokens; default none")
		stringFlag(fl, &c.kindClaim, "kind-claim", "baton_kind", "claim naming agent, person or operator")
		stringFlag(fl, &c.groupsClaim, "groups-claim", "groups", "claim listing the caller's groups")
		stringFlag(fl, &c.personIDClaim, "person-id-claim", "sub", "claim holding a person's id, their email address (email where the issuer's sub is opaque; then email_verified must be true)")
		boolFlag(fl, &c.trustUnverifiedEmail, "trust-unverified-email", false, "with --person-id-claim email, accept a person whose token lacks email_verified: true (only for an issuer that hands out addresses it owns)")
		boolFlag(fl, &c.devTokens, "dev-tokens", false, "DEVELOPMENT ONLY: accept the dev tokens of --dev-key-dir instead of an issuer's JWTs")
		stringFlag(fl, &c.devKeyDir, "dev-key-dir", "", "data folder of 'baton dev' whose dev tokens --dev-tokens accepts (default .baton)")
		stringFlag(fl, &c.inboxClientID, "inbox-client-id", "", "OpenID Connect client id of the web inbox at --issuer; the inbox is off without it")
		stringFlag(fl, &c.inboxSecretFile, "inbox-client-secret-file", "", "file holding the inbox client's secret")
		durationFlag(fl, &c.lease, "lease", 10*time.Minute, "claim lease length")
		durationFlag(fl, &c.callWait, "call-wait", gateway.DefaultCallWait, "how long a call waits for Temporal and PostgreSQL before answering retry")
		intFlag(fl, &c.maxUpload, "max-upload-bytes", 10<<20, "largest upload")
		intFlag(fl, &c.maxRequests, "max-requests", 256, "most requests served at once; more wait up to 5s, then get 503")
		intFlag(fl, &c.maxRequestsPerIdentity, "max-requests-per-identity", gateway.DefaultRequestsPerIdentity, "most requests of one identity served at once; more get retry (HTTP 429) at once")
		int64Flag(fl, &c.uploadQuota, "upload-quota-bytes", gateway.DefaultUploadQuotaBytes, "most bytes one identity may upload per --upload-quota-window; 0 for no quota")
		durationFlag(fl, &c.uploadQuotaWindow, "upload-quota-window", time.Hour, "the window --upload-quota-bytes counts")
		durationFlag(fl, &c.requestRetention, "request-retention", gateway.DefaultRequestRetention, "how long requestIds are remembered for replays (at least 24h); older records are swept hourly")
	}
}

// temporalClient connects to Temporal. The client, and the workers made
// from it, log to log and report to obs.
func (c *serveConfig) temporalClient(ctx context.Context, obs *observing, log *slog.Logger) (client.Client, error) {
	opts := client.Options{HostPort: c.temporalAddress, Namespace: c.namespace, Logger: sdklog.NewStructuredLogger(log),
		DataConverter: workflows.DataConverter}
	if err := telemetry.Temporal(&opts, obs.metrics, obs.tracing); err != nil {
		return nil, err
	}
	if c.tlsCert != "" || c.tlsCA != "" {
		t := &tls.Config{ServerName: c.tlsServerName, MinVersion: tls.VersionTLS12}
		if c.tlsCert != "" {
			cert, err := tls.LoadX509KeyPair(c.tlsCert, c.tlsKey)
			if err != nil {
				return nil, fmt.Errorf("load --tls-cert/--tls-key: %w", err)
			}
			t.Certificates = []tls.Certificate{cert}
		}
		if c.tlsCA != "" {
			pem, err := os.ReadFile(c.tlsCA)
			if err != nil {
				return nil, fmt.Errorf("read --tls-ca: %w", err)
			}
			pool := x509.NewCertPool()
			if !pool.AppendCertsFromPEM(pem) {
				return nil, fmt.Errorf("--tls-ca %s holds no certificate", c.tlsCA)
			}
			t.RootCAs = pool
		}
		opts.ConnectionOptions.TLS = t
	}
	return client.DialContext(ctx, opts)
}

// check refuses settings that make no sense together, before anything
// connects or is created.
func (c *serveConfig) check(withGateway bool) error {
	if c.databaseURL == "" {
		return errors.New("--database-url is required")
	}
	if !withGateway {
		return nil
	}
	switch {
	case c.devTokens && (c.jwksURL != "" || c.issuer != ""):
		return errors.New("--dev-tokens and --jwks-url/--issuer are two ways to authenticate callers: give one (in production, --jwks-url and --issuer)")
	case c.devKeyDir != "" && !c.devTokens:
		return errors.New("--dev-key-dir (env BATON_DEV_KEY_DIR) is set but --dev-tokens is not: dev tokens are for development; add --dev-tokens to accept them, or unset it and give --jwks-url and --issuer")
	case !c.devTokens && (c.jwksURL == "" || c.issuer == ""):
		return errors.New("give --jwks-url and --issuer (or --dev-tokens, for development)")
	}
	if c.lease < time.Second {
		return fmt.Errorf("--lease %v is under the minimum of 1s", c.lease)
	}
	if c.callWait < time.Second || c.callWait > gateway.CallTimeout {
		return fmt.Errorf("--call-wait %v is outside 1s to %v", c.callWait, gateway.CallTimeout)
	}
	if c.maxUpload < 1 {
		return fmt.Errorf("--max-upload-bytes %d must be at least 1", c.maxUpload)
	}
	if c.maxRequests < 1 {
		return fmt.Errorf("--max-requests %d must be at least 1", c.maxRequests)
	}
	if c.requestRetention < gateway.MinRequestRetention {
		return fmt.Errorf("--request-retention %v is under the minimum of %v: clients may still retry those requestIds", c.requestRetention, gateway.MinRequestRetention)
	}
	if c.uploadQuota < 0 || c.uploadQuotaWindow < time.Second {
		return fmt.Errorf("--upload-quota-bytes %d per --upload-quota-window %v: want bytes 0 (no quota) or more per 1s or more", c.uploadQuota, c.uploadQuotaWindow)
	}
	return nil
}

// verifier returns what checks callers' bearer tokens: the issuer's JWTs,
// or with --dev-tokens the dev tokens of an existing dev key, loudly.
func (c *serveConfig) verifier(ctx context.Context, log *slog.Logger) (auth.Verifier, error) {
	if c.devTokens {
		dir := c.devKeyDir
		if dir == "" {
			dir = ".baton"
		}
		issuer, err := auth.LoadDevKey(dir)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%w: point --dev-key-dir at the data folder of 'baton dev', or make a key there with 'baton token --data %s --agent a_dev'", err, dir)
		}
		if err != nil {
			return nil, err
		}
		log.Warn("DEV TOKENS ACCEPTED: this gateway trusts HS256 tokens signed with the dev key in " + dir +
			"; whoever can read that file can act as any agent, person or operator. Never run it like this in production: use --jwks-url and --issuer.")
		return issuer.Verify, nil
	}
	aud := c.audience
	if aud == "" {
		aud = c.publicURL() + "/mcp"
	}
	return auth.NewJWKSVerifier(ctx, &auth.JWKSOptions{
		Issuer: c.issuer, JWKSURL: c.jwksURL, Audience: aud,
		PersonIDClaim: c.personIDClaim, TrustUnverifiedEmail: c.trustUnverifiedEmail,
		KindClaim: c.kindClaim, GroupsClaim: c.groupsClaim, Scopes: c.scopeList(),
	})
}

// scopeList is --scopes as a list.
func (c *serveConfig) scopeList() []string {
	return strings.FieldsFunc(c.scopes, func(r rune) bool { return r == ',' || unicode.IsSpace(r) })
}

// authServers are the authorization servers the protected-resource metadata
// names (RFC 9728), where MCP clients get tokens: the issuer of the tokens
// accepted, if any.
func (c *serveConfig) authServers() []string {
	if c.issuer == "" {
		return nil
	}
	return []string{c.issuer}
}

// gatewayQuota is --upload-quota-bytes per --upload-quota-window, as the
// gateway takes it.
func (c *serveConfig) gatewayQuota() gateway.UploadQuota {
	if c.uploadQuota == 0 {
		return gateway.UploadQuota{Bytes: -1}
	}
	return gateway.UploadQuota{Bytes: c.uploadQuota, Window: c.uploadQuotaWindow}
}

// inboxBase is the inbox's address when the inbox is on, else "".
func (c *serveConfig) inboxBase() string {
	if c.inboxClientID == "" {
		return ""
	}
	return strings.TrimRight(c.publicURL(), "/") + inbox.Path
}

// inbox returns the web inbox of g, signing people in with OpenID Connect
// at --issuer, or nil when --inbox-client-id is not given.
func (c *serveConfig) inbox(g *gateway.Gateway, key []byte, log *slog.Logger) (*inbox.Inbox, error) {
	if c.inboxClientID == "" {
		return nil, nil
	}
	if c.issuer == "" || c.inboxSecretFile == "" {
		return nil, errors.New("the inbox (--inbox-client-id) needs --issuer and --inbox-client-secret-file")
	}
	b, err := os.ReadFile(c.inboxSecretFile)
	if err != nil {
		return nil, fmt.Errorf("read --inbox-client-secret-file: %w", err)
	}
	clientSecret := strings.TrimSpace(string(b))
	if clientSecret == "" {
		return nil, fmt.Errorf("--inbox-client-secret-file %s is empty", c.inboxSecretFile)
	}
	return inbox.New(g, &inbox.Options{
		BaseURL: c.publicURL(), Secret: key, Logger: log,
		OIDC: &inbox.OIDCOptions{
			Issuer: c.issuer, ClientID: c.inboxClientID, ClientSecret: clientSecret, JWKSURL: c.jwksURL,
			PersonIDClaim: c.personIDClaim, TrustUnverifiedEmail: c.trustUnverifiedEmail,
			KindClaim: c.kindClaim, GroupsClaim: c.groupsClaim,
		},
	})
}

func (c *serveConfig) publicURL() string {
	if c.baseURL != "" {
		return c.baseURL
	}
	return "http://" + c.listen
}

func runServe(args []string, stdout, stderr io.Writer) int {
	return serveCommand("serve", "Runs the gateway and the worker against an existing Temporal and PostgreSQL.", true, true, args, stdout, stderr)
}

func runGateway(args []string, stdout, stderr io.Writer) int {
	return serveCommand("gateway", "Runs the MCP gateway alone; scale it out separately from the workers.", true, false, args, stdout, stderr)
}

func runWorker(args []string, stdout, stderr io.Writer) int {
	return serveCommand("worker", "Runs a worker alone: the ProcessRun workflow and its activities.", false, true, args, stdout, stderr)
}

func serveCommand(name, about string, withGateway, withWorker bool, args []string, stdout, stderr io.Writer) int {
	var cfg serveConfig
	fl := flag.NewFlagSet(name, flag.ContinueOnError)
	fl.SetOutput(stderr)
	fl.Usage = func() { fmt.Fprintf(stderr, serveUsage, name, about); fl.PrintDefaults() }
	cfg.flags(fl, withGateway, withWorker)
	if code, ok := parseCommand(name, fl, args, stderr); !ok {
		return code
	}
	if err := cfg.check(withGateway); err != nil {
		fmt.Fprintf(stderr, "baton %s: %v\n", name, err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	log, err := cfg.logger(stderr)
	if err != nil {
		fmt.Fprintf(stderr, "baton %s: %v\n", name, err)
		return 2
	}
	if err := serve(ctx, cfg, withGateway, withWorker, stdout, log); err != nil {
		fmt.Fprintf(stderr, "baton %s: %v\n", name, err)
		return 1
	}
	return 0
}

func serve(ctx context.Context, cfg serveConfig, withGateway, withWorker bool, stdout io.Writer, log *slog.Logger) error {
	obs, err := cfg.observe(ctx, log)
	if err != nil {
		return err
	}
	defer obs.stop()
	if obs.metricsURL != "" {
		fmt.Fprintf(stdout, "Metrics: %s\n", obs.metricsURL)
	}
	var v auth.Verifier
	if withGateway {
		if v, err = cfg.verifier(ctx, log); err != nil {
			return err
		}
	}
	c, err := cfg.temporalClient(ctx, obs, log)
	if err != nil {
		return fmt.Errorf("connect to Temporal at %s: %w", cfg.temporalAddress, err)
	}
	defer c.Close()
	tools := false
	if cfg.tools != "" {
		st, err := openStore(ctx, cfg.databaseURL)
		if err != nil {
			return err
		}
		tools, err = registerTools(ctx, st, cfg.org, cfg.tools, stdout)
		st.Close()
		if err != nil {
			return err
		}
	}
	if withWorker {
		inboxURL := cfg.inboxURL
		if inboxURL == "" && withGateway && cfg.inboxClientID != "" {
			inboxURL = strings.TrimRight(cfg.publicURL(), "/") + inbox.Path
		}
		ev, err := cfg.evaluator.build()
		if err != nil {
			return err
		}
		stopWorker, err := startWorker(ctx, cfg.databaseURL, c, cfg.taskQueue, cfg.workflowCache, obs.metrics, activities.Options{
			WebhookURL: cfg.webhook, InboxURL: inboxURL, Logger: log, Evaluator: ev,
		})
		if err != nil {
			return err
		}
		defer stopWorker()
	}
	if !withGateway {
		fmt.Fprintf(stdout, "Worker polling %s on %s\n", cfg.taskQueue, cfg.temporalAddress)
		<-ctx.Done()
		return nil
	}
	st, err := openStore(ctx, cfg.databaseURL)
	if err != nil {
		return err
	}
	defer st.Close()
	key, err := secret(cfg.secretFile)
	if err != nil {
		return err
	}
	runs, err := workflows.NewClient(c, &workflows.ClientOptions{TaskQueue: cfg.taskQueue})
	if err != nil {
		return err
	}
	g, err := gateway.New(st, runs, v, &gateway.Options{
		Org: cfg.org, BaseURL: cfg.publicURL(), Lease: cfg.lease, CallWait: cfg.callWait,
		MaxUploadBytes: cfg.maxUpload, MaxRequestsPerIdentity: cfg.maxRequestsPerIdentity, Secret: key, Logger: log,
		AuthServers: cfg.authServers(), Scopes: cfg.scopeList(),
		UploadQuota: cfg.gatewayQuota(), Profiles: profiles(cfg.evaluator.offered(), tools),
		Observe: obs.toolCalls(), InboxURL: cfg.inboxBase(),
	})
	if err != nil {
		return err
	}
	in, err := cfg.inbox(g, key, log)
	if err != nil {
		return err
	}
	if in != nil {
		g.Mount(inbox.Path, in.Handler())
	}
	go sweepRequests(ctx, g, cfg.requestRetention, log)
	h := obs.requests(gateway.LimitConcurrency(g.Handler(), &gateway.ConcurrencyOptions{MaxRequests: cfg.maxRequests}))
	return serveHTTP(ctx, cfg.listen, h, func(url string) {
		if in != nil {
			fmt.Fprintf(stdout, "Inbox: %s\n", in.URL())
		}
		fmt.Fprintf(stdout, "MCP: %s/mcp\n", url)
	})
}
