package upgrade

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	_ "modernc.org/sqlite"

	"github.com/baton-run/baton/internal/soak"
	"github.com/baton-run/baton/internal/testing/crmtest"
	"github.com/baton-run/baton/internal/testing/pgtest"
	"github.com/baton-run/baton/tests/upgrade/fixture"
)

// fixtures is where the fixtures are, one folder each.
const fixtures = "../testdata/upgrade"

// TestUpgrade opens each fixture's data, written by an earlier Baton, with
// today's: it restores the dumps into a fresh PostgreSQL (and Temporal's
// SQLite file), runs `baton migrate`, starts `baton dev` on that data, and
// checks that the listings are what the earlier Baton listed, that every
// requestId replays to its first answer, and that every run goes on to its
// end through the tools.
func TestUpgrade(t *testing.T) {
	entries, err := os.ReadDir(fixtures)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range entries {
		if _, err := os.Stat(filepath.Join(fixtures, e.Name(), fixture.RecordFile)); !e.IsDir() || err != nil {
			continue
		}
		n++
		dir := filepath.Join(fixtures, e.Name())
		t.Run(e.Name(), func(t *testing.T) { testFixture(t, dir) })
	}
	if n == 0 {
		t.Fatalf("no fixture in %s", fixtures)
	}
}

// upgraded is today's baton dev on a fixture's data.
type upgraded struct {
	t    *testing.T
	ctx  context.Context
	rec  *fixture.Record
	data string
	cl   *fixture.Client
	crm  *crmtest.Server
	dev  *soak.Process
	// retries counts the answers of retry, by tool.
	retries map[string]int
}

func testFixture(t *testing.T, dir string) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	rec, err := fixture.ReadRecord(dir)
	if err != nil {
		t.Fatal(err)
	}
	u := &upgraded{t: t, ctx: ctx, rec: rec, data: t.TempDir()}
	dbURL, devArgs := u.restore(dir)

	// baton migrate brings the earlier schema to today's.
	if out, err := baton("migrate", "--database-url", dbURL); err != nil {
		t.Fatalf("baton migrate: %v\n%s", err, out)
	}

	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	listen := "127.0.0.1:" + strconv.Itoa(port)
	args := append([]string{"dev", "--data", u.data, "--database-url", dbURL, "--listen", listen,
		"--temporal-port", "0", "--ui-port", "0", "--ops-listen", "127.0.0.1:0",
		// The fixture's requestIds are as old as the fixture: remembered
		// for as long as it may be.
		"--request-retention", "876000h"}, devArgs...)
	if rec.Tools {
		u.crm, err = crmtest.Start(nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { u.crm.Close() })
		tools := filepath.Join(t.TempDir(), "tools.yaml")
		reg := fmt.Sprintf("servers:\n  - name: crm\n    url: %s\n    timeout: 10s\n    tools:\n      get_customer: read\n"+
			"      create_ticket: { policy: write, idempotency: key }\n"+
			"      refund: { policy: approval_required, idempotency: key, approvers: [approvers] }\n", u.crm.URL())
		if err := os.WriteFile(tools, []byte(reg), 0o644); err != nil {
			t.Fatal(err)
		}
		args = append(args, "--tools", tools)
	}
	u.dev = &soak.Process{Name: "baton dev", Path: binary, Args: args, Ready: regexp.MustCompile(`^MCP: `)}
	if err := u.dev.Start(2 * time.Minute); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		u.dev.Stop()
		for _, line := range u.dev.Panics() {
			t.Errorf("baton dev panicked: %s", line)
		}
		for _, e := range u.dev.UnexpectedExits() {
			t.Errorf("baton dev: %s", e)
		}
		if t.Failed() {
			t.Logf("baton dev's output:\n%s", u.dev.Tail())
		}
	})
	u.cl = &fixture.Client{URL: "http://" + listen + "/mcp", Token: u.token}
	t.Cleanup(u.cl.Close)

	u.listingsMatch()
	n, otherBytes := u.replays()
	t.Logf("%d requestIds replayed to their first answers, %d byte for byte; as the same JSON in other bytes: %v", n, n-len(otherBytes), otherBytes)
	for _, r := range rec.Runs {
		u.continueRun(r)
	}
	// Every requestId still gives its first answer after the runs went on.
	u.replays()
	if len(u.retries) > 0 {
		t.Logf("calls answered retry and were repeated: %v", u.retries)
	}
}

