package store_test

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/baton-run/baton/internal/store"
	"github.com/baton-run/baton/interpreter"
)

func TestRegistry(t *testing.T) {
	t.Parallel()
	b := setup(t)
	def := json.RawMessage(`{"name":"supplier-onboarding"}`)
	draft := store.Draft{Org: org, Name: "supplier-onboarding", Source: "# Supplier onboarding v1",
		Definition: def, Hash: "h1", ImportedBy: "u_ops"}

	if _, err := b.store.Publish(b.ctx, nil, org, draft.Name, "u_ops", nil); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("publish without a draft: err = %v, want ErrNotFound", err)
	}
	if _, err := b.store.LatestVersion(b.ctx, org, draft.Name); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("latest version before a publish: err = %v, want ErrNotFound", err)
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
	v1, err := b.store.Publish(b.ctx, nil, org, draft.Name, "u_ops", nil)
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
	children := interpreter.Bindings{{Step: "screen", Process: "screening", Version: 3, Hash: "hs", Initiator: true}}
	v2, err := b.store.Publish(b.ctx, nil, org, draft.Name, "u_ops", children)
	if err != nil || v2.Version != 2 || v2.Hash != "h2" || !slices.Equal(v2.Children, children) {
		t.Fatalf("second publish = %+v, %v", v2, err)
	}

	latest, err := b.store.GetVersion(b.ctx, org, draft.Name, 0)
	if err != nil || latest.Version != 2 || !slices.Equal(latest.Children, children) {
		t.Fatalf("latest = %+v, %v", latest, err)
	}
	if n, err := b.store.LatestVersion(b.ctx, org, draft.Name); err != nil || n != 2 {
		t.Fatalf("LatestVersion = %d, %v; want 2", n, err)
	}
	if _, err := b.store.LatestVersion(b.ctx, "o_other", draft.Name); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("latest version in another organization: err = %v, want ErrNotFound", err)
	}
	first, err := b.store.GetVersion(b.ctx, org, draft.Name, 1)
	if err != nil || first.Source != "# Supplier onboarding v1" || first.Children == nil || len(first.Children) != 0 {
		t.Fatalf("version 1 = %+v, %v", first, err)
	}
	if _, err := b.store.GetVersion(b.ctx, org, draft.Name, 3); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("version 3: err = %v, want ErrNotFound", err)
	}

	for _, name := range []string{"a-first", "z-last"} {
		if err := b.store.PutDraft(b.ctx, nil, store.Draft{Org: org, Name: name, Source: "#", Definition: def, Hash: "h", ImportedBy: "u_ops"}); err != nil {
			t.Fatal(err)
		}
		if _, err := b.store.Publish(b.ctx, nil, org, name, "u_ops", nil); err != nil {
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

// BenchmarkLatestVersion is what a start reads to find the version it
// runs, for a process of the largest size a PROCESS.md may have: its number
// alone (number), or the whole row as before (row).
func BenchmarkLatestVersion(b *testing.B) {
	s := setup(b)
	src := strings.Repeat("An instruction a person reads once. ", 256<<10/36)
	def, err := json.Marshal(map[string]any{"name": "large", "body": src})
	if err != nil {
		b.Fatal(err)
	}
	if err := s.store.PutDraft(s.ctx, nil, store.Draft{Org: org, Name: "large", Source: src, Definition: def, Hash: "h", ImportedBy: "u_ops"}); err != nil {
		b.Fatal(err)
	}
	if _, err := s.store.Publish(s.ctx, nil, org, "large", "u_ops", nil); err != nil {
		b.Fatal(err)
	}
	b.Run("number", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if _, err := s.store.LatestVersion(s.ctx, org, "large"); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("row", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if _, err := s.store.GetVersion(s.ctx, org, "large", 0); err != nil {
				b.Fatal(err)
			}
		}
	})
}
