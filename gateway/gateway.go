// Package gateway is Baton's MCP server: the fourteen tools of the
// agentprocess specification over Streamable HTTP, with OAuth bearer
// tokens, idempotency by requestId, the process registry, uploads and
// listings. It reaches runs only through the Temporal client and keeps its
// own state in PostgreSQL (internal/store).
package gateway

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/baton-run/baton/gateway/auth"
	"github.com/baton-run/baton/internal/store"
	"github.com/baton-run/baton/interpreter"
	"github.com/baton-run/baton/workflows"
)

// Version is the server version reported to MCP clients.
const Version = "0.1.0"

// DefaultLease is a claim's lease unless Options.Lease says otherwise.
const DefaultLease = 10 * time.Minute

// CheckLease reports a lease under its minimum of a second. It is the
// check of Options.Lease (once a zero took its default), for a caller
// that checks its settings before it makes a gateway.
func CheckLease(d time.Duration) error {
	if d < time.Second {
		return fmt.Errorf("%v is under the minimum of 1s", d)
	}
	return nil
}

// DefaultMaxUploadBytes is the largest upload unless
// Options.MaxUploadBytes says otherwise: 10 MiB.
const DefaultMaxUploadBytes = 10 << 20

// Options configure a gateway. Every field has a default.
type Options struct {
	// Org is the default organization: the one of callers whose identity
	// names none (a token without the organization claim). Every other
	// organization is served alike. Default auth.DefaultOrg.
	Org string
	// BaseURL is the gateway's public URL, used for file links and the
	// protected-resource metadata. Default "http://127.0.0.1:8080".
	BaseURL string
	// Lease is the claim lease length. Default DefaultLease; at least a
	// second (CheckLease).
	Lease time.Duration
	// CallWait is how long a call waits for Temporal and PostgreSQL before
	// it answers retry; a write it started then finishes or not on its
	// own, and the same requestId answers it. Default DefaultCallWait;
	// more than 0 and at most CallTimeout (CheckCallWait).
	CallWait time.Duration
	// MaxUploadBytes caps an upload's decoded size. Default
	// DefaultMaxUploadBytes.
	MaxUploadBytes int
	// MaxRequestsPerIdentity is how many requests of one identity are
	// served at once, over MCP and in the web inbox; more are answered
	// retry at once (429 over HTTP). Default DefaultRequestsPerIdentity.
	MaxRequestsPerIdentity int
	// UploadQuota limits what one identity uploads; see UploadQuota.
	UploadQuota UploadQuota
	// RunDataBytes caps a run's data. Default 262144.
	RunDataBytes int
	// WritesPerRun is how many writes to one run this gateway has in flight
	// at once; more wait their turn. Default 4, under Temporal's 10
	// in-flight updates per workflow, so two gateways stay within it too.
	WritesPerRun int
	// Operators is the group that receives escalations. Default
	// interpreter.DefaultOperators.
	Operators string
	// Profiles are the profiles offered. Default parallel-1. Offer check-1
	// only while the workers have an evaluator (profile-check), and
	// baton-tools-1 only while a tool registration is stored
	// (docs/profile-tools.md); call_tool is a tool only then.
	// baton-subprocess-1 needs workers that run it (this version's do).
	Profiles []string
	// MaxChildren is how many children one process step of a run started
	// here may start (baton-subprocess-1); a for_each over more fails the
	// run. Default interpreter.DefaultMaxChildren (1000).
	MaxChildren int
	// CheckLimits are the check profile's thresholds and the evaluator's
	// share of run data, pinned on every run started here and published in
	// describe. Zero fields take the profile's defaults (checkPass 0.9,
	// checkFail none, checkConfidence 0.8, checkStateBytes 65536).
	CheckLimits interpreter.CheckLimits
	// Secret is the master key for claim tokens and file links. Default: a
	// random key, so tokens do not survive a restart.
	Secret []byte
	// FileURLTTL is how long a file link stays valid. Default 15 minutes.
	FileURLTTL time.Duration
	// InboxURL is the web inbox's address when one is mounted, such as
	// https://baton.example.com/inbox/: runs link their Temporal UI
	// details to it. Default none.
	InboxURL string
	// AuthServers are the issuer URLs of the OAuth authorization servers
	// that the protected-resource metadata names (RFC 9728), where MCP
	// clients discover how to get a token. Default none.
	AuthServers []string
	// Scopes are the OAuth scopes the gateway requires of a token: the
	// protected-resource metadata lists them (scopes_supported) and a
	// refusal's challenge names them (scope=), so clients ask for them.
	// The verifier checks tokens for them (auth.JWKSOptions.Scopes).
	// Default none.
	Scopes []string
	// Logger receives request failures. Default slog.Default().
	Logger *slog.Logger
	// Observe, when set, is told of every tool call, from the MCP endpoint
	// and from Call alike: as the call starts, with its context and tool;
	// the context it returns is the call's from then on (a trace span),
	// and the function it returns is called once the call is answered,
	// with the result code: "ok" or the error code. Default none.
	Observe func(ctx context.Context, tool string) (context.Context, func(code string))
}

