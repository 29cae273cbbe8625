// Command generate writes an upgrade fixture (tests/upgrade/fixture) from
// an earlier build of baton: it runs that build's `baton dev` on a private
// PostgreSQL, leaves runs in every state through its MCP tools (open agent
// work, a claim, an escalation, a person's approval, a wait with and
// without a held event, runs ended every way, and, when the build offers
// baton-tools-1, journaled tool calls and a call awaiting approval),
// recording every call with its requestId and first answer and the
// listings; then stops it cleanly and writes the fixture: plain-SQL dumps
// of Baton's database and of Temporal's store, the data folder's keys and
// the record.
//
//	go run ./tests/upgrade/generate -baton OLD-BATON -commit HASH -out DIR
//
// tests/testdata/upgrade/README.md says how each fixture was made.
package main

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	_ "modernc.org/sqlite"

	"github.com/baton-run/baton/internal/pgserver"
	"github.com/baton-run/baton/internal/testing/crmtest"
	"github.com/baton-run/baton/tests/upgrade/fixture"
)

func main() {
	batonBin := flag.String("baton", "", "the earlier build's baton binary")
	commit := flag.String("commit", "", "the commit it was built from")
	out := flag.String("out", "", "the fixture folder to write")
	store := flag.String("temporal-store", fixture.StoreSQLite, "where the build's Temporal keeps its state: sqlite or postgres (a build without --temporal-store keeps it in sqlite)")
	tools := flag.Bool("tools", false, "the build offers baton-tools-1 (baton dev --tools): register a crm and journal tool calls")
	flag.Parse()
	if *batonBin == "" || *commit == "" || *out == "" {
		flag.Usage()
		os.Exit(2)
	}
	if err := run(*batonBin, *commit, *out, *store, *tools); err != nil {
		fmt.Fprintln(os.Stderr, "generate:", err)
		os.Exit(1)
	}
}

// process is the one process every run runs: an agent step, a person's
// approval, a wait for an event, a finish. %s is the agent step's tools.
const process = `---
name: upgrade
description: An agent notes a reference, a reviewer approves it, the run waits for payment and finishes.
inputs:
  ref: string
steps:
  - id: work
    agent: Note the reference.
    output: { note: string }
%s  - id: review
    person: reviewers
    approve: Approve the note.
  - id: paid
    wait_for: paid
  - id: done
    finish: done
---

# Upgrade

A run of every state, written by an earlier Baton.
`

const processTools = `    tools:
      - crm/get_customer
      - crm/create_ticket
      - crm/refund
`

const toolsFile = `servers:
  - name: crm
    url: %s
    timeout: 10s
    tools:
      get_customer: read
      create_ticket: { policy: write, idempotency: key }
      refund: { policy: approval_required, idempotency: key, approvers: [approvers] }
`

