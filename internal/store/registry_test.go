package store_test

import (
	"encoding/json"
	"errors"
	"slices"
	"testing"

	"github.com/baton-run/baton/internal/store"
)

func TestRegistry(t *testing.T) {
	t.Parallel()
	b := setup(t)
	def := json.RawMessage(`{"name":"supplier-onboarding"}`)
	draft := store.Draft{Org: org, Name: "supplier-onboarding", Source: "# Supplier onboarding v1",
		Definition: def, Hash: "h1", ImportedBy: "u_ops"}

	if _, err := b.store.Publish(b.ctx, nil, org, draft.Name, "u_ops"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("publish without a draft: err = %v, want ErrNotFound", err)
	}
	if err := b.store.PutDraft(b.ctx, nil, draft); err != nil {
		t.Fatal(err)
	}
	if err := b.store.SetDraftRoles(b.ctx, nil, org, draft.Name, map[string]string{"finance-approver": "g_finance"}); err != nil {
		t.Fatal(err)
	}
	d, err := b.store.GetDraft(b.ctx, org, draft.Name)
	if err != nil || d.Roles["finance-approver"] != "g_finance" || d.Hash != "h1" {
		t.Fatalf("GetDraft = %+v, %v", d, err)
	}
	v1, err := b.store.Publish(b.ctx, nil, org, draft.Name, "u_ops")
	if err != nil {
		t.Fatal(err)
	}
	if v1.Version != 1 || v1.Hash != "h1" || v1.Roles["finance-approver"] != "g_finance" || v1.PublishedBy != "u_ops" {
		t.Fatalf("first publish = %+v", v1)
	}
	if _, err := b.store.GetDraft(b.ctx, org, draft.Name); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("draft still there after publish: %v", err)
	}

	draft.Source, draft.Hash = "# Supplier onboarding v2", "h2"
	if err := b.store.PutDraft(b.ctx, nil, draft); err != nil {
		t.Fatal(err)
	}
	v2, err := b.store.Publish(b.ctx, nil, org, draft.Name, "u_ops")
	if err != nil || v2.Version != 2 || v2.Hash != "h2" {
		t.Fatalf("second publish = %+v, %v", v2, err)
	}

	latest, err := b.store.GetVersion(b.ctx, org, draft.Name, 0)
	if err != nil || latest.Version != 2 {
		t.Fatalf("latest = %+v, %v", latest, err)
	}
	first, err := b.store.GetVersion(b.ctx, org, draft.Name, 1)
	if err != nil || first.Source != "# Supplier onboarding v1" {
		t.Fatalf("version 1 = %+v, %v", first, err)
	}
	if _, err := b.store.GetVersion(b.ctx, org, draft.Name, 3); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("version 3: err = %v, want ErrNotFound", err)
	}

	for _, name := range []string{"a-first", "z-last"} {
		if err := b.store.PutDraft(b.ctx, nil, store.Draft{Org: org, Name: name, Source: "#", Definition: def, Hash: "h", ImportedBy: "u_ops"}); err != nil {
			t.Fatal(err)
		}
		if _, err := b.store.Publish(b.ctx, nil, org, name, "u_ops"); err != nil {
			t.Fatal(err)
		}
	}
	var names []string
	cursor := ""
	for {
		items, next, err := b.store.ListProcesses(b.ctx, org, 2, cursor)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range items {
			names = append(names, v.Name+"@"+string(rune('0'+v.Version)))
		}
		if next == "" {
			break
		}
		cursor = next
	}
	if want := []string{"a-first@1", "supplier-onboarding@2", "z-last@1"}; !slices.Equal(names, want) {
		t.Fatalf("ListProcesses = %v, want %v", names, want)
	}
	if _, _, err := b.store.ListProcesses(b.ctx, org, 2, "bogus"); !errors.Is(err, store.ErrBadCursor) {
		t.Fatalf("bad cursor: err = %v", err)
	}
}
