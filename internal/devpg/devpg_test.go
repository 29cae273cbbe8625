package devpg

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/baton-run/baton/internal/testing/pgtest"
)

// created returns a data folder whose cluster exists and is stopped, as
// after a `baton dev` that ran and ended.
func created(t *testing.T) string {
	t.Helper()
	dir := pgtest.DataDir(t)
	srv, err := Start(context.Background(), dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	return dir
}

func execSQL(t *testing.T, url, sql string) {
	t.Helper()
	ctx := context.Background()
	c, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatalf("connect %s: %v", url, err)
	}
	defer c.Close(ctx)
	if _, err := c.Exec(ctx, sql); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

func count(t *testing.T, url, table string) int {
	t.Helper()
	ctx := context.Background()
	c, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatalf("connect %s: %v", url, err)
	}
	defer c.Close(ctx)
	var n int
	if err := c.QueryRow(ctx, "SELECT count(*) FROM "+table).Scan(&n); err != nil {
		t.Fatalf("count %s: %v", table, err)
	}
	return n
}

func TestOpenWithoutCluster(t *testing.T) {
	dir := t.TempDir()
	_, err := Open(context.Background(), dir, nil)
	if !errors.Is(err, ErrNoCluster) {
		t.Fatalf("Open = %v, want ErrNoCluster", err)
	}
	if !strings.Contains(err.Error(), "--database-url") {
		t.Errorf("the error should say what to do: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, Folder)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Open created %s (stat: %v); it must never create a cluster", Folder, err)
	}
}

// While baton dev runs, Open connects to its server and Close leaves it
// running.
func TestOpenWhileDevRuns(t *testing.T) {
	dir := pgtest.DataDir(t)
	ctx := context.Background()
	dev, err := Start(ctx, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer dev.Stop()
	execSQL(t, dev.URL(), "CREATE TABLE seen (x int); INSERT INTO seen VALUES (1)")

	db, err := Open(ctx, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if db.Started() {
		t.Fatal("Open started a server although baton dev's runs")
	}
	if db.URL() != dev.URL() {
		t.Errorf("URL = %s, want dev's %s", db.URL(), dev.URL())
	}
	// The password came from the cluster's file; without it dev's server
	// refuses the connection.
	if !strings.Contains(db.URL(), ":"+dev.Password()+"@") {
		t.Errorf("URL %s carries no password", db.URL())
	}
	if c, err := pgconn.Connect(ctx, strings.Replace(db.URL(), ":"+dev.Password()+"@", "@", 1)); err == nil {
		c.Close(ctx)
		t.Error("dev's server took a connection without the password")
	}
	execSQL(t, db.URL(), "INSERT INTO seen VALUES (2)")
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if n := count(t, dev.URL(), "seen"); n != 2 {
		t.Fatalf("dev's server has %d rows after Close, want 2 (is it still running?)", n)
	}
}

// When baton dev is stopped, Open starts the cluster for the command and
// Close stops it; what the command wrote is there when dev starts again.
func TestOpenWhenStopped(t *testing.T) {
	dir := created(t)
	ctx := context.Background()
	db, err := Open(ctx, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !db.Started() {
		t.Fatal("Open found a running server, but none runs")
	}
	execSQL(t, db.URL(), "CREATE TABLE kept (x int); INSERT INTO kept VALUES (7)")
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(ClusterDir(dir), "postmaster.pid")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("postmaster.pid still there after Close (stat: %v): the server was not stopped", err)
	}
	dev, err := Start(ctx, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer dev.Stop()
	if n := count(t, dev.URL(), "kept"); n != 1 {
		t.Fatalf("dev sees %d rows, want 1", n)
	}
}

// A baton dev that starts while a command has the stopped cluster open
// waits for the command, then starts on the same data.
func TestStartWaitsForOpen(t *testing.T) {
	dir := created(t)
	ctx := context.Background()
	db, err := Open(ctx, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	type started struct {
		url string
		err error
		at  time.Time
	}
	done := make(chan started, 1)
	var devStop func() error
	go func() {
		srv, err := Start(ctx, dir, nil)
		s := started{err: err, at: time.Now()}
		if err == nil {
			s.url, devStop = srv.URL(), srv.Stop
		}
		done <- s
	}()
	select {
	case s := <-done:
		t.Fatalf("Start returned (%v) while a command had the cluster open", s.err)
	case <-time.After(700 * time.Millisecond):
	}
	// The command goes on undisturbed, then finishes.
	execSQL(t, db.URL(), "CREATE TABLE during (x int); INSERT INTO during VALUES (1)")
	closed := time.Now()
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	var s started
	select {
	case s = <-done:
	case <-time.After(2 * time.Minute):
		t.Fatal("Start did not return after the command closed")
	}
	if s.err != nil {
		t.Fatalf("Start after the command: %v", s.err)
	}
	defer devStop()
	if s.at.Before(closed) {
		t.Fatal("Start returned before the command closed")
	}
	if n := count(t, s.url, "during"); n != 1 {
		t.Fatalf("dev sees %d rows of what the command wrote, want 1", n)
	}
}

// A second command waits for the first; past Wait it gives up, saying why.
func TestOpenWaitLimit(t *testing.T) {
	dir := created(t)
	ctx := context.Background()
	first, err := Open(ctx, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Open(ctx, dir, &Options{Wait: 300 * time.Millisecond})
	if err == nil || !strings.Contains(err.Error(), "another baton command") {
		t.Fatalf("second Open = %v, want a busy-lock error", err)
	}
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	second, err := Open(ctx, dir, nil)
	if err != nil {
		t.Fatalf("Open after the first closed: %v", err)
	}
	if err := second.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestPidFileURL(t *testing.T) {
	tests := []struct {
		name, pid, want string
		ok              bool
	}{
		{
			name: "tcp",
			pid:  "4242\n/data/postgres\n1700000000\n5433\n/tmp/baton-pg-1/sock\n127.0.0.1\n  5433001    131072\nready   \n",
			want: "postgres://postgres:pw@127.0.0.1:5433/postgres?sslmode=disable", ok: true,
		},
		{
			name: "any address",
			pid:  "1\n/d\n1\n5000\n/s\n*\n1 2\nready\n",
			want: "postgres://postgres:pw@127.0.0.1:5000/postgres?sslmode=disable", ok: true,
		},
		{
			name: "socket only",
			pid:  "1\n/d\n1\n5000\n/run/pg\n\n1 2\nready\n",
			want: "postgres://postgres:pw@/postgres?host=%2Frun%2Fpg&port=5000&sslmode=disable", ok: true,
		},
		{name: "starting", pid: "1\n/d\n1\n5000\n/s\n127.0.0.1\n1 2\nstarting\n"},
		{name: "stopping", pid: "1\n/d\n1\n5000\n/s\n127.0.0.1\n1 2\nstopping\n"},
		{name: "truncated", pid: "1\n/d\n1\n5000\n"},
		{name: "bad port", pid: "1\n/d\n1\nx\n/s\n127.0.0.1\n1 2\nready\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := pidFileURL(tt.pid, "pw")
			if ok != tt.ok || got != tt.want {
				t.Fatalf("pidFileURL = %q, %v; want %q, %v", got, ok, tt.want, tt.ok)
			}
		})
	}
}
