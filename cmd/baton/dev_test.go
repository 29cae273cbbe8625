package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/baton-run/baton/internal/pgtest"
)

// baton dev hands out 30-day tokens in the clear; listening beyond loopback
// must not go unnoticed.
func TestDevWarnsWhenListeningBeyondLoopback(t *testing.T) {
	t.Parallel()
	for _, listen := range []string{"0.0.0.0:0", ":0", "[::]:0", "192.0.2.7:0"} {
		code, _, stderr := runBaton("dev", "--listen", listen, "--data", t.TempDir(), "--database-url", unreachable[1])
		if code != 1 {
			t.Errorf("%s: exit %d, want 1 (the database is unreachable)", listen, code)
		}
		if !strings.Contains(stderr, "level=WARN") || !strings.Contains(stderr, "BEYOND THIS MACHINE") {
			t.Errorf("%s: no loud warning in %q", listen, stderr)
		}
	}
	for _, listen := range []string{"127.0.0.1:0", "localhost:0", "[::1]:0"} {
		_, _, stderr := runBaton("dev", "--listen", listen, "--data", t.TempDir(), "--database-url", unreachable[1])
		if strings.Contains(stderr, "BEYOND THIS MACHINE") {
			t.Errorf("%s: warned about a loopback address: %q", listen, stderr)
		}
	}
}

// --temporal-store: PostgreSQL by default, SQLite on request, and a data
// folder whose Temporal state is in SQLite keeps it there.
func TestDevTemporalStore(t *testing.T) {
	t.Parallel()
	code, _, stderr := runBaton("dev", "--temporal-store", "mysql", "--data", filepath.Join(t.TempDir(), "never"))
	if code != 2 || !strings.Contains(stderr, "--temporal-store") {
		t.Errorf("--temporal-store mysql: exit %d, stderr %q; want 2 naming the flag", code, stderr)
	}

	data := pgtest.DataDir(t)
	cfg := devConfigFor(data)
	cfg.temporalStore = storeSQLite
	dev := launchDev(t, cfg)
	if !strings.Contains(dev.printed, "state in sqlite") {
		t.Errorf("--temporal-store sqlite printed:\n%s", dev.printed)
	}
	dev.stop()
	if _, err := os.Stat(filepath.Join(data, sqliteFile)); err != nil {
		t.Fatalf("--temporal-store sqlite made no %s: %v", sqliteFile, err)
	}
	dev = launchDev(t, devConfigFor(data))
	if !strings.Contains(dev.printed, "state in sqlite") {
		t.Errorf("a data folder with a %s, no --temporal-store, printed:\n%s", sqliteFile, dev.printed)
	}
}
