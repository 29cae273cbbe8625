// Package pgtest gives tests a private PostgreSQL: one server per test
// binary (Shared), started by internal/pgserver, and one fresh database per
// test (NewDatabase). Only tests import it.
package pgtest

import (
	"context"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/baton-run/baton/internal/pgserver"
)

var shared struct {
	once sync.Once
	srv  *pgserver.Server
	err  error
}

// Shared returns the test binary's one PostgreSQL server, starting it on
// first use (a temporary data folder, a free port). It fails the test when
// the server cannot start. A package whose tests use it stops it from
// TestMain, so no server outlives the test binary:
//
//	func TestMain(m *testing.M) {
//		code := m.Run()
//		pgtest.StopShared()
//		os.Exit(code)
//	}
//
// (On Linux a server whose test binary dies anyway shuts itself down.)
func Shared(tb testing.TB) *pgserver.Server {
	tb.Helper()
	srv, err := SharedServer()
	if err != nil {
		tb.Fatalf("start the shared PostgreSQL: %v", err)
	}
	return srv
}

// SharedServer is Shared for code without a testing.TB, such as examples:
// it returns the test binary's one server, starting it on first use, or
// the error that kept it from starting.
func SharedServer() (*pgserver.Server, error) {
	shared.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		shared.srv, shared.err = pgserver.Start(ctx, nil)
	})
	return shared.srv, shared.err
}

// StopShared stops the server Shared started, if any.
func StopShared() {
	if shared.srv != nil {
		_ = shared.srv.Stop()
	}
}

// NewDatabase creates a fresh, empty database on the shared server for this
// test and returns its URL; the database is dropped when the test ends.
// Databases isolate tests completely (tables, advisory locks, prepared
// statements), so tests using one may run in parallel. Creating one takes
// about a tenth of a second.
func NewDatabase(tb testing.TB) string {
	tb.Helper()
	srv := Shared(tb)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	name, err := srv.CreateDatabase(ctx, "")
	if err != nil {
		tb.Fatalf("create test database: %v", err)
	}
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := srv.DropDatabase(ctx, name); err != nil {
			tb.Errorf("drop test database: %v", err)
		}
	})
	return srv.DatabaseURL(name)
}

// DataDir returns a fresh folder for a test to keep a PostgreSQL data
// folder in (or a data folder that holds one, such as baton dev's), removed
// when the test ends. As root the server runs as user postgres, which
// cannot reach t.TempDir() (its parent is private to root), so there it is
// a folder of its own that others may enter.
func DataDir(tb testing.TB) string {
	tb.Helper()
	if os.Geteuid() != 0 {
		return tb.TempDir()
	}
	dir, err := os.MkdirTemp("", "baton-test-")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		tb.Fatal(err)
	}
	return dir
}
