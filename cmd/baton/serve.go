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
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"unicode"

	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"

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
	runtimeConfig
	baseURL, databaseURL, secretFile                  string
	temporalAddress, namespace, taskQueue             string
	tlsCert, tlsKey, tlsCA, tlsServerName             string
	temporalAPIKeyFile, temporalCompression           string
	jwksURL, issuer, audience, kindClaim, groupsClaim string
	personIDClaim, scopes, orgClaim                   string
	devKeyDir                                         string
	inboxClientID, inboxSecretFile, inboxURL          string
	devTokens, trustUnverifiedEmail                   bool
}

func (c *serveConfig) flags(fl *flag.FlagSet, gatewayFlags, workerFlags bool) {
	c.runtimeConfig.flags(fl, runtimeFlags{gateway: gatewayFlags, worker: workerFlags, evaluator: "none"})
	stringFlag(fl, &c.databaseURL, "database-url", "", "PostgreSQL URL (required)")
	stringFlag(fl, &c.temporalAddress, "temporal-address", "127.0.0.1:7233", "Temporal frontend host:port")
	stringFlag(fl, &c.namespace, "namespace", "default", "Temporal namespace")
	stringFlag(fl, &c.taskQueue, "task-queue", workflows.DefaultTaskQueue, "Temporal task queue of runs")
	stringFlag(fl, &c.tlsCert, "tls-cert", "", "client certificate for Temporal (mTLS)")
	stringFlag(fl, &c.tlsKey, "tls-key", "", "client key for Temporal (mTLS)")
	stringFlag(fl, &c.tlsCA, "tls-ca", "", "CA bundle that signed Temporal's certificate")
	stringFlag(fl, &c.tlsServerName, "tls-server-name", "", "server name to verify on Temporal's certificate")
	stringFlag(fl, &c.temporalAPIKeyFile, "temporal-api-key-file", "", "file holding an API key for Temporal (Temporal Cloud): sent with every request, over TLS; read again for each request, so a rotated key needs no restart")
	stringFlag(fl, &c.temporalCompression, "temporal-compression", "auto", "gRPC compression of requests to Temporal: gzip, none, or auto (none when --temporal-address is a loopback address, where compressing only costs CPU; gzip otherwise)")
	if workerFlags {
		stringFlag(fl, &c.inboxURL, "inbox-url", "", "web inbox URL that overdue notifications link to (default with serve: BASE-URL/inbox/ when the inbox is on)")
	}
	if gatewayFlags {
		stringFlag(fl, &c.baseURL, "base-url", "", "public URL of the gateway (default http://LISTEN)")
		stringFlag(fl, &c.secretFile, "secret-file", "baton-secret.key", "master key for claim tokens and file links (created if missing)")
		stringFlag(fl, &c.jwksURL, "jwks-url", "", "JWKS of the OAuth issuer whose access tokens are accepted")
		stringFlag(fl, &c.issuer, "issuer", "", "the tokens' iss, named as the authorization server in the MCP metadata")
		stringFlag(fl, &c.audience, "audience", "", "the tokens' aud (default the MCP URL)")
		stringFlag(fl, &c.scopes, "scopes", "", "OAuth scopes every token must grant, space or comma separated: named in the MCP metadata (scopes_supported) and in the 401 challenge (scope=), and checked in --issuer's tokens; default none")
		stringFlag(fl, &c.kindClaim, "kind-claim", "baton_kind", "claim naming agent, person or operator")
		stringFlag(fl, &c.groupsClaim, "groups-claim", "groups", "claim listing the caller's groups")
		stringFlag(fl, &c.orgClaim, "org-claim", auth.DefaultOrgClaim, "claim naming the caller's organization; a token without it belongs to --org")
		stringFlag(fl, &c.personIDClaim, "person-id-claim", "sub", "claim holding a person's id, their email address (email where the issuer's sub is opaque; then email_verified must be true)")
		boolFlag(fl, &c.trustUnverifiedEmail, "trust-unverified-email", false, "with --person-id-claim email, accept a person whose token lacks email_verified: true (only for an issuer that hands out addresses it owns)")
		boolFlag(fl, &c.devTokens, "dev-tokens", false, "DEVELOPMENT ONLY: accept the dev tokens of --dev-key-dir instead of an issuer's JWTs")
		stringFlag(fl, &c.devKeyDir, "dev-key-dir", "", "data folder of 'baton dev' whose dev tokens --dev-tokens accepts (default .baton)")
		stringFlag(fl, &c.inboxClientID, "inbox-client-id", "", "OpenID Connect client id of the web inbox at --issuer; the inbox is off without it")
		stringFlag(fl, &c.inboxSecretFile, "inbox-client-secret-file", "", "file holding the inbox client's secret")
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
	comp, err := temporalCompression(c.temporalCompression, c.temporalAddress)
	if err != nil {
		return nil, err
	}
	opts.ConnectionOptions.GrpcCompression = comp
	if c.temporalAPIKeyFile != "" {
		if _, err := readAPIKey(c.temporalAPIKeyFile); err != nil {
			return nil, err
		}
		// The SDK sends it as "authorization: Bearer KEY" and turns TLS on.
		opts.Credentials = client.NewAPIKeyDynamicCredentials(func(context.Context) (string, error) {
			return readAPIKey(c.temporalAPIKeyFile)
		})
	}
	if c.tlsCert != "" || c.tlsCA != "" || c.tlsServerName != "" {
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

// temporalCompression is the gRPC compression of a client of the Temporal
// frontend at address, as --temporal-compression names it. The SDK's
// default is gzip both ways, which saves bandwidth across a network and
// only costs CPU on one machine: at 32 clients at once it held a bare
// Temporal run to 37 full runs a second where none gave 58.
func temporalCompression(mode, address string) (client.GrpcCompression, error) {
	switch mode {
	case "gzip":
		return &client.GrpcCompressionGzip{}, nil
	case "none":
		return &client.GrpcCompressionNone{}, nil
	case "auto", "":
		host, _, err := net.SplitHostPort(address)
		if err != nil {
			host = address
		}
		if ip := net.ParseIP(host); host == "localhost" || ip != nil && ip.IsLoopback() {
			return &client.GrpcCompressionNone{}, nil
		}
		return &client.GrpcCompressionGzip{}, nil
	}
	return nil, fmt.Errorf("--temporal-compression %q: want gzip, none or auto", mode)
}

// readAPIKey reads --temporal-api-key-file: one key, surrounding space
// trimmed.
func readAPIKey(file string) (string, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return "", fmt.Errorf("read --temporal-api-key-file: %w", err)
	}
	key := strings.TrimSpace(string(b))
	if key == "" {
		return "", fmt.Errorf("--temporal-api-key-file %s is empty", file)
	}
	return key, nil
}

// check refuses settings that make no sense together, before anything
// connects or is created.
func (c *serveConfig) check(withGateway bool) error {
	if c.databaseURL == "" {
		return errors.New("--database-url is required")
	}
	if !withGateway {
		return c.runtimeConfig.check(false)
	}
	switch {
	case c.devTokens && (c.jwksURL != "" || c.issuer != ""):
		return errors.New("--dev-tokens and --jwks-url/--issuer are two ways to authenticate callers: give one (in production, --jwks-url and --issuer)")
	case c.devKeyDir != "" && !c.devTokens:
		return errors.New("--dev-key-dir (env BATON_DEV_KEY_DIR) is set but --dev-tokens is not: dev tokens are for development; add --dev-tokens to accept them, or unset it and give --jwks-url and --issuer")
	case !c.devTokens && (c.jwksURL == "" || c.issuer == ""):
		return errors.New("give --jwks-url and --issuer (or --dev-tokens, for development)")
	}
	return c.runtimeConfig.check(true)
}

// verifier returns what checks callers' bearer tokens: the issuer's JWTs,
// or with --dev-tokens the dev tokens of an existing dev key, loudly.
func (c *serveConfig) verifier(ctx context.Context, log *slog.Logger) (auth.Verifier, error) {
	if c.devTokens {
		dir := c.devKeyDir
		if dir == "" {
			dir = defaultData
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
		KindClaim: c.kindClaim, GroupsClaim: c.groupsClaim, Scopes: c.scopeList(), OrgClaim: c.orgClaim,
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
		BaseURL: c.publicURL(), Secret: key, Logger: log, Org: c.org,
		OIDC: &inbox.OIDCOptions{
			Issuer: c.issuer, ClientID: c.inboxClientID, ClientSecret: clientSecret, JWKSURL: c.jwksURL,
			PersonIDClaim: c.personIDClaim, TrustUnverifiedEmail: c.trustUnverifiedEmail,
			KindClaim: c.kindClaim, GroupsClaim: c.groupsClaim, OrgClaim: c.orgClaim,
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
	inboxURL := cfg.inboxURL
	if inboxURL == "" && withGateway {
		inboxURL = cfg.inboxBase()
	}
	var key []byte
	if withGateway {
		if key, err = secret(cfg.secretFile); err != nil {
			return err
		}
	}
	s, err := cfg.startStack(ctx, stackOptions{
		dbURL: cfg.databaseURL, temporal: c, taskQueue: cfg.taskQueue, gateway: withGateway, worker: withWorker,
		baseURL: cfg.publicURL(), verifier: v, secret: key, authServers: cfg.authServers(), scopes: cfg.scopeList(), inboxURL: cfg.inboxBase(),
		notifyURL: inboxURL,
	}, obs, log, stdout)
	if err != nil {
		return err
	}
	defer s.close()
	if !withGateway {
		return s.serve(ctx, nil, func() {
			fmt.Fprintf(stdout, "Worker polling %s on %s\n", cfg.taskQueue, cfg.temporalAddress)
		})
	}
	in, err := cfg.inbox(s.gateway, key, log)
	if err != nil {
		return err
	}
	if in != nil {
		s.gateway.Mount(inbox.Path, in.Handler())
	}
	ln, err := net.Listen("tcp", cfg.listen)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", cfg.listen, err)
	}
	return s.serve(ctx, ln, func() {
		if in != nil {
			fmt.Fprintf(stdout, "Inbox: %s\n", in.URL())
		}
		fmt.Fprintf(stdout, "MCP: http://%s/mcp\n", ln.Addr())
	})
}