func run(batonBin, commit, out, store string, tools bool) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	batonBin, err := filepath.Abs(batonBin)
	if err != nil {
		return err
	}
	work, err := os.MkdirTemp("", "baton-upgrade-gen-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	if err := os.Chmod(work, 0o755); err != nil {
		return err
	}
	pg, err := pgserver.Start(ctx, nil)
	if err != nil {
		return err
	}
	defer pg.Stop()
	if _, err := pg.CreateDatabase(ctx, "baton"); err != nil {
		return err
	}
	data := filepath.Join(work, "data")
	procDir := filepath.Join(work, "processes", "upgrade")
	if err := os.MkdirAll(procDir, 0o755); err != nil {
		return err
	}
	stepTools := ""
	if tools {
		stepTools = processTools
	}
	if err := os.WriteFile(filepath.Join(procDir, "PROCESS.md"), []byte(fmt.Sprintf(process, stepTools)), 0o644); err != nil {
		return err
	}
	port, err := freePort()
	if err != nil {
		return err
	}
	listen := "127.0.0.1:" + strconv.Itoa(port)
	args := []string{"dev", "--data", data, "--database-url", pg.DatabaseURL("baton"), "--listen", listen,
		"--temporal-port", "0", "--ui-port", "0", "--lease", "87600h", "--processes", procDir}
	if store == fixture.StorePostgres {
		args = append(args, "--temporal-store", "postgres")
	} else if store != fixture.StoreSQLite {
		return fmt.Errorf("-temporal-store %q: want sqlite or postgres", store)
	}
	if !tools {
		// The builds before baton-tools-1 served OAuth on a port of their own.
		args = append(args, "--oauth-listen=")
	}
	if tools {
		crm, err := crmtest.Start(nil)
		if err != nil {
			return err
		}
		defer crm.Close()
		f := filepath.Join(work, "tools.yaml")
		if err := os.WriteFile(f, []byte(fmt.Sprintf(toolsFile, crm.URL())), 0o644); err != nil {
			return err
		}
		args = append(args, "--tools", f)
	}
	dev, err := startDev(ctx, batonBin, args, filepath.Join(work, "dev.log"))
	if err != nil {
		return err
	}
	rec := &fixture.Record{Commit: commit, TemporalStore: store, Tools: tools, Process: "upgrade"}
	cl := &fixture.Client{URL: "http://" + listen + "/mcp", Token: func(id fixture.Identity) (string, error) {
		a := []string{"token", "--data", data, "--ttl", "87600h"}
		switch id.Kind {
		case "agent":
			a = append(a, "--agent", id.ID)
		case "operator":
			a = append(a, "--operator", id.ID)
		default:
			a = append(a, "--person", id.ID)
		}
		for _, g := range id.Groups {
			a = append(a, "--group", g)
		}
		b, err := exec.Command(batonBin, a...).Output()
		return strings.TrimSpace(string(b)), err
	}}
	g := &gen{ctx: ctx, cl: cl, rec: rec}
	err = g.drive()
	cl.Close()
	if stopErr := dev.stop(); err == nil && stopErr != nil {
		err = stopErr
	}
	if err != nil {
		log, _ := os.ReadFile(filepath.Join(work, "dev.log"))
		return fmt.Errorf("%w\nbaton dev's log:\n%s", err, tail(log))
	}

	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	if err := pgDump(ctx, pg, "baton", filepath.Join(out, fixture.BatonDump)); err != nil {
		return err
	}
	if store == fixture.StorePostgres {
		if err := pgDump(ctx, pg, "temporal", filepath.Join(out, fixture.TemporalDump)); err != nil {
			return err
		}
		if err := pgDump(ctx, pg, "temporal_visibility", filepath.Join(out, fixture.TemporalVisibilityDump)); err != nil {
			return err
		}
	} else {
		if err := dumpSQLite(filepath.Join(data, "temporal.db"), filepath.Join(out, fixture.TemporalSQLiteDump)); err != nil {
			return err
		}
	}
	keys := map[string]string{}
	for _, name := range []string{"dev-token.key", "secret.key"} {
		b, err := os.ReadFile(filepath.Join(data, name))
		if err != nil {
			return err
		}
		keys[name] = base64.StdEncoding.EncodeToString(b)
	}
	if err := fixture.WriteJSON(filepath.Join(out, fixture.KeysFile), keys); err != nil {
		return err
	}
	return fixture.WriteJSON(filepath.Join(out, fixture.RecordFile), rec)
}

// gen drives the earlier build and records what it answered.
type gen struct {
	ctx context.Context
	cl  *fixture.Client
	rec *fixture.Record
	n   int
}

// requestID is the next requestId; the fixture's are readable and unique.
func (g *gen) requestID() string {
	g.n++
	return fmt.Sprintf("upgrade-%03d", g.n)
}

// call calls a tool, records it and returns it; a refusal is an error
// unless refusedOK.
func (g *gen) call(who, tool string, args map[string]any, out any) (fixture.Call, error) {
	c, err := g.cl.Call(g.ctx, who, tool, args)
	if err != nil {
		return c, err
	}
	g.rec.Calls = append(g.rec.Calls, c)
	if err := c.Data(out); err != nil {
		return c, err
	}
	return c, nil
}

type view struct {
	Run struct {
		ID    string `json:"id"`
		State string `json:"state"`
	} `json:"run"`
	WorkItems []struct {
		ID       string `json:"id"`
		StepID   string `json:"stepId"`
		Snapshot string `json:"snapshot"`
	} `json:"workItems"`
}

func (g *gen) start(ref string) (string, error) {
	var v view
	_, err := g.call("agent", "start_run", map[string]any{"process": "upgrade", "inputs": map[string]any{"ref": ref}, "requestId": g.requestID()}, &v)
	return v.Run.ID, err
}

func (g *gen) claim(runID string) (string, error) {
	var c struct {
		Token string `json:"token"`
	}
	_, err := g.call("agent", "claim", map[string]any{"runId": runID, "stepId": "work", "requestId": g.requestID()}, &c)
	return c.Token, err
}

func (g *gen) submit(token, note string) error {
	_, err := g.call("agent", "submit", map[string]any{"token": token, "output": map[string]any{"note": note}, "summary": "Noted " + note + ".", "requestId": g.requestID()}, nil)
	return err
}

