package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/baton-run/baton/gateway"
	"github.com/baton-run/baton/internal/testing/pgtest"
	"github.com/baton-run/baton/interpreter"
)

// withSubprocess is the --profiles value that offers baton-subprocess-1.
const withSubprocess = "--profiles=parallel-1,baton-subprocess-1"

// rfpFolders are the RFP example's three folders, the parent first.
func rfpFolders(t *testing.T) (parent, screening, legal string) {
	rfp := filepath.Join(repoRoot(t), "examples", "rfp")
	return filepath.Join(rfp, "rfp"), filepath.Join(rfp, "supplier-screening"), filepath.Join(rfp, "contract-review")
}

// Given several folders, validate checks a parent against the children
// beside it, whatever their order, and says so under the parent.
func TestValidateChildrenBeside(t *testing.T) {
	t.Parallel()
	parent, screening, legal := rfpFolders(t)
	code, out, errOut := runBaton("validate", withSubprocess, parent, screening, legal)
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if code != 0 || len(lines) != 5 {
		t.Fatalf("exit %d, stdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	want := []string{
		parent + ": ok rfp sha256:",
		"    screen_each runs supplier-screening, folder " + screening,
		"    legal runs contract-review, folder " + legal,
		screening + ": ok supplier-screening sha256:",
		legal + ": ok contract-review sha256:",
	}
	for k, w := range want {
		if !strings.HasPrefix(lines[k], w) {
			t.Errorf("line %d: %q, want %q…", k+1, lines[k], w)
		}
	}

	// The parent alone: its children are not among the folders given.
	code, out, _ = runBaton("validate", withSubprocess, parent)
	if code != 1 || !strings.Contains(out, parent+`:18:14: steps[1].process: unknown process "supplier-screening": none of that name is among the folders given (give its folder too, or check against a registry with --data)`) ||
		!strings.Contains(out, parent+`:37:14: steps[3].process: unknown process "contract-review"`) {
		t.Fatalf("the parent alone: exit %d, stdout:\n%s", code, out)
	}

	// --json lists the bindings with what they were checked against.
	code, out, _ = runBaton("validate", "--json", withSubprocess, legal, parent, screening)
	var got []validateResult
	if err := json.Unmarshal([]byte(out), &got); err != nil || code != 0 || len(got) != 3 {
		t.Fatalf("exit %d, %v, stdout:\n%s", code, err, out)
	}
	if c := got[1].Children; len(c) != 2 || c[1].Step != "legal" || c[1].Process != "contract-review" || c[1].Version != 0 || c[1].Hash != got[0].Hash || c[1].From != "folder "+legal {
		t.Errorf("children of rfp: %+v", c)
	}
	if !strings.Contains(out, `"from": "folder `+legal+`"`) || len(got[0].Children) != 0 {
		t.Errorf("json:\n%s", out)
	}
}

// With --database-url (or --data), validate checks against the processes
// published in the organization and names the version each step binds;
// map draws it.
func TestValidateChildrenAgainstRegistry(t *testing.T) {
	db := pgtest.NewDatabase(t)
	parent, screening, legal := rfpFolders(t)
	ctx := context.Background()
	st, err := openStore(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	offer := interpreter.DefaultOffer()
	offer.Profiles = append(offer.Profiles, interpreter.ProfileSubprocess)
	for _, f := range gateway.NewRegistry(st, "o_rfp", offer).ImportAndPublishFolders(ctx, []string{screening, screening, legal}, "u_ops", nil) {
		if f.Err != nil {
			t.Fatal(f.Err)
		}
	}

	code, out, errOut := runBaton("validate", withSubprocess, "--database-url", db, "--org", "o_rfp", parent)
	if code != 0 || !strings.Contains(out, "\n    screen_each runs supplier-screening v1, published in o_rfp\n    legal runs contract-review v1, published in o_rfp\n") {
		t.Fatalf("exit %d, stdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	// Another organization has none of them, even with the folders given.
	code, out, _ = runBaton("validate", withSubprocess, "--database-url", db, "--org", "o_other", parent, screening)
	if code != 1 || !strings.Contains(out, `unknown process "supplier-screening": none of that name is published in this organization`) {
		t.Fatalf("in o_other: exit %d, stdout:\n%s", code, out)
	}

	out = batonOK(t, "map", "--database-url", db, "--org", "o_rfp", parent)
	if !strings.Contains(out, `st_screen_each[["screen_each<br/>process · supplier-screening v1<br/>for each steps.collect.output.suppliers<br/>at most 10 at once"]]:::process`) ||
		!strings.Contains(out, `st_legal[["legal<br/>process · contract-review v1"]]:::process`) {
		t.Fatalf("map against the registry:\n%s", out)
	}
	if code, _, errOut := baton("map", "--database-url", db, "--org", "o_other", parent); code != 1 || !strings.Contains(errOut, `unknown process "contract-review"`) {
		t.Fatalf("map in o_other: exit %d, stderr:\n%s", code, errOut)
	}
	// Without a registry, map draws the children by name.
	if out := batonOK(t, "map", parent); out != mapGolden(t, "rfp-rfp") {
		t.Fatalf("map of the folder:\n%s", out)
	}
}
