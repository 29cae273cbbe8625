package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/baton-run/baton/internal/toolreg"
)

// storyFile is the refund story's registration, the one toolreg's tests
// parse.
var storyFile = func() string {
	b, err := os.ReadFile(filepath.Join("..", "toolreg", "testdata", "story.yaml"))
	if err != nil {
		panic(err)
	}
	return string(b)
}()

func TestToolRegistrationRoundTrip(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := setup(t).store
	empty, err := st.ToolRegistration(ctx, org)
	if err != nil || len(empty.Servers) != 0 || len(empty.Catalog().Tools) != 0 {
		t.Fatalf("nothing stored: %+v, %v", empty, err)
	}
	f, err := toolreg.Parse([]byte(storyFile), &toolreg.ParseOptions{Dir: "/etc/baton"})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.PutToolServers(ctx, nil, org, f.Servers); err != nil {
		t.Fatal(err)
	}
	back, err := st.ToolRegistration(ctx, org)
	if err != nil {
		t.Fatal(err)
	}
	// What the store adds, its time of change, is not the registration's.
	for i := range back.Servers {
		if back.Servers[i].UpdatedAt.IsZero() {
			t.Errorf("%s has no time of change", back.Servers[i].Name)
		}
		back.Servers[i].UpdatedAt = time.Time{}
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

func TestRefreshToolListings(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := setup(t).store
	f, err := toolreg.Parse([]byte(storyFile), &toolreg.ParseOptions{Dir: "/etc/baton"})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.PutToolServers(ctx, nil, org, f.Servers); err != nil {
		t.Fatal(err)
	}
	schema := json.RawMessage(`{"type":"object"}`)
	list := func(ctx context.Context, s toolreg.Server) ([]toolreg.ListedTool, error) {
		if _, ok := ctx.Deadline(); !ok {
			t.Errorf("listing %s without a deadline", s.Name)
		}
		if s.Name == "erp" {
			return nil, errors.New("connection refused")
		}
		return []toolreg.ListedTool{
			{Name: "get_customer", Description: "Look up a customer.", InputSchema: schema},
			{Name: "refund", Description: "Refund a customer.", InputSchema: schema},
			{Name: "delete_customer", Description: "Not registered.", InputSchema: schema},
		}, nil
	}
	warnings, err := st.RefreshToolListings(ctx, org, f, list)
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

func TestRegisterTools(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := setup(t).store
	dir := t.TempDir()
	path := filepath.Join(dir, "tools.yaml")
	if err := os.WriteFile(path, []byte(storyFile), 0o600); err != nil {
		t.Fatal(err)
	}
	listed := 0
	list := func(ctx context.Context, s toolreg.Server) ([]toolreg.ListedTool, error) {
		listed++
		return nil, errors.New("down")
	}
	f, warnings, err := st.RegisterTools(ctx, org, path, list)
	if err != nil || len(f.Servers) != 2 || len(warnings) != 2 || listed != 2 {
		t.Fatalf("Register = %+v, %q, %v (listed %d)", f, warnings, err, listed)
	}
	if back, _ := st.ToolRegistration(ctx, org); len(back.Servers) != 2 || back.Server("erp").Credentials.File != filepath.Join(dir, "secrets", "erp.token") {
		t.Fatalf("stored = %+v", back)
	}
	// A refused file changes nothing.
	if err := os.WriteFile(path, []byte("servers: []\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := st.RegisterTools(ctx, org, path, nil); err == nil {
		t.Fatal("a refused file was registered")
	}
	if back, _ := st.ToolRegistration(ctx, org); len(back.Servers) != 2 {
		t.Fatalf("a refused file changed the registration: %+v", back)
	}
}