func (o *Options) defaults() error {
	if o.Org == "" {
		o.Org = auth.DefaultOrg
	}
	if o.BaseURL == "" {
		o.BaseURL = "http://127.0.0.1:8080"
	}
	o.BaseURL = strings.TrimRight(o.BaseURL, "/")
	if o.Lease == 0 {
		o.Lease = DefaultLease
	}
	if err := CheckLease(o.Lease); err != nil {
		return fmt.Errorf("gateway: Lease %w", err)
	}
	if o.CallWait == 0 {
		o.CallWait = DefaultCallWait
	}
	if err := CheckCallWait(o.CallWait); err != nil {
		return fmt.Errorf("gateway: CallWait %w", err)
	}
	if o.MaxUploadBytes == 0 {
		o.MaxUploadBytes = DefaultMaxUploadBytes
	}
	if o.MaxUploadBytes < 1 {
		return fmt.Errorf("gateway: MaxUploadBytes %d is below 1", o.MaxUploadBytes)
	}
	if o.MaxRequestsPerIdentity == 0 {
		o.MaxRequestsPerIdentity = DefaultRequestsPerIdentity
	}
	if o.MaxRequestsPerIdentity < 1 {
		return fmt.Errorf("gateway: MaxRequestsPerIdentity %d is under the minimum of 1", o.MaxRequestsPerIdentity)
	}
	if o.RunDataBytes == 0 {
		o.RunDataBytes = interpreter.DefaultRunDataBytes
	}
	if o.RunDataBytes < 1 {
		return fmt.Errorf("gateway: RunDataBytes %d is below 1", o.RunDataBytes)
	}
	if o.WritesPerRun == 0 {
		o.WritesPerRun = 4
	}
	if o.WritesPerRun < 1 || o.WritesPerRun > 10 {
		return fmt.Errorf("gateway: WritesPerRun %d is outside 1 to 10 (Temporal admits 10 in-flight updates per run)", o.WritesPerRun)
	}
	if o.Operators == "" {
		o.Operators = interpreter.DefaultOperators
	}
	if o.Profiles == nil {
		o.Profiles = []string{interpreter.ProfileParallel}
	}
	for _, p := range o.Profiles {
		if p != interpreter.ProfileParallel && p != interpreter.ProfileCheck && p != interpreter.ProfileTools && p != interpreter.ProfileSubprocess {
			return fmt.Errorf("gateway: profile %q is not offered by this server (only %s, %s, %s and %s)", p, interpreter.ProfileParallel, interpreter.ProfileCheck, interpreter.ProfileTools, interpreter.ProfileSubprocess)
		}
	}
	if o.MaxChildren == 0 {
		o.MaxChildren = interpreter.DefaultMaxChildren
	}
	if o.MaxChildren < 1 {
		return fmt.Errorf("gateway: MaxChildren %d is below 1", o.MaxChildren)
	}
	if err := o.CheckLimits.Validate(); err != nil {
		return fmt.Errorf("gateway: CheckLimits: %w", err)
	}
	o.CheckLimits = o.CheckLimits.WithDefaults()
	if len(o.Secret) == 0 {
		o.Secret = make([]byte, 32)
		if _, err := rand.Read(o.Secret); err != nil {
			return err
		}
	}
	if o.FileURLTTL == 0 {
		o.FileURLTTL = 15 * time.Minute
	}
	if o.FileURLTTL < 0 {
		return fmt.Errorf("gateway: FileURLTTL %v is negative", o.FileURLTTL)
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return nil
}

// Gateway serves the MCP tools.
type Gateway struct {
	store    *store.Store
	runs     *workflows.Client
	verify   auth.Verifier
	opts     Options
	schemas  map[interpreter.Tool]toolSchema
	tokens   *auth.ClaimTokens
	files    *auth.FileURLs
	server   *mcp.Server
	impl     *mcp.Implementation // the server's name and version, as results name it
	toolList []*tool
	tools    map[interpreter.Tool]*tool
	queue    *runQueue

	perIdentity *identitySlots

	versions *versionCache // "org\x00name@version" → what starts, calls and answers read of it

	mounts map[string]http.Handler // served beside /mcp, see Mount

	// cut ends when Cut is called: every call in flight and after it
	// answers retry.
	cut     context.Context
	cutDone context.CancelFunc
}

// New returns a gateway over its store, the runs' client and a token
// verifier. Nil options mean defaults.
func New(s *store.Store, runs *workflows.Client, verify auth.Verifier, opts *Options) (*Gateway, error) {
	if s == nil || runs == nil || verify == nil {
		return nil, fmt.Errorf("gateway: store, runs client and verifier are required")
	}
	// A client calls many times with one token: it is checked once a
	// minute, not on every call.
	g := &Gateway{store: s, runs: runs, verify: auth.Cached(verify, 0, 0), versions: newVersionCache(versionCacheBytes)}
	g.cut, g.cutDone = context.WithCancel(context.Background())
	if opts != nil {
		g.opts = *opts
	}
	if err := g.opts.defaults(); err != nil {
		return nil, err
	}
	schemas, err := loadSchemas()
	if err != nil {
		return nil, err
	}
	g.schemas = schemas
	if g.tokens, err = auth.NewClaimTokens(auth.DeriveKey(g.opts.Secret, "claim-tokens")); err != nil {
		return nil, err
	}
	if g.files, err = auth.NewFileURLs(auth.DeriveKey(g.opts.Secret, "file-urls"), g.opts.BaseURL, g.opts.FileURLTTL); err != nil {
		return nil, err
	}
	g.impl = &mcp.Implementation{Name: "baton", Version: Version}
	g.server = mcp.NewServer(g.impl, &mcp.ServerOptions{
		Instructions: "Baton runs agentprocess processes. Call describe first, then get_work to find steps to claim.",
	})
	g.server.AddReceivingMiddleware(refuseLargeBodies)
	g.queue = newRunQueue(g.opts.WritesPerRun)
	g.perIdentity = newIdentitySlots(g.opts.MaxRequestsPerIdentity)
	tools := slices.Contains(g.opts.Profiles, interpreter.ProfileTools)
	g.tools = map[interpreter.Tool]*tool{}
	for _, t := range toolTable() {
		if t.name == interpreter.ToolCallTool && !tools {
			continue
		}
		g.toolList = append(g.toolList, t)
		g.tools[t.name] = t
	}
	if err := g.addTools(); err != nil {
		return nil, err
	}
	g.addPrompts()
	g.addResources()
	return g, nil
}

// Offer is what this gateway offers, for publication checks.
func (g *Gateway) Offer() interpreter.Offer {
	return interpreter.Offer{Profiles: g.opts.Profiles, Tools: g.toolNames()}
}

// toolNames lists the tools in the order describe reports them.
func (g *Gateway) toolNames() []string {
	names := make([]string, len(g.toolList))
	for i, t := range g.toolList {
		names[i] = string(t.name)
	}
	return names
}

// Org is the gateway's default organization ("" for a nil gateway).
func (g *Gateway) Org() string {
	if g == nil {
		return ""
	}
	return g.opts.Org
}

// Handler serves /mcp (bearer tokens required), the RFC 9728 metadata
// document and signed file links.
func (g *Gateway) Handler() http.Handler { return g.handler(true) }

// handler is Handler with tool calls answered directly (direct.go) or,
// for the test that compares the two, all by the MCP SDK.
func (g *Gateway) handler(direct bool) http.Handler {
	metadataURL := g.opts.BaseURL + "/.well-known/oauth-protected-resource"
	mcpHandler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return g.server }, &mcp.StreamableHTTPOptions{
		Stateless:           true,
		JSONResponse:        true,
		MaxRequestBodyBytes: int64(g.opts.MaxUploadBytes)*4/3 + 1<<20,
	})
	var calls http.Handler = mcpHandler
	if direct {
		calls = g.direct(mcpHandler)
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", auth.Middleware(g.verify, metadataURL, g.opts.Scopes, g.opts.Logger)(g.limitPerIdentity(limitBodies(calls, g.opts.MaxUploadBytes))))
	mux.Handle("/.well-known/oauth-protected-resource", auth.MetadataHandler(g.opts.BaseURL+"/mcp", g.opts.AuthServers, g.opts.Scopes))
	mux.Handle("/.well-known/oauth-protected-resource/mcp", auth.MetadataHandler(g.opts.BaseURL+"/mcp", g.opts.AuthServers, g.opts.Scopes))
	mux.HandleFunc("GET /files/{id}", g.serveFile)
	for pattern, h := range g.mounts {
		mux.Handle(pattern, h)
	}
	return mux
}

