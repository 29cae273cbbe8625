package gateway_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/baton-run/baton/gateway"
	"github.com/baton-run/baton/interpreter"
)

func subprocessOffer() interpreter.Offer {
	o := interpreter.DefaultOffer()
	o.Profiles = append(o.Profiles, interpreter.ProfileSubprocess)
	return o
}

const (
	screeningSrc = `---
name: screening
description: Screen one supplier.
inputs:
  supplier: string
steps:
  - id: screen
    agent: Screen it.
  - id: confirm
    person: buyer
    approve: Confirm.
  - id: cleared
    finish: cleared
---
# Screening
`
	parentSrc = `---
name: rfp
description: Screen every supplier.
inputs:
  suppliers: { type: list, items: string }
steps:
  - id: screen_each
    process: screening
    for_each: inputs.suppliers
    inputs: { supplier: item }
    on_outcome: { failed: done }
  - id: done
    finish: awarded
---
# RFP
`
)

// importPublish imports src and publishes it, binding roles to groups of
// the same name.
func importPublish(t *testing.T, r *gateway.Registry, src, folder string) (int, interpreter.Bindings) {
	t.Helper()
	ctx := context.Background()
	d, err := r.Import(ctx, []byte(src), folder, "u_ops")
	if err != nil {
		t.Fatalf("import %s: %v", folder, err)
	}
	pv, err := r.Publish(ctx, d.Process.Name, "u_ops", true)
	if err != nil {
		t.Fatalf("publish %s: %v", folder, err)
	}
	return pv.Version, pv.Children
}

// A process step binds the latest published version of its child when the
// parent is published; the binding travels with that parent version, and a
// new child version changes nothing until the parent is published again.
func TestRegistryBindsChildren(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r, st := registryWith(t, "", subprocessOffer())

	// A parent whose child is not published is refused at publication,
	// at its line and column; at import a draft of the child counts.
	if _, err := r.Import(ctx, []byte(parentSrc), "rfp", "u_ops"); err == nil || !strings.Contains(err.Error(),
		`8:14: steps[0].process: unknown process "screening": none of that name is published or imported in this organization`) {
		t.Fatalf("import before the child: %v", err)
	}
	if _, err := r.Import(ctx, []byte(screeningSrc), "screening", "u_ops"); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Import(ctx, []byte(parentSrc), "rfp", "u_ops"); err != nil {
		t.Fatalf("import beside the child's draft: %v", err)
	}
	_, err := r.Publish(ctx, "rfp", "u_ops", true)
	var pe *interpreter.ProcessError
	if !errors.As(err, &pe) || pe.Issues[0].String() != `8:14: steps[0].process: unknown process "screening": none of that name is published in this organization` {
		t.Fatalf("publish before the child: %v", err)
	}

	v, bound := importPublish(t, r, screeningSrc, "screening")
	if v != 1 || len(bound) != 0 {
		t.Fatalf("child published as v%d with %v", v, bound)
	}
	pv, err := r.Publish(ctx, "rfp", "u_ops", true)
	if err != nil {
		t.Fatal(err)
	}
	child, _ := st.GetVersion(ctx, "o_test", "screening", 1)
	want := interpreter.Bindings{{Step: "screen_each", Process: "screening", Version: 1, Hash: child.Hash}}
	if pv.Version != 1 || !equalBindings(pv.Children, want) {
		t.Fatalf("parent v%d bound %+v, want %+v", pv.Version, pv.Children, want)
	}
	if got, _ := st.GetVersion(ctx, "o_test", "rfp", 1); !equalBindings(got.Children, want) {
		t.Fatalf("stored parent binds %+v", got.Children)
	}

	// The child changes: version 2. The parent's version 1 keeps v1.
	v, _ = importPublish(t, r, strings.Replace(screeningSrc, "Screen it.", "Screen it twice.", 1), "screening")
	if v != 2 {
		t.Fatalf("child v%d, want v2", v)
	}
	if got, _ := st.GetVersion(ctx, "o_test", "rfp", 1); got.Children[0].Version != 1 {
		t.Fatalf("parent v1 now binds %+v", got.Children)
	}
	// Publishing the same parent again binds v2, so it is a new version;
	// publishing it once more changes nothing.
	v, bound = importPublish(t, r, parentSrc, "rfp")
	if v != 2 || bound[0].Version != 2 {
		t.Fatalf("parent republished as v%d binding %+v; want v2 binding screening v2", v, bound)
	}
	if v, _ = importPublish(t, r, parentSrc, "rfp"); v != 2 {
		t.Fatalf("the same parent and bindings made v%d", v)
	}
	// version: 1 pins the child's first version.
	v, bound = importPublish(t, r, strings.Replace(parentSrc, "    process: screening\n", "    process: screening\n    version: 1\n", 1), "rfp")
	if v != 3 || bound[0].Version != 1 {
		t.Fatalf("pinned parent v%d binds %+v", v, bound)
	}
	// The bindings show in the registry's listing.
	latest, err := r.Latest(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, pv := range latest {
		if pv.Name == "rfp" && (len(pv.Children) != 1 || pv.Children[0].Version != 1) {
			t.Errorf("listing shows rfp binding %+v", pv.Children)
		}
	}
}

func equalBindings(a, b interpreter.Bindings) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		if a[k] != b[k] {
			return false
		}
	}
	return true
}

