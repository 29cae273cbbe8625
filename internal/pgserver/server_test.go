package pgserver_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/baton-run/baton/internal/pgserver"
	"github.com/baton-run/baton/internal/testing/pgtest"
)

func TestMain(m *testing.M) {
	code := m.Run()
	pgtest.StopShared()
	os.Exit(code)
}

// A persistent data folder survives Stop and is reused by the next Start:
// what `baton dev` relies on.
func TestStartReusesDataDir(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "pg")
	if os.Geteuid() == 0 {
		// t.TempDir's parent is private to root; use a folder the
		// postgres user can reach.
		parent, err := os.MkdirTemp("", "pgtest-reuse-")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(parent) })
		if err := os.Chmod(parent, 0o755); err != nil {
			t.Fatal(err)
		}
		dir = filepath.Join(parent, "pg")
	}

	srv, err := pgserver.Start(ctx, &pgserver.Options{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	c := connect(t, srv.URL())
	if _, err := c.Exec(ctx, "CREATE TABLE kept (x int); INSERT INTO kept VALUES (42)"); err != nil {
		t.Fatal(err)
	}
	if got := setting(t, c, "fsync"); got != "on" {
		t.Errorf("fsync = %s on a persistent data folder, want on", got)
	}
	c.Close(ctx)
	port := srv.Port()
	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "PG_VERSION")); err != nil {
		t.Fatalf("data folder not kept after Stop: %v", err)
	}

	// Started again on the same port, without durability, as a test that
	// restarts its server does.
	srv, err = pgserver.Start(ctx, &pgserver.Options{DataDir: dir, Port: port, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	if srv.Port() != port {
		t.Errorf("restarted on port %d, want %d", srv.Port(), port)
	}
	c = connect(t, srv.URL())
	var x int
	if err := c.QueryRow(ctx, "SELECT x FROM kept").Scan(&x); err != nil {
		t.Fatal(err)
	}
	if x != 42 {
		t.Fatalf("x = %d, want 42", x)
	}
	if got := setting(t, c, "fsync"); got != "off" {
		t.Errorf("fsync = %s with NoSync, want off", got)
	}
}

func setting(t *testing.T, c *pgx.Conn, name string) string {
	t.Helper()
	var v string
	if err := c.QueryRow(context.Background(), "SELECT current_setting($1)", name).Scan(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

func TestStopRemovesTemporaryData(t *testing.T) {
	t.Parallel()
	start := time.Now()
	srv, err := pgserver.Start(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("initdb + start: %v", time.Since(start))
	dir := srv.DataDir()
	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("temporary data folder %s still there after Stop (stat: %v)", dir, err)
	}
	if err := srv.Stop(); err != nil {
		t.Fatalf("second Stop: %v", err)
	}
}

func TestMissingBinaries(t *testing.T) {
	t.Parallel()
	_, err := pgserver.Start(context.Background(), &pgserver.Options{BinDir: t.TempDir()})
	if !errors.Is(err, pgserver.ErrBinariesNotFound) {
		t.Fatalf("err = %v, want ErrBinariesNotFound", err)
	}
}

func connect(t *testing.T, url string) *pgx.Conn {
	t.Helper()
	c, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	return c
}
