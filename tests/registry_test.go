package tests

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/baton-run/baton/gateway"
	"github.com/baton-run/baton/interpreter"
)

// §6 rule 5: publishing makes a numbered version that never changes; the
// same content again is no new version; a changed file is; runs keep theirs.
func TestImmutabilityOfVersions(t *testing.T) {
	b := start(t, options{})
	ctx := context.Background()
	v1 := b.publish(supplierSrc)
	again := b.publish(supplierSrc)
	if v1.Version != 1 || again.Version != 1 {
		t.Fatalf("versions %d then %d, want 1 and 1", v1.Version, again.Version)
	}
	mira := b.connect(personID("mira@example.com", "finance-approver"))
	run := startSupplier(t, b, mira)

	changed := strings.Replace(supplierSrc, "Start this when procurement has a new supplier.", "Start this for every new supplier.", 1)
	v2 := b.publish(changed)
	if v2.Version != 2 || v2.Hash == v1.Hash {
		t.Fatalf("changed file published as v%d hash %s", v2.Version, v2.Hash)
	}
	var v interpreter.View
	mira.ok("get_run", map[string]any{"runId": run.Run.ID}, &v)
	if v.Run.Version != 1 || strings.Contains(v.Body, "every new supplier") {
		t.Fatalf("the run moved to version %d", v.Run.Version)
	}
	mira.ok("start_run", map[string]any{"process": "supplier-onboarding", "requestId": rid(),
		"inputs": map[string]any{"vendorName": "B", "amount": 1}}, &v)
	if v.Run.Version != 2 || !strings.Contains(v.Body, "every new supplier") {
		t.Fatalf("a new run got version %d", v.Run.Version)
	}
	mira.ok("start_run", map[string]any{"process": "supplier-onboarding", "version": 1, "requestId": rid(),
		"inputs": map[string]any{"vendorName": "C", "amount": 1}}, &v)
	if v.Run.Version != 1 {
		t.Fatalf("version 1 asked, got %d", v.Run.Version)
	}
	mira.refused("start_run", map[string]any{"process": "supplier-onboarding", "version": 9, "requestId": rid(),
		"inputs": map[string]any{"vendorName": "C", "amount": 1}}, interpreter.CodeNotFound)

	// Roles must be bound before publishing, and unknown roles are refused.
	d, err := b.registry.Import(ctx, []byte(strings.Replace(supplierSrc, "finance-approver", "treasurer", 1)), "", "u")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.registry.Publish(ctx, d.Process.Name, "u", false); !errors.Is(err, gateway.ErrUnboundRoles) {
		t.Fatalf("publish with unbound roles: %v", err)
	}
	if err := b.registry.Bind(ctx, d.Process.Name, map[string]string{"tresurer": "g"}); err == nil {
		t.Fatal("binding a misspelt role was accepted")
	}
	if err := b.registry.Bind(ctx, d.Process.Name, map[string]string{"treasurer": "g_treasury"}); err != nil {
		t.Fatal(err)
	}
	if pv, err := b.registry.Publish(ctx, d.Process.Name, "u", false); err != nil || pv.Version != 3 || pv.Roles["treasurer"] != "g_treasury" {
		t.Fatalf("publish after binding: %+v %v", pv, err)
	}
}

// §2: a process the validator refuses is never published; one that needs a
// profile this server lacks is refused with the reason.
func TestPublicationRefusals(t *testing.T) {
	b := start(t, options{})
	ctx := context.Background()
	_, err := b.registry.ImportDir(ctx, b.fixtureDir("vendor-check"), "u")
	var pe *interpreter.ProcessError
	if !errors.As(err, &pe) || !strings.Contains(pe.Error(), "check-1") {
		t.Fatalf("vendor-check import: %v", err)
	}
	if _, err := b.registry.Import(ctx, []byte("---\nname: Bad Name\ndescription: d\nsteps: []\n---\n"), "", "u"); err == nil {
		t.Fatal("an invalid process was imported")
	}
	if _, err := b.registry.Import(ctx, []byte(supplierSrc+strings.Repeat("x", gateway.MaxProcessBytes)), "", "u"); err == nil {
		t.Fatal("a PROCESS.md over the size limit was imported")
	}
	agent := b.connect(agentID)
	var procs struct{ Items []any }
	agent.ok("list_processes", map[string]any{}, &procs)
	if len(procs.Items) != 0 {
		t.Fatalf("refused processes were listed: %+v", procs.Items)
	}
}
