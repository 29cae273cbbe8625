package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/baton-run/baton/gateway/auth"
	"github.com/baton-run/baton/internal/drive"
	"github.com/baton-run/baton/internal/testing/pgtest"
	"github.com/baton-run/baton/interpreter"
)

// devProcesses lists the processes the gateway of a running baton dev
// offers, over MCP.
func devProcesses(t *testing.T, mcpURL, data string) []string {
	t.Helper()
	issuer, err := auth.LoadOrCreateDevKey(data)
	if err != nil {
		t.Fatal(err)
	}
	d := drive.NewMCP(mcpURL, func(w drive.Who) (string, error) {
		return issuer.Issue(auth.Identity{ID: w.ID, Kind: auth.Kind(w.Kind)}, time.Hour)
	}, nil)
	defer d.Close()
	var res struct {
		Items []struct {
			Name    string `json:"name"`
			Version int    `json:"version"`
		} `json:"items"`
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := d.Call(ctx, drive.Who{ID: "a_dev", Kind: interpreter.ActorAgent}, "list_processes", map[string]any{}, &res); err != nil {
		t.Fatalf("list_processes: %v", err)
	}
	var names []string
	for _, it := range res.Items {
		names = append(names, it.Name)
	}
	slices.Sort(names)
	return names
}

// import, publish and processes reach the PostgreSQL of a baton dev through
// --data: its running server while dev runs, and the same cluster started
// for the command when dev is stopped. Dev sees both.
func TestRegistryThroughDevData(t *testing.T) {
	data := pgtest.DataDir(t)
	fixtures := fixturesDir(t)
	dev := launchDev(t, devConfigFor(data))
	if !strings.Contains(dev.printed, "state in postgres") {
		t.Errorf("a new data folder keeps Temporal's state elsewhere than PostgreSQL:\n%s", dev.printed)
	}

	out := batonOK(t, "import", "--data", data, filepath.Join(fixtures, "invoice-approval"))
	if !strings.Contains(out, "draft of invoice-approval") || !strings.Contains(out, "roles to bind: finance-controller, cfo") {
		t.Fatalf("import printed:\n%s", out)
	}
	out = batonOK(t, "publish", "--data", data, "--same-name-groups", "invoice-approval")
	if !strings.HasPrefix(out, "Published invoice-approval v1 ") {
		t.Fatalf("publish printed:\n%s", out)
	}
	if got := devProcesses(t, dev.mcpURL, data); !slices.Equal(got, []string{"invoice-approval"}) {
		t.Fatalf("the running dev offers %v, want the process published through --data", got)
	}
	dev.stop()

	// Dev is stopped: the commands start its cluster for themselves.
	batonOK(t, "import", "--data", data, filepath.Join(fixtures, "support-escalation"))
	out = batonOK(t, "publish", "--data", data, "--role", "tier1-lead=g_support", "--same-name-groups", "support-escalation")
	if !strings.HasPrefix(out, "Published support-escalation v1 ") {
		t.Fatalf("publish printed:\n%s", out)
	}
	out = batonOK(t, "processes", "--data", data)
	if !strings.Contains(out, "invoice-approval\tv1\t") || !strings.Contains(out, "support-escalation\tv1\t") {
		t.Fatalf("processes printed:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(data, "postgres", "postmaster.pid")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a PostgreSQL still runs on the data folder after the commands (stat postmaster.pid: %v)", err)
	}

	dev = launchDev(t, devConfigFor(data))
	if !strings.Contains(dev.printed, "state in postgres") {
		t.Errorf("dev restarted keeps Temporal's state elsewhere than PostgreSQL:\n%s", dev.printed)
	}
	if got := devProcesses(t, dev.mcpURL, data); !slices.Equal(got, []string{"invoice-approval", "support-escalation"}) {
		t.Fatalf("dev restarted offers %v, want both processes", got)
	}
}

// --database-url wins over --data; a --data folder without a cluster is
// refused with what to do.
func TestRegistryFlagsChooseTheDatabase(t *testing.T) {
	db := pgtest.NewDatabase(t)
	empty := t.TempDir() // no cluster: only --database-url can succeed
	fixture := filepath.Join(fixturesDir(t), "expense-reimbursement")
	batonOK(t, "import", "--database-url", db, "--data", empty, fixture)
	out := batonOK(t, "publish", "--database-url", db, "--data", empty, "--same-name-groups", "expense-reimbursement")
	if !strings.HasPrefix(out, "Published expense-reimbursement v1 ") {
		t.Fatalf("publish printed:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(empty, "postgres")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("--data was used although --database-url was given (stat: %v)", err)
	}

	code, _, errOut := baton("processes", "--data", empty)
	if code != 1 || !strings.Contains(errOut, "baton dev --data "+empty) || !strings.Contains(errOut, "--database-url") {
		t.Fatalf("processes on a folder without a cluster: exit %d, stderr:\n%s", code, errOut)
	}
}

// A process whose agent step calls tools is imported and published from
// the command line once the organization's gateways and workers stored a
// tool registration, and checked against it; before, and in another
// organization, it is refused for want of the profile.
func TestRegistryOffersToolsOnceRegistered(t *testing.T) {
	db := pgtest.NewDatabase(t)
	dir := t.TempDir()
	proc := filepath.Join(dir, "ticket")
	if err := os.MkdirAll(proc, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(proc, "PROCESS.md"), []byte(ticketProcess), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errOut := baton("import", "--database-url", db, proc)
	if code != 1 || !strings.Contains(errOut, "needs the baton-tools-1 profile") {
		t.Fatalf("import before any registration: exit %d, stderr:\n%s", code, errOut)
	}

	tools := filepath.Join(dir, "tools.yaml")
	if err := os.WriteFile(tools, []byte("servers:\n  - name: crm\n    url: http://127.0.0.1:1/mcp\n    tools:\n      create_ticket: { policy: write, idempotency: key }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	st, err := openStore(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, _, err := st.RegisterTools(ctx, "o_default", tools, nil); err != nil {
		t.Fatal(err)
	}
	batonOK(t, "import", "--database-url", db, proc)
	if out := batonOK(t, "publish", "--database-url", db, "--same-name-groups", "ticket"); !strings.HasPrefix(out, "Published ticket v1 ") {
		t.Fatalf("publish printed:\n%s", out)
	}
	// Another organization registered nothing.
	code, _, errOut = baton("import", "--database-url", db, "--org", "o_other", proc)
	if code != 1 || !strings.Contains(errOut, "needs the baton-tools-1 profile") {
		t.Fatalf("import in an organization without a registration: exit %d, stderr:\n%s", code, errOut)
	}
	// A tool the registration does not have is refused by name.
	bad := filepath.Join(dir, "bad")
	if err := os.MkdirAll(bad, 0o755); err != nil {
		t.Fatal(err)
	}
	src := strings.Replace(strings.Replace(ticketProcess, "name: ticket", "name: bad", 1), "crm/create_ticket", "crm/refund", 1)
	if err := os.WriteFile(filepath.Join(bad, "PROCESS.md"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errOut = baton("import", "--database-url", db, bad)
	if code != 1 || !strings.Contains(errOut, `no registered tool "refund"`) {
		t.Fatalf("import of an unregistered tool: exit %d, stderr:\n%s", code, errOut)
	}
}

// import and publish take a process that runs others, as every server
// offers baton-subprocess-1: the children are imported and published
// before the parent that names them, whatever order they are given in.
func TestImportAndPublishChildrenFirst(t *testing.T) {
	db := pgtest.NewDatabase(t)
	rfp := filepath.Join(repoRoot(t), "examples", "rfp")
	out := batonOK(t, "import", "--database-url", db, filepath.Join(rfp, "rfp"), filepath.Join(rfp, "supplier-screening"), filepath.Join(rfp, "contract-review"))
	if i, j := strings.Index(out, "draft of supplier-screening"), strings.Index(out, "draft of rfp"); i < 0 || j < 0 || j < i {
		t.Fatalf("import printed:\n%s", out)
	}
	out = batonOK(t, "publish", "--database-url", db, "--same-name-groups", "rfp", "contract-review", "supplier-screening")
	if i, j := strings.Index(out, "Published contract-review v1 "), strings.Index(out, "Published rfp v1 "); i < 0 || j < 0 || j < i {
		t.Fatalf("publish printed:\n%s", out)
	}
}
