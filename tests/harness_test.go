// Package tests holds Baton's end-to-end tests: a real PostgreSQL, the
// embedded Temporal server, the worker and the gateway over real HTTP, and
// the MCP Go SDK's client with bearer tokens. Every tool result is checked
// against the official core-2 schemas.
package tests

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"flag"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	santhosh "github.com/santhosh-tekuri/jsonschema/v6"
	"go.temporal.io/sdk/client"
	"google.golang.org/grpc"

	"github.com/baton-run/baton/activities/downstream"
	"github.com/baton-run/baton/activities/evaluator"
	"github.com/baton-run/baton/gateway"
	"github.com/baton-run/baton/gateway/auth"
	"github.com/baton-run/baton/internal/drive"
	"github.com/baton-run/baton/internal/store"
	"github.com/baton-run/baton/internal/telemetry"
	"github.com/baton-run/baton/internal/testing/pgtest"
	"github.com/baton-run/baton/internal/testing/spectest"
	"github.com/baton-run/baton/internal/testing/workertest"
	"github.com/baton-run/baton/interpreter"
	temporaldev "github.com/baton-run/baton/temporal-dev"
	"github.com/baton-run/baton/workflows"
)

var temporal *temporaldev.Server

// temporalStore says where the tests' Temporal server keeps its state:
// "sqlite" (in memory, the default) or "postgres" (the shared test
// PostgreSQL, as `baton dev` keeps it), for a benchmark on that shape:
// go test ./tests -run '^$' -bench X -args -temporal-store=postgres.
var temporalStore = flag.String("temporal-store", "sqlite", `the tests' Temporal store: "sqlite" or "postgres"`)