// item is the run's open work item of step, read with get_run.
func (g *gen) item(runID, step string) (id, snapshot string, err error) {
	var v view
	if _, err := g.call("person", "get_run", map[string]any{"runId": runID}, &v); err != nil {
		return "", "", err
	}
	for _, w := range v.WorkItems {
		if w.StepID == step {
			return w.ID, w.Snapshot, nil
		}
	}
	return "", "", fmt.Errorf("run %s has no work item of %s", runID, step)
}

func (g *gen) decide(runID, step, decision, note string) error {
	id, snap, err := g.item(runID, step)
	if err != nil {
		return err
	}
	args := map[string]any{"runId": runID, "workItemId": id, "snapshot": snap, "decision": decision, "requestId": g.requestID()}
	if note != "" {
		args["note"] = note
	}
	_, err = g.call("person", "decide", args, nil)
	return err
}

func (g *gen) send(runID string) error {
	_, err := g.call("agent", "send_event", map[string]any{"runId": runID, "name": "paid", "data": map[string]any{"amount": 12.5}, "requestId": g.requestID()}, nil)
	return err
}

// reviewed walks a run to its approval: claimed, submitted.
func (g *gen) reviewed(ref string) (string, error) {
	id, err := g.start(ref)
	if err != nil {
		return "", err
	}
	tok, err := g.claim(id)
	if err != nil {
		return "", err
	}
	return id, g.submit(tok, ref)
}

func (g *gen) left(id, shape string) {
	g.rec.Runs = append(g.rec.Runs, fixture.Run{ID: id, Shape: shape})
}

// drive leaves one run of every shape and records the listings.
func (g *gen) drive() error {
	// Open agent work.
	id, err := g.start("ready")
	if err != nil {
		return err
	}
	g.left(id, fixture.ShapeReady)

	// A claim, renewed with a progress note.
	if id, err = g.start("claimed"); err != nil {
		return err
	}
	tok, err := g.claim(id)
	if err != nil {
		return err
	}
	var renewed struct {
		Token string `json:"token"`
	}
	if _, err := g.call("agent", "renew", map[string]any{"token": tok, "progress": "Half noted.", "requestId": g.requestID()}, &renewed); err != nil {
		return err
	}
	g.rec.Runs = append(g.rec.Runs, fixture.Run{ID: id, Shape: fixture.ShapeClaimed, Token: renewed.Token})

	// Handed to a person.
	if id, err = g.start("escalated"); err != nil {
		return err
	}
	if tok, err = g.claim(id); err != nil {
		return err
	}
	if _, err := g.call("agent", "escalate", map[string]any{"token": tok, "note": "I cannot read the reference.", "requestId": g.requestID()}, nil); err != nil {
		return err
	}
	g.left(id, fixture.ShapeEscalated)

	// A person's approval open.
	if id, err = g.reviewed("review"); err != nil {
		return err
	}
	g.left(id, fixture.ShapeReview)

	// Waiting for an event.
	if id, err = g.reviewed("waiting"); err != nil {
		return err
	}
	if err := g.decide(id, "review", "approved", ""); err != nil {
		return err
	}
	g.left(id, fixture.ShapeWaiting)

	// The event held before its wait.
	if id, err = g.start("held"); err != nil {
		return err
	}
	if err := g.send(id); err != nil {
		return err
	}
	g.left(id, fixture.ShapeHeld)

	// Ended by its finish.
	if id, err = g.reviewed("done"); err != nil {
		return err
	}
	if err := g.decide(id, "review", "approved", ""); err != nil {
		return err
	}
	if err := g.send(id); err != nil {
		return err
	}
	g.left(id, fixture.ShapeDone)

	// Ended failed.
	if id, err = g.reviewed("failed"); err != nil {
		return err
	}
	if err := g.decide(id, "review", "failed", "The reference is not ours."); err != nil {
		return err
	}
	g.left(id, fixture.ShapeFailed)

	// Ended rejected.
	if id, err = g.reviewed("rejected"); err != nil {
		return err
	}
	if err := g.decide(id, "review", "rejected", "Wrong note."); err != nil {
		return err
	}
	g.left(id, fixture.ShapeRejected)

	// Cancelled.
	if id, err = g.start("cancelled"); err != nil {
		return err
	}
	if _, err := g.call("operator", "cancel", map[string]any{"runId": id, "reason": "Started by mistake.", "requestId": g.requestID()}, nil); err != nil {
		return err
	}
	g.left(id, fixture.ShapeCancelled)

	// A file uploaded, kept by its requestId.
	if _, err := g.call("agent", "upload", map[string]any{"fileName": "note.txt", "contentType": "text/plain",
		"contentBase64": base64.StdEncoding.EncodeToString([]byte("A note.\n")), "requestId": g.requestID()}, nil); err != nil {
		return err
	}

	if g.rec.Tools {
		if err := g.driveTools(); err != nil {
			return err
		}
	}
	return g.listings()
}

