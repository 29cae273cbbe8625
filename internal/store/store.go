// Package store owns every PostgreSQL table Baton uses and all of its SQL:
// the run read model that get_work and list_runs read (runs and open work,
// written by each run's workflow), idempotency records, uploaded files and
// the process registry.
//
// Schema changes are numbered migrations embedded in the binary and applied
// by Migrate. Queries are named constants. Methods that write take a Querier,
// so they run inside a caller's transaction (a pgx.Tx) or, given nil, on the
// store's own pool.
package store

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Querier is what the store's methods need from a connection: a
// *pgxpool.Pool, a *pgx.Conn and a pgx.Tx all satisfy it. Begin on a pgx.Tx
// starts a savepoint, so a method that needs its own transaction nests in
// the caller's.
type Querier interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults
	Begin(ctx context.Context) (pgx.Tx, error)
}

var (
	_ Querier = (*pgxpool.Pool)(nil)
	_ Querier = (*pgx.Conn)(nil)
	_ Querier = (pgx.Tx)(nil)
)

// ErrNotFound is returned when a looked-up row does not exist.
var ErrNotFound = errors.New("store: not found")

// Store is Baton's PostgreSQL database.
type Store struct {
	pool     *pgxpool.Pool
	verified *verifiedFiles // see VerifyFiles
}

// DefaultMaxConns is the pool size Open uses unless the URL sets
// pool_max_conns. pgx's own default (the number of CPUs, at least 4) is too
// small for a gateway, whose writes each hold a connection while they wait
// on a run's workflow.
const DefaultMaxConns = 16

// Open connects to the database at url (a postgres:// URL or key=value
// connection string; pool settings such as pool_max_conns may be given in
// it) and checks that it answers. It does not migrate; call Migrate.
//
// A gateway and a worker must not share one Store: a gateway's write waits,
// holding a connection, for the workflow whose read-model write needs one.
func Open(ctx context.Context, url string) (*Store, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("store: parse database URL: %w", err)
	}
	if !strings.Contains(url, "pool_max_conns") {
		cfg.MaxConns = DefaultMaxConns
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("store: open pool: %w", err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("store: connect to %s:%d/%s: %w", cfg.ConnConfig.Host, cfg.ConnConfig.Port, cfg.ConnConfig.Database, err)
	}
	return &Store{pool: pool, verified: newVerifiedFiles(VerifiedFilesMax, VerifiedFilesTTL)}, nil
}

// Close closes the pool, waiting for connections in use to be returned.
func (s *Store) Close() { s.pool.Close() }

// Pool returns the store's connection pool, to begin transactions that
// span several store methods.
func (s *Store) Pool() *pgxpool.Pool { return s.pool }

// q returns the Querier to run on: the caller's, or the pool.
func (s *Store) q(q Querier) Querier {
	if q == nil {
		return s.pool
	}
	return q
}

// inTx runs fn in a transaction on q (a savepoint when q is a transaction),
// committing when fn returns nil.
func inTx(ctx context.Context, q Querier, fn func(tx pgx.Tx) error) error {
	tx, err := q.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(context.Background()) //nolint:errcheck // after Commit it is a no-op
	if err := fn(tx); err != nil {
		return err
	}
	return tx.Commit(ctx)
}
