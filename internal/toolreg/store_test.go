package toolreg_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/baton-run/baton/internal/pgtest"
	"github.com/baton-run/baton/internal/store"
	"github.com/baton-run/baton/internal/toolreg"
)

func TestMain(m *testing.M) {
	code := m.Run()
	pgtest.StopShared()
	os.Exit(code)
}

const org = "o_test"

// newStore returns a migrated store on a database of its own.
func newStore(t *testing.T) *store.Store {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, pgtest.NewDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	if _, err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	return st
}

func TestSaveLoad(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := newStore(t)
	empty, err := toolreg.Load(ctx, st, org)
	if err != nil || len(empty.Servers) != 0 || len(empty.Catalog().Tools) != 0 {
		t.Fatalf("nothing stored: %+v, %v", empty, err)
	}
	f, err := toolreg.Parse([]byte(storyFile), &toolreg.ParseOptions{Dir: "/etc/baton"})
	if err != nil {
		t.Fatal(err)
	}
	if err := toolreg.Save(ctx, st, org, f); err != nil {
		t.Fatal(err)
	}
	back, err := toolreg.Load(ctx, st, org)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := json.Marshal(f)
	got, _ := json.Marshal(back)
	if string(got) != string(want) {
		t.Errorf("round trip:\n got %s\nwant %s", got, want)
	}
	// Only the reference is stored.
	rows, err := st.ToolServers(ctx, org)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(rows[0].Credentials)
	if string(raw) != `{"env":"CRM_TOKEN","header":"Authorization","scheme":"Bearer"}` {
		t.Errorf("stored credentials: %s", raw)
	}
}

func TestRefresh(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := newStore(t)
	f, err := toolreg.Parse([]byte(storyFile), &toolreg.ParseOptions{Dir: "/etc/baton"})
	if err != nil {
		t.Fatal(err)
	}
	if err := toolreg.Save(ctx, st, org, f); err != nil {
		t.Fatal(err)
	}
	schema := json.RawMessage(`{"type":"object"}`)
	list := func(ctx context.Context, s toolreg.Server) ([]store.ListedTool, error) {
		if _, ok := ctx.Deadline(); !ok {
			t.Errorf("listing %s without a deadline", s.Name)
		}
		if s.Name == "erp" {
			return nil, errors.New("connection refused")
		}
		return []store.ListedTool{
			{Name: "get_customer", Description: "Look up a customer.", InputSchema: schema},
			{Name: "refund", Description: "Refund a customer.", InputSchema: schema},
			{Name: "delete_customer", Description: "Not registered.", InputSchema: schema},
		}, nil
	}
	warnings, err := toolreg.Refresh(ctx, st, org, f, list)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"tool server crm does not list the registered tool create_ticket; calling it gets the server's own answer",
		"tool server erp did not list its tools (connection refused); its previous listing stays",
	}
	if strings.Join(warnings, "\n") != strings.Join(want, "\n") {
		t.Errorf("warnings:\n%q\nwant\n%q", warnings, want)
	}
	crm, err := st.GetToolServer(ctx, org, "crm")
	if err != nil {
		t.Fatal(err)
	}
	if len(crm.Listing) != 2 || crm.Listed("refund") == nil || crm.Listed("delete_customer") != nil || crm.ListedAt.IsZero() {
		t.Errorf("crm listing = %+v", crm.Listing)
	}
	erp, _ := st.GetToolServer(ctx, org, "erp")
	if erp.Listing != nil {
		t.Errorf("erp, which did not answer, has a listing: %+v", erp.Listing)
	}
}

func TestRegister(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := newStore(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "tools.yaml")
	if err := os.WriteFile(path, []byte(storyFile), 0o600); err != nil {
		t.Fatal(err)
	}
	listed := 0
	list := func(ctx context.Context, s toolreg.Server) ([]store.ListedTool, error) {
		listed++
		return nil, errors.New("down")
	}
	f, warnings, err := toolreg.Register(ctx, st, org, path, list)
	if err != nil || len(f.Servers) != 2 || len(warnings) != 2 || listed != 2 {
		t.Fatalf("Register = %+v, %q, %v (listed %d)", f, warnings, err, listed)
	}
	if back, _ := toolreg.Load(ctx, st, org); len(back.Servers) != 2 || back.Server("erp").Credentials.File != filepath.Join(dir, "secrets", "erp.token") {
		t.Fatalf("stored = %+v", back)
	}
	// A refused file changes nothing.
	if err := os.WriteFile(path, []byte("servers: []\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := toolreg.Register(ctx, st, org, path, nil); err == nil {
		t.Fatal("a refused file was registered")
	}
	if back, _ := toolreg.Load(ctx, st, org); len(back.Servers) != 2 {
		t.Fatalf("a refused file changed the registration: %+v", back)
	}
}