// driveTools journals tool calls on a claimed step, and leaves a refund
// awaiting a person's approval.
func (g *gen) driveTools() error {
	id, err := g.start("journaled")
	if err != nil {
		return err
	}
	tok, err := g.claim(id)
	if err != nil {
		return err
	}
	if _, err := g.call("agent", "call_tool", map[string]any{"token": tok, "tool": "crm/get_customer",
		"arguments": map[string]any{"email": "alice@example.com"}, "requestId": g.requestID()}, nil); err != nil {
		return err
	}
	if _, err := g.call("agent", "call_tool", map[string]any{"token": tok, "tool": "crm/create_ticket",
		"arguments": map[string]any{"customer": "alice@example.com", "subject": "Late order"}, "requestId": g.requestID()}, nil); err != nil {
		return err
	}
	g.rec.Runs = append(g.rec.Runs, fixture.Run{ID: id, Shape: fixture.ShapeJournaled, Token: tok})

	if id, err = g.start("approval"); err != nil {
		return err
	}
	if tok, err = g.claim(id); err != nil {
		return err
	}
	refund := map[string]any{"customer": "bob@example.com", "amount": 12.5, "currency": "EUR", "reason": "Late order"}
	var answer struct {
		Status string `json:"status"`
	}
	if _, err := g.call("agent", "call_tool", map[string]any{"token": tok, "tool": "crm/refund", "arguments": refund, "requestId": g.requestID()}, &answer); err != nil {
		return err
	}
	if answer.Status != "awaiting_approval" {
		return fmt.Errorf("the refund is %s, want awaiting_approval", answer.Status)
	}
	raw, _ := json.Marshal(refund)
	g.rec.Runs = append(g.rec.Runs, fixture.Run{ID: id, Shape: fixture.ShapeApproval, Refund: raw})
	return nil
}

// listings records list_runs as the operator, and get_work as the agent
// and the person.
func (g *gen) listings() error {
	// Let the read model catch up with the last writes: a listing is read
	// until two reads a moment apart agree.
	reads := []fixture.Listing{
		{Who: "operator", Tool: "list_runs", Args: json.RawMessage(`{"limit":100}`)},
		{Who: "agent", Tool: "get_work", Args: json.RawMessage(`{"limit":100}`)},
		{Who: "person", Tool: "get_work", Args: json.RawMessage(`{"limit":100}`)},
	}
	for _, r := range reads {
		prev := ""
		for i := 0; ; i++ {
			c, err := g.cl.Call(g.ctx, r.Who, r.Tool, r.Args)
			if err != nil {
				return err
			}
			if err := c.Data(nil); err != nil {
				return err
			}
			if c.Result == prev {
				r.Result = c.Result
				break
			}
			if i > 50 {
				return fmt.Errorf("%s as %s does not settle", r.Tool, r.Who)
			}
			prev = c.Result
			time.Sleep(200 * time.Millisecond)
		}
		g.rec.Listings = append(g.rec.Listings, r)
	}
	return nil
}

// devProcess is the earlier build's `baton dev`.
type devProcess struct {
	cmd  *exec.Cmd
	done chan error
}

// startDev starts baton dev and waits for its MCP line.
func startDev(ctx context.Context, bin string, args []string, logFile string) (*devProcess, error) {
	log, err := os.Create(logFile)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, args...)
	cmd.Stderr = log
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "BATON_") {
			env = append(env, kv)
		}
	}
	cmd.Env = env
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	d := &devProcess{cmd: cmd, done: make(chan error, 1)}
	ready := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stdout)
		signalled := false
		for sc.Scan() {
			fmt.Fprintln(log, sc.Text())
			if !signalled && strings.HasPrefix(sc.Text(), "MCP: ") {
				close(ready)
				signalled = true
			}
		}
		_, _ = io.Copy(io.Discard, stdout)
		d.done <- cmd.Wait()
		log.Close()
	}()
	select {
	case <-ready:
		return d, nil
	case err := <-d.done:
		b, _ := os.ReadFile(logFile)
		return nil, fmt.Errorf("baton dev exited before it was ready: %v\n%s", err, tail(b))
	case <-ctx.Done():
		_ = cmd.Process.Kill()
		return nil, errors.New("baton dev was not ready in time")
	}
}

