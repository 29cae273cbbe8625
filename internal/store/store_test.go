package store_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/baton-run/baton/internal/store"
	"github.com/baton-run/baton/internal/testing/pgtest"
)

func TestMain(m *testing.M) {
	code := m.Run()
	pgtest.StopShared()
	os.Exit(code)
}

type bundle struct {
	ctx   context.Context
	store *store.Store
	url   string
}

// setup returns a migrated store on a fresh database of its own.
func setup(t testing.TB) bundle {
	t.Helper()
	ctx := context.Background()
	url := pgtest.NewDatabase(t)
	s, err := store.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	if _, err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	return bundle{ctx: ctx, store: s, url: url}
}

func TestMigrateIdempotent(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, err := store.Open(ctx, pgtest.NewDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ms, err := store.Migrations()
	if err != nil {
		t.Fatal(err)
	}
	first, err := s.Migrate(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(first) != len(ms) {
		t.Fatalf("first Migrate applied %v, want all %d", first, len(ms))
	}
	second, err := s.Migrate(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(second) != 0 {
		t.Fatalf("second Migrate applied %v, want nothing", second)
	}
}

// Processes starting together race to migrate; the advisory lock makes one
// apply everything and the others nothing.
func TestMigrateConcurrent(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := pgtest.NewDatabase(t)
	const n = 4
	results := make(chan []int, n)
	errs := make(chan error, n)
	for range n {
		go func() {
			s, err := store.Open(ctx, url)
			if err != nil {
				errs <- err
				return
			}
			defer s.Close()
			applied, err := s.Migrate(ctx)
			errs <- err
			results <- applied
		}()
	}
	total := 0
	for range n {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
		total += len(<-results)
	}
	ms, _ := store.Migrations()
	if total != len(ms) {
		t.Fatalf("%d concurrent Migrates applied %d migrations in all, want %d", n, total, len(ms))
	}
}

func TestMigrateRefusesNewerSchema(t *testing.T) {
	t.Parallel()
	b := setup(t)
	if _, err := b.store.Pool().Exec(b.ctx, `INSERT INTO schema_migrations (version, name) VALUES (999, '999_future.sql')`); err != nil {
		t.Fatal(err)
	}
	if _, err := b.store.Migrate(b.ctx); err == nil {
		t.Fatal("Migrate accepted a database at a newer schema version")
	}
}

func TestOpenUnreachable(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := store.Open(ctx, "postgres://postgres@127.0.0.1:1/x?sslmode=disable&connect_timeout=2"); err == nil {
		t.Fatal("Open succeeded against a closed port")
	}
}
