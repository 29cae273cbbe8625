package tests

import (
	"context"
	"path/filepath"
	"slices"
	"testing"

	"github.com/baton-run/baton/gateway"
	"github.com/baton-run/baton/interpreter"
)

// rfpDir is the RFP example's folder of folders.
func rfpDir(t testing.TB) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("..", "examples", "rfp"))
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// publishRFP publishes the RFP example's three processes in organization
// org, the parent first in the list: the registry takes the children first.
func publishRFP(t testing.TB, b *baton, org string) map[string]int {
	t.Helper()
	offer := b.gateway.Offer()
	if !offer.HasProfile(interpreter.ProfileSubprocess) {
		offer.Profiles = append(offer.Profiles, interpreter.ProfileSubprocess)
	}
	reg := gateway.NewRegistry(b.store, org, offer)
	dir := rfpDir(t)
	versions := map[string]int{}
	for _, f := range reg.ImportAndPublishFolders(context.Background(), []string{
		filepath.Join(dir, "rfp"), filepath.Join(dir, "supplier-screening"), filepath.Join(dir, "contract-review"),
	}, "u_admin", nil) {
		if f.Err != nil {
			t.Fatalf("publish %s: %v", f.Dir, f.Err)
		}
		versions[f.Version.Name] = f.Version.Version
	}
	return versions
}

// list_processes shows a parent's bindings, and only a parent's: the
// children's items are exactly core-2's. Every answer passes the output
// schema the gateway declares, and core-2's with the profile's additions.
func TestListProcessesShowsBindings(t *testing.T) {
	t.Parallel()
	b := start(t, options{})
	publishRFP(t, b, "o_test")
	type binding struct {
		Step, Process string
		Version       int
	}
	var res struct {
		Items []struct {
			Name      string     `json:"name"`
			Processes *[]binding `json:"processes"`
		} `json:"items"`
	}
	b.connect(agentID).ok("list_processes", map[string]any{}, &res)
	got := map[string]*[]binding{}
	for _, it := range res.Items {
		got[it.Name] = it.Processes
	}
	want := []binding{{"screen_each", "supplier-screening", 1}, {"legal", "contract-review", 1}}
	if len(got) != 3 || got["rfp"] == nil || !slices.Equal(*got["rfp"], want) || got["supplier-screening"] != nil || got["contract-review"] != nil {
		t.Fatalf("list_processes processes: %+v", got)
	}
}