// stop stops baton dev as Ctrl-C does and waits for it.
func (d *devProcess) stop() error {
	_ = d.cmd.Process.Signal(syscall.SIGINT)
	select {
	case err := <-d.done:
		return err
	case <-time.After(time.Minute):
		_ = d.cmd.Process.Kill()
		return errors.New("baton dev did not stop within a minute of SIGINT")
	}
}

// pgDump writes database db as plain SQL, without owners or privileges.
func pgDump(ctx context.Context, pg *pgserver.Server, db, path string) error {
	cmd := exec.CommandContext(ctx, "pg_dump", "--no-owner", "--no-privileges", "--dbname", pg.DatabaseURL(db), "--file", path)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("pg_dump %s: %v\n%s", db, err, out)
	}
	return nil
}

// dumpSQLite writes a SQLite file as SQL text: its schema, then every
// table's rows as INSERTs, blobs in hex.
func dumpSQLite(file, path string) error {
	db, err := sql.Open("sqlite", "file:"+file+"?mode=ro")
	if err != nil {
		return err
	}
	defer db.Close()
	rows, err := db.Query(`SELECT type, name, tbl_name, sql FROM sqlite_master WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite_%' ORDER BY CASE type WHEN 'table' THEN 0 ELSE 1 END, name`)
	if err != nil {
		return err
	}
	type object struct{ typ, name, table, sql string }
	var objs []object
	for rows.Next() {
		var o object
		if err := rows.Scan(&o.typ, &o.name, &o.table, &o.sql); err != nil {
			return err
		}
		objs = append(objs, o)
	}
	if err := rows.Err(); err != nil {
		return err
	}
	rows.Close()
	// A virtual table (Temporal's full-text indexes) makes its shadow
	// tables itself: they are not created again, and their rows replace
	// the ones it starts with. The virtual table's own rows live in them.
	virtual := map[string]bool{}
	for _, o := range objs {
		if o.typ == "table" && strings.HasPrefix(strings.ToUpper(o.sql), "CREATE VIRTUAL TABLE") {
			virtual[o.name] = true
		}
	}
	shadow := func(name string) bool {
		for v := range virtual {
			if strings.HasPrefix(name, v+"_") {
				return true
			}
		}
		return false
	}
	var b strings.Builder
	b.WriteString("BEGIN TRANSACTION;\n")
	for _, o := range objs {
		if o.typ == "table" && !shadow(o.name) {
			b.WriteString(o.sql + ";\n")
		}
	}
	for _, o := range objs {
		if o.typ != "table" || virtual[o.name] {
			continue
		}
		insert := "INSERT"
		if shadow(o.name) {
			insert = "INSERT OR REPLACE"
		}
		if err := dumpTable(db, o.name, insert, &b); err != nil {
			return fmt.Errorf("table %s: %w", o.name, err)
		}
	}
	for _, o := range objs {
		if o.typ != "table" {
			b.WriteString(o.sql + ";\n")
		}
	}
	b.WriteString("COMMIT;\n")
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

func dumpTable(db *sql.DB, table, insert string, b *strings.Builder) error {
	q := `"` + strings.ReplaceAll(table, `"`, `""`) + `"`
	cols, err := db.Query("SELECT name FROM pragma_table_info(?) ORDER BY cid", table)
	if err != nil {
		return err
	}
	var quoted []string
	for cols.Next() {
		var c string
		if err := cols.Scan(&c); err != nil {
			return err
		}
		quoted = append(quoted, `quote("`+strings.ReplaceAll(c, `"`, `""`)+`")`)
	}
	if err := cols.Err(); err != nil {
		return err
	}
	cols.Close()
	// quote() is SQLite's own literal of a value, of its stored type:
	// text, integer, real, blob (X'..') or NULL, so the rows load back
	// exactly, in a stable order.
	rows, err := db.Query("SELECT " + strings.Join(quoted, " || ',' || ") + " AS v FROM " + q + " ORDER BY v")
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var vals string
		if err := rows.Scan(&vals); err != nil {
			return err
		}
		b.WriteString(insert + " INTO " + q + " VALUES(" + vals + ");\n")
	}
	return rows.Err()
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

func tail(b []byte) string {
	if len(b) > 8000 {
		b = b[len(b)-8000:]
	}
	return string(b)
}