func TestMain(m *testing.M) {
	flag.Parse()
	opts := &temporaldev.Options{SearchAttributes: workflows.SearchAttributes}
	switch *temporalStore {
	case "sqlite":
	case "postgres":
		pg, err := pgtest.SharedServer()
		if err != nil {
			fmt.Fprintln(os.Stderr, "start PostgreSQL for temporal:", err)
			os.Exit(1)
		}
		opts.PostgresURL = pg.URL()
	default:
		fmt.Fprintf(os.Stderr, "-temporal-store %q: want sqlite or postgres\n", *temporalStore)
		os.Exit(2)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	srv, err := temporaldev.Start(ctx, opts)
	cancel()
	if err != nil {
		fmt.Fprintln(os.Stderr, "start temporal:", err)
		os.Exit(1)
	}
	temporal = srv
	code := m.Run()
	_ = srv.Stop()
	pgtest.StopShared()
	os.Exit(code)
}

// baton is one running Baton: its own database, task queue, worker and
// gateway.
type baton struct {
	t        testing.TB
	url      string
	store    *store.Store
	temporal client.Client
	issuer   *auth.DevIssuer
	gateway  *gateway.Gateway
	registry *gateway.Registry
	srv      *httptest.Server
	opts     gateway.Options
	queue    string
	// worker runs the runs; it stops and starts again as a restarted
	// worker process would.
	worker  *workertest.Worker
	tracing *telemetry.Tracing

	// answered records which tools answered ok: true and ok: false, each
	// checked against the output schema tools/list declared.
	answered *answers
}

type answers struct {
	mu   sync.Mutex
	seen map[string]map[bool]bool // tool → ok → seen
}

type options struct {
	lease time.Duration
	// fileURLTTL is how long file links stay valid. Default the gateway's.
	fileURLTTL time.Duration
	// evaluator, when set, answers checks, and check-1 is offered.
	evaluator evaluator.Evaluator
	// tools, when set, is a tool registration file's text: it is
	// registered and baton-tools-1 is offered.
	tools string
	// metrics and tracing, when set, are what the Temporal client, the
	// worker and the gateway report to, wired as cmd/baton wires them.
	metrics *telemetry.Metrics
	tracing *telemetry.Tracing
	// logger is the gateway's and the worker's. Default slog.Default().
	logger *slog.Logger
	// subprocess offers baton-subprocess-1.
	subprocess bool
	// dial, when set, is added to the dial options of the Temporal client
	// the worker and the gateway share: an interceptor there sees every
	// try of every call.
	dial []grpc.DialOption
}

func start(t testing.TB, o options) *baton {
	t.Helper()
	ctx := context.Background()
	dbURL := pgtest.NewDatabase(t)
	st, err := store.Open(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	if _, err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	copts := client.Options{DataConverter: workflows.DataConverter, ConnectionOptions: client.ConnectionOptions{DialOptions: o.dial}}
	if err := telemetry.Temporal(&copts, o.metrics, o.tracing); err != nil {
		t.Fatal(err)
	}
	c, err := temporal.NewClient(ctx, copts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	if o.tools != "" {
		file := filepath.Join(t.TempDir(), "tools.yaml")
		if err := os.WriteFile(file, []byte(o.tools), 0o600); err != nil {
			t.Fatal(err)
		}
		d, err := downstream.New(nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := st.RegisterTools(ctx, "o_test", file, d.Lister()); err != nil {
			t.Fatal(err)
		}
	}
	w := workertest.New(t, c, dbURL, &workertest.Options{Evaluator: o.evaluator, Metrics: o.metrics, Logger: o.logger})

	key := make([]byte, 32)
	_, _ = rand.Read(key)
	issuer, err := auth.NewDevIssuer(key)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(nil)
	srv.Start()
	t.Cleanup(srv.Close)
	if o.lease == 0 {
		o.lease = 10 * time.Minute
	}
	gopts := gateway.Options{Org: "o_test", BaseURL: srv.URL, Lease: o.lease, Secret: key, FileURLTTL: o.fileURLTTL, Logger: o.logger}
	if o.metrics != nil || o.tracing != nil {
		gopts.Observe = telemetry.ToolCalls(o.metrics, o.tracing)
	}
	gopts.Profiles = []string{interpreter.ProfileParallel}
	if o.evaluator != nil {
		gopts.Profiles = append(gopts.Profiles, interpreter.ProfileCheck)
	}
	if o.tools != "" {
		gopts.Profiles = append(gopts.Profiles, interpreter.ProfileTools)
	}
	if o.subprocess {
		gopts.Profiles = append(gopts.Profiles, interpreter.ProfileSubprocess)
	}
	g, err := gateway.New(st, w.Runs, issuer.Verify, &gopts)
	if err != nil {
		t.Fatal(err)
	}
	srv.Config.Handler = telemetry.Requests(g.Handler(), o.tracing)
	return &baton{
		t: t, url: srv.URL, store: st, temporal: c, issuer: issuer, gateway: g,
		registry: gateway.NewRegistry(st, "o_test", g.Offer()), srv: srv, opts: gopts, queue: w.Queue,
		worker: w, tracing: o.tracing, answered: &answers{seen: map[string]map[bool]bool{}},
	}
}

// restartGateway replaces the gateway with a new one over the same store,
// Temporal and secret, as a restarted process would be.
func (b *baton) restartGateway() {
	b.t.Helper()
	runs, err := workflows.NewClient(b.temporal, &workflows.ClientOptions{TaskQueue: b.queue})
	if err != nil {
		b.t.Fatal(err)
	}
	g, err := gateway.New(b.store, runs, b.issuer.Verify, &b.opts)
	if err != nil {
		b.t.Fatal(err)
	}
	b.gateway = g
	b.srv.Config.Handler = telemetry.Requests(g.Handler(), b.tracing)
}

// publish imports and publishes a process from source, binding every role
// to the group of the same name.
func (b *baton) publish(src string) store.ProcessVersion {
	b.t.Helper()
	d, err := b.registry.Import(context.Background(), []byte(src), "", "u_admin")
	if err != nil {
		b.t.Fatalf("import: %v", err)
	}
	pv, err := b.registry.Publish(context.Background(), d.Process.Name, "u_admin", true)
	if err != nil {
		b.t.Fatalf("publish: %v", err)
	}
	return pv
}

// publishFixture publishes one of the conformance fixtures from its folder.
func (b *baton) publishFixture(name string) store.ProcessVersion {
	b.t.Helper()
	pv, _, err := b.registry.ImportAndPublish(context.Background(), spectest.FixtureDir(b.t, name), "u_admin", nil)
	if err != nil {
		b.t.Fatalf("publish %s: %v", name, err)
	}
	return pv
}

// user is an MCP client session for one identity.
type user struct {
	t  testing.TB
	b  *baton
	id auth.Identity
	cs *mcp.ClientSession
	// outputs are the tools' declared output schemas, compiled.
	outputs map[string]*santhosh.Schema
}

var (
	agentID    = auth.Identity{ID: "a_screener", Kind: auth.KindAgent}
	agent2ID   = auth.Identity{ID: "a_second", Kind: auth.KindAgent}
	operatorID = auth.Identity{ID: "u_ops", Kind: auth.KindOperator}
)

func personID(email string, groups ...string) auth.Identity {
	return auth.Identity{ID: email, Kind: auth.KindPerson, Groups: groups}
}

func (b *baton) token(id auth.Identity) string {
	b.t.Helper()
	tok, err := b.issuer.Issue(id, time.Hour)
	if err != nil {
		b.t.Fatal(err)
	}
	return tok
}

func (b *baton) connect(id auth.Identity) *user {
	b.t.Helper()
	tok := b.token(id)
	d := drive.NewMCP(b.url+"/mcp", func(drive.Who) (string, error) { return tok, nil }, nil)
	cs, err := d.Session(context.Background(), drive.Who{ID: id.ID, Kind: interpreter.ActorKind(id.Kind), Groups: id.Groups})
	if err != nil {
		b.t.Fatal(err)
	}
	b.t.Cleanup(func() { _ = d.Close() })
	return &user{t: b.t, b: b, id: id, cs: cs, outputs: outputSchemas(b.t, cs)}
}

// compiledOutputs are the output schemas compiled so far, by their text:
// every gateway of the suite declares the same ones.
var compiledOutputs sync.Map // string → *santhosh.Schema

// outputSchemas compiles every listed tool's declared output schema, as a
// client that checks structured content does.
func outputSchemas(t testing.TB, cs *mcp.ClientSession) map[string]*santhosh.Schema {
	t.Helper()
	list, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*santhosh.Schema{}
	for _, tool := range list.Tools {
		if tool.OutputSchema == nil {
			t.Fatalf("%s declares no output schema", tool.Name)
		}
		b, err := json.Marshal(tool.OutputSchema)
		if err != nil {
			t.Fatal(err)
		}
		if sch, ok := compiledOutputs.Load(string(b)); ok {
			out[tool.Name] = sch.(*santhosh.Schema)
			continue
		}
		doc, err := santhosh.UnmarshalJSON(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		c := santhosh.NewCompiler()
		c.DefaultDraft(santhosh.Draft2020)
		c.UseLoader(santhosh.SchemeURLLoader{})
		if err := c.AddResource("baton:output", doc); err != nil {
			t.Fatal(err)
		}
		sch, err := c.Compile("baton:output")
		if err != nil {
			t.Fatalf("%s's output schema: %v", tool.Name, err)
		}
		compiledOutputs.Store(string(b), sch)
		out[tool.Name] = sch
	}
	return out
}

// reply is one tool result's envelope.
type reply struct {
	OK    bool               `json:"ok"`
	Data  json.RawMessage    `json:"data"`
	Error *interpreter.Error `json:"error"`
}

// call calls a tool and checks its result against the official schemas,
// success or error.
func (u *user) call(tool string, args map[string]any) reply {
	u.t.Helper()
	return u.check(tool, u.send(tool, args))
}

// send makes one tool call and returns its result unchecked: the round
// trip alone, which a benchmark times apart from the checks.
func (u *user) send(tool string, args map[string]any) *mcp.CallToolResult {
	u.t.Helper()
	res, err := u.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		u.t.Fatalf("%s: %v", tool, err)
	}
	return res
}

// check checks a tool result as call does and returns its envelope.
func (u *user) check(tool string, res *mcp.CallToolResult) reply {
	u.t.Helper()
	text := res.Content[0].(*mcp.TextContent).Text
	var r reply
	if err := interpreter.DecodeExact([]byte(text), &r); err != nil {
		u.t.Fatalf("%s: result is not JSON: %v\n%s", tool, err, text)
	}
	if res.IsError == r.OK {
		u.t.Errorf("%s: isError %v with ok %v", tool, res.IsError, r.OK)
	}
	spectest.ValidateToolResult(u.t, tool, json.RawMessage(text))
	u.checkOutput(tool, res)
	return r
}

// checkOutput checks a result's structured content against the output
// schema the tool declared, as clients do on success and refusal alike,
// and records that the tool answered so.
func (u *user) checkOutput(tool string, res *mcp.CallToolResult) {
	u.t.Helper()
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		u.t.Fatal(err)
	}
	doc, err := santhosh.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		u.t.Fatalf("%s: structured content: %v", tool, err)
	}
	sch := u.outputs[tool]
	if sch == nil {
		u.t.Fatalf("%s is not listed", tool)
	}
	if err := sch.Validate(doc); err != nil {
		u.t.Errorf("%s: structured content breaks the declared output schema: %v\n%s", tool, err, b)
	}
	a := u.b.answered
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.seen[tool] == nil {
		a.seen[tool] = map[bool]bool{}
	}
	a.seen[tool][!res.IsError] = true
}

// ok calls a tool that must succeed and decodes its data into out.
func (u *user) ok(tool string, args map[string]any, out any) {
	u.t.Helper()
	u.succeeded(tool, u.call(tool, args), out)
}

// succeeded fails the test unless r is a success, and decodes its data
// into out.
func (u *user) succeeded(tool string, r reply, out any) {
	u.t.Helper()
	if !r.OK {
		u.t.Fatalf("%s as %s: refused: %+v", tool, u.id.ID, r.Error)
	}
	if out != nil {
		if err := interpreter.DecodeExact(r.Data, out); err != nil {
			u.t.Fatalf("%s: %v", tool, err)
		}
	}
}

// refused calls a tool that must be refused with code (and issues, when
// given).
func (u *user) refused(tool string, args map[string]any, code interpreter.Code, issues ...string) *interpreter.Error {
	u.t.Helper()
	r := u.call(tool, args)
	if r.OK {
		u.t.Fatalf("%s as %s: accepted, want %s", tool, u.id.ID, code)
	}
	if r.Error.Code != code || (issues != nil && strings.Join(r.Error.Issues, "|") != strings.Join(issues, "|")) {
		u.t.Fatalf("%s as %s: got %+v, want %s %q", tool, u.id.ID, r.Error, code, issues)
	}
	return r.Error
}

var reqs atomic.Int64

func rid() string { return fmt.Sprintf("req-%d-%d", time.Now().UnixNano(), reqs.Add(1)) }

func (b *baton) fixtureDir(name string) string {
	return spectest.FixtureDir(b.t, name)
}