// restore loads the fixture's dumps into fresh databases and its keys and
// Temporal file into the data folder, and returns Baton's database URL
// and the flags that point baton dev at Temporal's store.
func (u *upgraded) restore(dir string) (string, []string) {
	t := u.t
	srv := pgtest.Shared(t)
	batonDB := u.createDB(srv.CreateDatabase, srv.DropDatabase, "")
	psql(t, srv.DatabaseURL(batonDB), filepath.Join(dir, fixture.BatonDump))

	var keys map[string]string
	b, err := os.ReadFile(filepath.Join(dir, fixture.KeysFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &keys); err != nil {
		t.Fatal(err)
	}
	for name, v := range keys {
		key, err := base64.StdEncoding.DecodeString(v)
		if err != nil {
			t.Fatalf("%s: %s: %v", fixture.KeysFile, name, err)
		}
		if err := os.WriteFile(filepath.Join(u.data, name), key, 0o600); err != nil {
			t.Fatal(err)
		}
	}

	switch u.rec.TemporalStore {
	case fixture.StorePostgres:
		// Temporal's databases are NAME and NAME_visibility, named as
		// they were: the test binary's PostgreSQL is its own.
		name := u.createDB(srv.CreateDatabase, srv.DropDatabase, fixture.TemporalDatabase)
		u.createDB(srv.CreateDatabase, srv.DropDatabase, name+"_visibility")
		psql(t, srv.DatabaseURL(name), filepath.Join(dir, fixture.TemporalDump))
		psql(t, srv.DatabaseURL(name+"_visibility"), filepath.Join(dir, fixture.TemporalVisibilityDump))
		return srv.DatabaseURL(batonDB), []string{"--temporal-store", "postgres", "--temporal-database", name}
	case fixture.StoreSQLite:
		dump, err := os.ReadFile(filepath.Join(dir, fixture.TemporalSQLiteDump))
		if err != nil {
			t.Fatal(err)
		}
		db, err := sql.Open("sqlite", "file:"+filepath.Join(u.data, "temporal.db"))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.Exec(string(dump)); err != nil {
			t.Fatalf("restore Temporal's SQLite store: %v", err)
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		return srv.DatabaseURL(batonDB), []string{"--temporal-store", "sqlite"}
	}
	t.Fatalf("temporalStore %q", u.rec.TemporalStore)
	return "", nil
}

// createDB creates a database (a fresh name when name is empty), dropped
// when the test ends.
func (u *upgraded) createDB(create func(context.Context, string) (string, error), drop func(context.Context, string) error, name string) string {
	name, err := create(u.ctx, name)
	if err != nil {
		u.t.Fatal(err)
	}
	u.t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := drop(ctx, name); err != nil {
			u.t.Errorf("drop %s: %v", name, err)
		}
	})
	return name
}

// psql runs a plain-SQL dump into a database, stopping at the first error.
func psql(t *testing.T, url, file string) {
	t.Helper()
	cmd := exec.Command(psqlPath(t), "--no-psqlrc", "--quiet", "-v", "ON_ERROR_STOP=1", "--dbname", url, "--file", file)
	cmd.Env = soak.ChildEnv()
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("psql %s: %v\n%s", filepath.Base(file), err, out)
	}
}

// psqlPath finds psql on PATH or beside the server binaries.
func psqlPath(t *testing.T) string {
	if p, err := exec.LookPath("psql"); err == nil {
		return p
	}
	for _, pattern := range []string{"/usr/lib/postgresql/*/bin/psql", "/usr/pgsql-*/bin/psql"} {
		if m, _ := filepath.Glob(pattern); len(m) > 0 {
			return m[len(m)-1]
		}
	}
	t.Fatal("psql not found: install the PostgreSQL client")
	return ""
}