// A second organization's process of the same name is never bound: the
// parent in o_other sees no screening until o_other publishes its own,
// and then binds that one.
func TestRegistryChildrenPerOrganization(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r, st := registryWith(t, "", subprocessOffer())
	other := gateway.NewRegistry(st, "o_other", subprocessOffer())
	importPublish(t, r, screeningSrc, "screening")
	importPublish(t, r, screeningSrc, "screening") // the same: still v1
	importPublish(t, r, strings.Replace(screeningSrc, "Screen it.", "Screen it again.", 1), "screening")

	if _, err := other.Import(ctx, []byte(parentSrc), "rfp", "u_ops"); err == nil || !strings.Contains(err.Error(), `unknown process "screening"`) {
		t.Fatalf("o_other's parent with only o_test's child: %v", err)
	}
	if _, _, err := other.Check(ctx, []byte(parentSrc), "rfp"); err == nil || !strings.Contains(err.Error(), `unknown process "screening": none of that name is published in this organization`) {
		t.Fatalf("o_other's check: %v", err)
	}
	v, _ := importPublish(t, other, strings.Replace(screeningSrc, "Screen it.", "Screen it, other.", 1), "screening")
	if v != 1 {
		t.Fatalf("o_other's screening is v%d", v)
	}
	_, bound := importPublish(t, other, parentSrc, "rfp")
	mine, _ := st.GetVersion(ctx, "o_other", "screening", 1)
	theirs, _ := st.GetVersion(ctx, "o_test", "screening", 2)
	if len(bound) != 1 || bound[0].Version != 1 || bound[0].Hash != mine.Hash || bound[0].Hash == theirs.Hash {
		t.Fatalf("o_other's parent binds %+v; its own screening is %s, o_test's latest %s", bound, mine.Hash, theirs.Hash)
	}
}

// Publication refuses a cycle through published versions and nesting past
// the depth limit, and Check says so without storing anything.
func TestRegistryChildrenCyclesAndDepth(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	level := func(name, child string) string {
		steps := "  - id: done\n    finish: done\n"
		if child != "" {
			steps = "  - id: run\n    process: " + child + "\n" + steps
		}
		return "---\nname: " + name + "\ndescription: A level.\nsteps:\n" + steps + "---\n"
	}
	offer := subprocessOffer()
	offer.MaxDepth = 2
	r, st := registryWith(t, "", offer)
	importPublish(t, r, level("a", ""), "a")
	importPublish(t, r, level("b", "a"), "b")
	importPublish(t, r, level("c", "b"), "c")
	// a now runs c, which runs b, which runs a v1: a cycle by name.
	_, _, err := r.Check(ctx, []byte(level("a", "c")), "a")
	if err == nil || !strings.Contains(err.Error(), "6:14: steps[0].process: c v1 leads back to a: a cycle of processes a → c → b → a") {
		t.Fatalf("check of a cycle: %v", err)
	}
	// d runs c: three levels below d, over the limit of 2.
	if _, err := r.Import(ctx, []byte(level("d", "c")), "d", "u_ops"); err == nil ||
		!strings.Contains(err.Error(), "c v1 nests 2 levels of processes below it; this step makes 3, over this server's limit of 2 (--subprocess-depth)") {
		t.Fatalf("import past the depth limit: %v", err)
	}
	if _, err := st.GetDraft(ctx, "o_test", "d"); err == nil {
		t.Fatal("a refused import left a draft")
	}
}

// dev --processes publishes a folder of folders children first, whatever
// order the folders come in.
func TestImportAndPublishFoldersOrdersChildrenFirst(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r, _ := registryWith(t, "", subprocessOffer())
	root := t.TempDir()
	write := func(name, src string) string {
		dir := filepath.Join(root, name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "PROCESS.md"), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	parent, child, broken := write("rfp", parentSrc), write("screening", screeningSrc), write("broken", "not a process")
	got := r.ImportAndPublishFolders(ctx, []string{broken, parent, child}, "baton-dev", nil)
	var order []string
	for _, f := range got {
		order = append(order, filepath.Base(f.Dir))
		if (f.Err != nil) != (f.Dir == broken) {
			t.Errorf("%s: err %v", f.Dir, f.Err)
		}
	}
	if strings.Join(order, " ") != "screening rfp broken" {
		t.Fatalf("published in the order %v", order)
	}
	if got[1].Version.Children[0].Process != "screening" {
		t.Errorf("rfp binds %+v", got[1].Version.Children)
	}
}

// baton publish NAME... publishes drafts children first.
func TestOrderDrafts(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r, _ := registryWith(t, "", subprocessOffer())
	for _, src := range []struct{ text, folder string }{{screeningSrc, "screening"}, {parentSrc, "rfp"}} {
		if _, err := r.Import(ctx, []byte(src.text), src.folder, "u_ops"); err != nil {
			t.Fatal(err)
		}
	}
	got, err := r.OrderDrafts(ctx, []string{"rfp", "nothing", "screening"})
	if err != nil || strings.Join(got, " ") != "screening rfp nothing" {
		t.Fatalf("OrderDrafts = %v, %v", got, err)
	}
	for _, name := range got[:2] {
		if _, err := r.Publish(ctx, name, "u_ops", true); err != nil {
			t.Fatalf("publish %s in that order: %v", name, err)
		}
	}
}
