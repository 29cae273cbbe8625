package gateway

import (
	"path/filepath"
	"testing"

	"github.com/baton-run/baton/internal/testing/spectest"
)

// A published version never changes, so the gateway reads it from
// PostgreSQL once; the latest version is looked up on every start, so a
// publish (through this gateway or another) is the next start's.
func TestPublishedVersionReadOnce(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	reg := NewRegistry(b.store, "o_test", b.g.Offer())
	dir := filepath.Join(spectest.SharedDir(t), "conformance", "fixtures", "invoice-approval")
	v1, _, err := reg.ImportAndPublish(b.ctx, dir, "u_admin", map[string]string{"cfo": "g_cfo_one"})
	if err != nil {
		t.Fatal(err)
	}
	got, err := b.g.process(b.ctx, "o_test", v1.Name, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got.version != v1.Version || got.p.Name != v1.Name || got.roles["cfo"] != "g_cfo_one" {
		t.Fatalf("latest = version %d of %q, cfo %q; want version %d of %q, cfo g_cfo_one", got.version, got.p.Name, got.roles["cfo"], v1.Version, v1.Name)
	}

	v2, _, err := reg.ImportAndPublish(b.ctx, dir, "u_admin", map[string]string{"cfo": "g_cfo_two"})
	if err != nil {
		t.Fatal(err)
	}
	if v2.Version != v1.Version+1 {
		t.Fatalf("second publish is version %d, want %d", v2.Version, v1.Version+1)
	}
	if got, err = b.g.process(b.ctx, "o_test", v1.Name, 0); err != nil || got.version != v2.Version || got.roles["cfo"] != "g_cfo_two" {
		t.Fatalf("latest after a new publish = version %d, cfo %q, %v; want version %d, cfo g_cfo_two", got.version, got.roles["cfo"], err, v2.Version)
	}

	// Rows changed behind the gateway's back (nothing in Baton does this)
	// show whether it reads them again: it does not.
	if _, err := b.store.Pool().Exec(b.ctx, `UPDATE process_versions SET roles = '{"cfo": "g_tampered"}' WHERE org = 'o_test' AND name = $1`, v1.Name); err != nil {
		t.Fatal(err)
	}
	for _, want := range []struct {
		version int
		cfo     string
	}{{v1.Version, "g_cfo_one"}, {v2.Version, "g_cfo_two"}, {0, "g_cfo_two"}} {
		got, err := b.g.process(b.ctx, "o_test", v1.Name, want.version)
		if err != nil {
			t.Fatal(err)
		}
		if got.roles["cfo"] != want.cfo {
			t.Errorf("version %d: cfo is bound to %q, want %q from its first read", want.version, got.roles["cfo"], want.cfo)
		}
	}

	// A version this gateway never read is read, and then kept.
	other := newGateway(t, b.store, b.issuer, nil, nil, "127.0.0.1:1")
	got, err = other.process(b.ctx, "o_test", v1.Name, v1.Version)
	if err != nil || got.roles["cfo"] != "g_tampered" {
		t.Fatalf("another gateway's first read of version %d: cfo %q, %v; want the stored g_tampered", v1.Version, got.roles["cfo"], err)
	}
}

// The versions a gateway keeps stay within their budget of bytes, the
// least recently used going first; a version larger than the budget is
// still kept while it is the latest read, and a version kept twice at
// once keeps its first.
func TestVersionCacheKeepsTheRecentWithinItsBudget(t *testing.T) {
	t.Parallel()
	c := newVersionCache(100)
	v := func(n int) published { return published{version: n} }
	has := func(key string) bool { _, ok := c.get(key); return ok }
	c.put("a", v(1), 40)
	c.put("b", v(2), 40)
	if !has("a") { // a is now the most recently used, b the least
		t.Fatal("a was not kept")
	}
	c.put("c", v(3), 40) // 120 bytes: b goes
	if has("b") || !has("a") || !has("c") {
		t.Fatalf("after c: a %v, b %v, c %v; want a and c", has("a"), has("b"), has("c"))
	}
	if c.used != 80 || c.order.Len() != 2 || len(c.entries) != 2 {
		t.Fatalf("used %d bytes in %d entries (%d in the map), want 80 in 2", c.used, c.order.Len(), len(c.entries))
	}
	if got := c.put("c", v(30), 40); got.version != 3 || c.used != 80 {
		t.Fatalf("c kept again: version %d, %d bytes used; want the first (3), 80", got.version, c.used)
	}
	c.put("huge", v(4), 500)
	if !has("huge") || has("a") || has("c") || c.used != 500 {
		t.Fatalf("after a version over the budget: huge %v, a %v, c %v, %d bytes; want huge alone", has("huge"), has("a"), has("c"), c.used)
	}
	c.put("d", v(5), 10)
	if has("huge") || !has("d") || c.used != 10 {
		t.Fatalf("after d: huge %v, d %v, %d bytes; want d alone", has("huge"), has("d"), c.used)
	}
}