// token mints an identity's token with today's `baton token` on the
// fixture's data folder.
func (u *upgraded) token(id fixture.Identity) (string, error) {
	args := []string{"token", "--data", u.data}
	switch id.Kind {
	case "agent":
		args = append(args, "--agent", id.ID)
	case "operator":
		args = append(args, "--operator", id.ID)
	default:
		args = append(args, "--person", id.ID)
	}
	for _, g := range id.Groups {
		args = append(args, "--group", g)
	}
	out, err := baton(args...)
	return strings.TrimSpace(out), err
}

// call calls a tool and fails the test when the call does not get an
// answer. An answer of retry is not an answer: the call is repeated, as the
// spec tells agents to, and counted.
func (u *upgraded) call(who, tool string, args any) fixture.Call {
	u.t.Helper()
	for {
		c, err := u.cl.Call(u.ctx, who, tool, args)
		if err != nil {
			u.t.Fatal(err)
		}
		var env fixture.Envelope
		if json.Unmarshal([]byte(c.Result), &env) != nil || env.OK || env.Error == nil || env.Error.Code != "retry" {
			return c
		}
		if u.retries == nil {
			u.retries = map[string]int{}
		}
		u.retries[tool]++
		select {
		case <-u.ctx.Done():
			u.t.Fatalf("%s as %s answers retry until the test's end: %s", tool, who, c.Result)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// ok calls a tool, fails the test on a refusal, and decodes its data.
func (u *upgraded) ok(who, tool string, args map[string]any, out any) {
	u.t.Helper()
	if err := u.call(who, tool, args).Data(out); err != nil {
		u.t.Fatalf("%s as %s %v: %v", tool, who, args, err)
	}
}

// listingsMatch reads each recorded listing again: every entry the
// earlier Baton listed is listed again, in the same order, with the same
// values (fields added since may be added).
func (u *upgraded) listingsMatch() {
	t := u.t
	for _, l := range u.rec.Listings {
		got := u.call(l.Who, l.Tool, l.Args)
		var was, is fixture.Envelope
		if err := json.Unmarshal([]byte(l.Result), &was); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal([]byte(got.Result), &is); err != nil || !is.OK {
			t.Fatalf("%s as %s: %s (%v)", l.Tool, l.Who, got.Result, err)
		}
		var wasPage, isPage struct {
			Items []map[string]any `json:"items"`
		}
		_ = json.Unmarshal(was.Data, &wasPage)
		if err := json.Unmarshal(is.Data, &isPage); err != nil {
			t.Fatalf("%s as %s: %v", l.Tool, l.Who, err)
		}
		if len(isPage.Items) != len(wasPage.Items) {
			t.Errorf("%s as %s lists %d items, the earlier Baton listed %d:\nwas %s\nis  %s", l.Tool, l.Who, len(isPage.Items), len(wasPage.Items), l.Result, got.Result)
			continue
		}
		for i, w := range wasPage.Items {
			for k, v := range w {
				if !reflect.DeepEqual(isPage.Items[i][k], v) {
					t.Errorf("%s as %s, item %d: %s is %v, the earlier Baton listed %v", l.Tool, l.Who, i, k, isPage.Items[i][k], v)
				}
			}
		}
	}
}

// replays repeats every recorded write with its requestId: each answers
// its first answer. The answer is compared as JSON (the same values, keys
// in any order): an earlier Baton kept answers as jsonb, whose text has
// its own key order and spacing, and replayed that text. It returns how
// many replays there were and which were not the same bytes.
func (u *upgraded) replays() (n int, otherBytes []string) {
	for _, c := range u.rec.Calls {
		if c.RequestID() == "" {
			continue
		}
		n++
		got := u.call(c.Who, c.Tool, c.Args)
		if got.Result != c.Result {
			otherBytes = append(otherBytes, c.Tool+" "+c.RequestID())
		}
		if !sameJSON(got.Result, c.Result) || got.IsError != c.IsError {
			u.t.Errorf("%s %s replays otherwise:\nfirst  %s\nreplay %s", c.Tool, c.RequestID(), c.Result, got.Result)
		}
	}
	if n == 0 {
		u.t.Fatal("the fixture records no write")
	}
	return n, otherBytes
}

// sameJSON says a and b are the same JSON values, numbers compared as
// written.
func sameJSON(a, b string) bool {
	decode := func(s string) (any, bool) {
		d := json.NewDecoder(strings.NewReader(s))
		d.UseNumber()
		var v any
		return v, d.Decode(&v) == nil
	}
	va, ok1 := decode(a)
	vb, ok2 := decode(b)
	return ok1 && ok2 && reflect.DeepEqual(va, vb)
}

// runView is what the test reads of a run view.
type runView struct {
	Run struct {
		ID      string  `json:"id"`
		State   string  `json:"state"`
		Outcome *string `json:"outcome"`
	} `json:"run"`
	Steps []struct {
		ID    string  `json:"id"`
		State *string `json:"state"`
	} `json:"steps"`
	WorkItems []struct {
		ID       string `json:"id"`
		StepID   string `json:"stepId"`
		Kind     string `json:"kind"`
		Snapshot string `json:"snapshot"`
	} `json:"workItems"`
}

func (u *upgraded) view(runID string) runView {
	var v runView
	u.ok("operator", "get_run", map[string]any{"runId": runID}, &v)
	return v
}

// until reads the run until cond holds.
func (u *upgraded) until(runID, what string, cond func(runView) bool) runView {
	u.t.Helper()
	for {
		v := u.view(runID)
		if cond(v) {
			return v
		}
		select {
		case <-u.ctx.Done():
			u.t.Fatalf("run %s: not %s: %+v", runID, what, v)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func stepState(v runView, step string) string {
	for _, s := range v.Steps {
		if s.ID == step && s.State != nil {
			return *s.State
		}
	}
	return ""
}

var requestSeq int

func requestID() string {
	requestSeq++
	return fmt.Sprintf("upgraded-%d-%d", time.Now().UnixNano(), requestSeq)
}

// claim claims the run's agent step and returns the token.
func (u *upgraded) claim(runID string) string {
	u.until(runID, "with its agent step ready", func(v runView) bool { return stepState(v, "work") == "ready" })
	var c struct {
		Token string `json:"token"`
	}
	u.ok("agent", "claim", map[string]any{"runId": runID, "stepId": "work", "requestId": requestID()}, &c)
	return c.Token
}

func (u *upgraded) submit(token, note string) {
	u.ok("agent", "submit", map[string]any{"token": token, "output": map[string]any{"note": note}, "summary": "Noted " + note + ".", "requestId": requestID()}, nil)
}

// decide decides the run's open work item of step as the person.
func (u *upgraded) decide(runID, step string, decision map[string]any) {
	u.t.Helper()
	v := u.until(runID, "with a work item of "+step, func(v runView) bool {
		for _, w := range v.WorkItems {
			if w.StepID == step {
				return true
			}
		}
		return false
	})
	for _, w := range v.WorkItems {
		if w.StepID == step {
			args := map[string]any{"runId": runID, "workItemId": w.ID, "snapshot": w.Snapshot, "requestId": requestID()}
			for k, x := range decision {
				args[k] = x
			}
			u.ok("person", "decide", args, nil)
			return
		}
	}
}

func (u *upgraded) approveAndPay(runID string, held bool) {
	u.decide(runID, "review", map[string]any{"decision": "approved"})
	if !held {
		u.until(runID, "waiting for its event", func(v runView) bool { return stepState(v, "paid") == "waiting" })
		u.ok("agent", "send_event", map[string]any{"runId": runID, "name": "paid", "data": map[string]any{"amount": 1}, "requestId": requestID()}, nil)
	}
	u.ended(runID, "done")
}

// ended waits for the run to end with outcome ("cancelled": cancelled).
func (u *upgraded) ended(runID, outcome string) {
	u.t.Helper()
	u.until(runID, "ended "+outcome, func(v runView) bool {
		if outcome == "cancelled" {
			return v.Run.State == "cancelled"
		}
		return v.Run.State == "ended" && v.Run.Outcome != nil && *v.Run.Outcome == outcome
	})
	// An ended run takes no new write.
	c := u.call("operator", "cancel", map[string]any{"runId": runID, "reason": "After its end.", "requestId": requestID()})
	var env fixture.Envelope
	if err := json.Unmarshal([]byte(c.Result), &env); err != nil || env.OK || env.Error == nil || env.Error.Code != "conflict" || !contains(env.Error.Issues, "run_ended") {
		u.t.Errorf("run %s: cancel after its end answers %s, want conflict run_ended", runID, c.Result)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// continueRun takes a run from the state the earlier Baton left it in to
// its end, through the tools.
func (u *upgraded) continueRun(r fixture.Run) {
	u.t.Run(r.Shape, func(t *testing.T) {
		prev := u.t
		u.t = t
		defer func() { u.t = prev }()
		switch r.Shape {
		case fixture.ShapeReady:
			u.submit(u.claim(r.ID), "ready")
			u.approveAndPay(r.ID, false)
		case fixture.ShapeClaimed:
			// The earlier Baton's claim token still holds the claim.
			if s := stepState(u.view(r.ID), "work"); s != "claimed" {
				t.Fatalf("the claimed step is %q", s)
			}
			u.submit(r.Token, "claimed")
			u.approveAndPay(r.ID, false)
		case fixture.ShapeEscalated:
			u.decide(r.ID, "work", map[string]any{"decision": "completed", "output": map[string]any{"note": "read by a person"}})
			u.approveAndPay(r.ID, false)
		case fixture.ShapeReview:
			u.approveAndPay(r.ID, false)
		case fixture.ShapeWaiting:
			u.until(r.ID, "waiting for its event", func(v runView) bool { return stepState(v, "paid") == "waiting" })
			u.ok("agent", "send_event", map[string]any{"runId": r.ID, "name": "paid", "requestId": requestID()}, nil)
			u.ended(r.ID, "done")
		case fixture.ShapeHeld:
			// The event held by the earlier Baton satisfies the wait.
			u.submit(u.claim(r.ID), "held")
			u.approveAndPay(r.ID, true)
		case fixture.ShapeDone:
			u.ended(r.ID, "done")
		case fixture.ShapeFailed:
			u.ended(r.ID, "failed")
		case fixture.ShapeRejected:
			u.ended(r.ID, "rejected")
		case fixture.ShapeCancelled:
			u.ended(r.ID, "cancelled")
		case fixture.ShapeJournaled:
			// The journal answers the ticket made before the upgrade:
			// nothing reaches today's crm.
			var ans struct {
				Status string `json:"status"`
				Reused bool   `json:"reused"`
			}
			u.ok("agent", "call_tool", map[string]any{"token": r.Token, "tool": "crm/create_ticket",
				"arguments": map[string]any{"customer": "alice@example.com", "subject": "Late order"}, "requestId": requestID()}, &ans)
			if ans.Status != "completed" || !ans.Reused {
				t.Errorf("the journaled ticket answers %+v, want completed and reused", ans)
			}
			if calls := u.crm.Calls("create_ticket"); len(calls) != 0 {
				t.Errorf("the journaled ticket was sent again: %d calls", len(calls))
			}
			u.submit(r.Token, "journaled")
			u.approveAndPay(r.ID, false)
		case fixture.ShapeApproval:
			// A person approves the refund proposed before the upgrade;
			// the next claimant repeats it and it runs, once.
			u.decide(r.ID, "work", map[string]any{"decision": "approved"})
			tok := u.claim(r.ID)
			var ans struct {
				Status string `json:"status"`
			}
			u.ok("agent", "call_tool", map[string]any{"token": tok, "tool": "crm/refund", "arguments": json.RawMessage(r.Refund), "requestId": requestID()}, &ans)
			if ans.Status != "completed" || u.crm.Effects("refund") != 1 {
				t.Errorf("the approved refund answers %s and took %d effects, want completed and 1", ans.Status, u.crm.Effects("refund"))
			}
			u.submit(tok, "approval")
			u.approveAndPay(r.ID, false)
		default:
			t.Fatalf("shape %q", r.Shape)
		}
	})
}

// baton runs today's binary with args and returns its standard output; a
// failure carries its standard error.
func baton(args ...string) (string, error) {
	cmd := exec.Command(binary, args...)
	cmd.Env = soak.ChildEnv()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return string(out), fmt.Errorf("baton %s: %w\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return string(out), nil
}

// freePort is a loopback port that was free a moment ago.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
