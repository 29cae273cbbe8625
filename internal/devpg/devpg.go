// Package devpg shares the private PostgreSQL of a `baton dev` data folder
// between `baton dev` and the commands run beside it (`baton import`,
// `publish`, `processes` with --data).
//
// The cluster lives in DIR/postgres. While `baton dev` runs, its server
// listens on a loopback port that PostgreSQL itself records in
// DIR/postgres/postmaster.pid; [Open] reads that file and connects there
// with the superuser's password, which the cluster keeps in
// DIR/postgres/baton-password (pgserver.PasswordFile, mode 0600): the server
// trusts no connection, so another local user cannot use it.
// When no server runs, [Open] starts one on the folder for as long as the
// command needs it, and [DB.Close] stops it.
//
// A lock file, DIR/postgres.lock (an flock), keeps the two from colliding:
// [Open] holds it from before it looks for a server until [DB.Close], and
// [Start], which `baton dev` uses, holds it while it starts the server. So a
// `baton dev` started while a command has the cluster open waits for the
// command to finish and then starts normally, and a command never stops a
// server that `baton dev` started.
package devpg

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/baton-run/baton/internal/pgserver"
)

// Folder is the cluster's folder inside the data folder.
const Folder = "postgres"

// LockFile is the lock file inside the data folder.
const LockFile = "postgres.lock"

// ErrNoCluster is returned by [Open] when the data folder holds no
// PostgreSQL cluster: `baton dev` never ran with it, or ran with
// --database-url.
var ErrNoCluster = errors.New("devpg: no PostgreSQL cluster in the data folder")

// Options configures [Start] and [Open]. A nil *Options means all defaults.
type Options struct {
	// Wait bounds how long to wait for the lock while another process
	// holds it. Default 2 minutes.
	Wait time.Duration
	// Logger is told when the lock is busy and the call waits. Default:
	// nothing is logged.
	Logger *slog.Logger
}

func (o *Options) withDefaults() Options {
	var out Options
	if o != nil {
		out = *o
	}
	if out.Wait <= 0 {
		out.Wait = 2 * time.Minute
	}
	return out
}

// ClusterDir returns the cluster's folder in dataDir.
func ClusterDir(dataDir string) string { return filepath.Join(dataDir, Folder) }

// Start starts the PostgreSQL of dataDir for `baton dev`, creating the
// cluster on first use. It waits while a command holds the cluster open
// (see [Open]). The server runs until Stop; dataDir must exist.
func Start(ctx context.Context, dataDir string, opts *Options) (*pgserver.Server, error) {
	o := opts.withDefaults()
	l, err := lock(ctx, dataDir, o)
	if err != nil {
		return nil, err
	}
	defer l.unlock()
	return pgserver.Start(ctx, &pgserver.Options{DataDir: ClusterDir(dataDir)})
}

// DB is the PostgreSQL of a data folder, open for one command.
type DB struct {
	url  string
	srv  *pgserver.Server // nil when the server was already running
	lock *lockFile
}

// Open finds the PostgreSQL of dataDir: the running server of `baton dev`,
// or, when none runs, a server it starts on the cluster until Close. It
// returns [ErrNoCluster] when dataDir holds no cluster (it never creates
// one). It waits while another command or a starting `baton dev` holds the
// lock.
func Open(ctx context.Context, dataDir string, opts *Options) (*DB, error) {
	o := opts.withDefaults()
	dir := ClusterDir(dataDir)
	if _, err := os.Stat(filepath.Join(dir, "PG_VERSION")); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("%w %s: start `baton dev --data %s` once to create it, or pass --database-url", ErrNoCluster, dir, dataDir)
		}
		return nil, fmt.Errorf("devpg: %w", err)
	}
	l, err := lock(ctx, dataDir, o)
	if err != nil {
		return nil, err
	}
	if url, ok := running(ctx, dir); ok {
		return &DB{url: url, lock: l}, nil
	}
	srv, err := pgserver.Start(ctx, &pgserver.Options{DataDir: dir})
	if err != nil {
		l.unlock()
		return nil, fmt.Errorf("devpg: no server runs on %s and starting one failed: %w", dir, err)
	}
	return &DB{url: srv.URL(), srv: srv, lock: l}, nil
}

// URL returns the postgres:// URL of the "postgres" database, the one
// `baton dev` uses.
func (d *DB) URL() string { return d.url }

// Started reports whether Open started the server (no `baton dev` was
// running), so Close stops it.
func (d *DB) Started() bool { return d.srv != nil }

// Close stops the server when Open started it, and releases the lock.
// Close connections to the URL first.
func (d *DB) Close() error {
	var err error
	if d.srv != nil {
		err = d.srv.Stop()
		d.srv = nil
	}
	if d.lock != nil {
		d.lock.unlock()
		d.lock = nil
	}
	return err
}
