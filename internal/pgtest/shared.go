package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

var shared struct {
	once sync.Once
	srv  *Server
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
func Shared(tb testing.TB) *Server {
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
func SharedServer() (*Server, error) {
	shared.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		shared.srv, shared.err = Start(ctx, nil)
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

// CreateDatabase creates a database and returns its name. An empty name
// means a random one ("t_" and 16 hex digits).
func (s *Server) CreateDatabase(ctx context.Context, name string) (string, error) {
	if name == "" {
		var b [8]byte
		_, _ = rand.Read(b[:])
		name = "t_" + hex.EncodeToString(b[:])
	}
	conn, err := pgx.Connect(ctx, s.URL())
	if err != nil {
		return "", fmt.Errorf("pgtest: connect: %w", err)
	}
	defer conn.Close(context.Background())
	// The default strategy (WAL_LOG) measured faster here than FILE_COPY,
	// whose checkpoints cost more than logging template1's few pages.
	sql := "CREATE DATABASE " + pgx.Identifier{name}.Sanitize()
	if _, err := conn.Exec(ctx, sql); err != nil {
		return "", fmt.Errorf("pgtest: create database %q: %w", name, err)
	}
	return name, nil
}

// DropDatabase drops a database, ending its open sessions first.
func (s *Server) DropDatabase(ctx context.Context, name string) error {
	conn, err := pgx.Connect(ctx, s.URL())
	if err != nil {
		return fmt.Errorf("pgtest: connect: %w", err)
	}
	defer conn.Close(context.Background())
	sql := "DROP DATABASE IF EXISTS " + pgx.Identifier{name}.Sanitize() + " WITH (FORCE)"
	if _, err := conn.Exec(ctx, sql); err != nil {
		return fmt.Errorf("pgtest: drop database %q: %w", name, err)
	}
	return nil
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