// Cut ends every call in flight, from MCP and from Call alike, and every
// call made after it: each answers retry, which its caller may send again
// with its requestId. A write a call started finishes or not in its run
// alone, never half, and the requestId answers what the run kept. A server
// that is stopping calls it once its drain time is over, so that no call
// is left without an answer.
func (g *Gateway) Cut() { g.cutDone() }

// Mount serves h at pattern beside the MCP endpoint in every Handler made
// after it, such as the web inbox at "/inbox/".
func (g *Gateway) Mount(pattern string, h http.Handler) {
	if g.mounts == nil {
		g.mounts = map[string]http.Handler{}
	}
	g.mounts[pattern] = h
}

// published is what the gateway keeps of a published version: its
// parsed definition and its role bindings. A published version never
// changes, so it is read from PostgreSQL once per gateway (while the
// versions it keeps fit versionCacheBytes).
type published struct {
	p       *interpreter.Process
	version int
	roles   map[string]string
	// children are the version's child bindings (baton-subprocess-1).
	children interpreter.Bindings
	// body is the process's body as a JSON string, as answers carry it.
	body json.RawMessage
}

// process returns a published version (0: the latest), from memory when
// this gateway has read it before. The latest is looked up every time, by
// its number alone, so a version published through another gateway is
// the next start's.
func (g *Gateway) process(ctx context.Context, org, name string, version int) (published, error) {
	if version == 0 {
		v, err := g.store.LatestVersion(ctx, org, name)
		if err != nil {
			return published{}, err
		}
		version = v
	}
	if pub, ok := g.versions.get(processKey(org, name, version)); ok {
		return pub, nil
	}
	pv, err := g.store.GetVersion(ctx, org, name, version)
	if err != nil {
		return published{}, err
	}
	return g.keep(pv)
}

// keep parses a published version read from the store and keeps it.
func (g *Gateway) keep(pv store.ProcessVersion) (published, error) {
	key := processKey(pv.Org, pv.Name, pv.Version)
	if pub, ok := g.versions.get(key); ok {
		return pub, nil
	}
	p := &interpreter.Process{}
	if err := json.Unmarshal(pv.Definition, p); err != nil {
		return published{}, fmt.Errorf("process %s: %w", key, err)
	}
	body, err := marshal(p.Body)
	if err != nil {
		return published{}, fmt.Errorf("process %s: %w", key, err)
	}
	pub := published{p: p, version: pv.Version, roles: pv.Roles, children: pv.Children, body: body}
	// The parsed definition takes about what its JSON does.
	return g.versions.put(key, pub, len(pv.Definition)+len(body)), nil
}

func processKey(org, name string, version int) string {
	return fmt.Sprintf("%s\x00%s@%d", org, name, version)
}
