package store

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// Migration is one numbered schema change.
type Migration struct {
	Version int    // from the file name: 001_read_model.sql is 1
	Name    string // the file name
	SQL     string
}

// Migrations returns the embedded migrations in order.
func Migrations() ([]Migration, error) {
	entries, err := fs.ReadDir(migrationFiles, "migrations")
	if err != nil {
		return nil, err
	}
	var ms []Migration
	seen := map[int]string{}
	for _, e := range entries {
		name := e.Name()
		num, _, ok := strings.Cut(name, "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || v <= 0 || !strings.HasSuffix(name, ".sql") {
			return nil, fmt.Errorf("store: migration file %q: want NNN_name.sql", name)
		}
		if other, dup := seen[v]; dup {
			return nil, fmt.Errorf("store: migrations %q and %q share version %d", other, name, v)
		}
		seen[v] = name
		b, err := migrationFiles.ReadFile(path.Join("migrations", name))
		if err != nil {
			return nil, err
		}
		ms = append(ms, Migration{Version: v, Name: name, SQL: string(b)})
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].Version < ms[j].Version })
	for i, m := range ms {
		if m.Version != i+1 {
			return nil, fmt.Errorf("store: migration %q: want version %d (no gaps)", m.Name, i+1)
		}
	}
	return ms, nil
}

// migrateLockKey is the advisory lock Migrate holds: any int64 that no other
// code in the database uses. Advisory locks are per database.
const migrateLockKey int64 = 0x626174_6f6e_6d67 // "batonmg"

const (
	sqlMigrateLock  = `SELECT pg_advisory_xact_lock($1)`
	sqlMigrateTable = `CREATE TABLE IF NOT EXISTS schema_migrations (
    version     integer     PRIMARY KEY,
    name        text        NOT NULL,
    applied_at  timestamptz NOT NULL DEFAULT now()
)`
	sqlMigrateApplied = `SELECT version FROM schema_migrations ORDER BY version`
	sqlMigrateRecord  = `INSERT INTO schema_migrations (version, name) VALUES ($1, $2)`
	sqlMigratePending = `SELECT count(*) FROM schema_migrations`
)

// Migrate applies the embedded migrations the database has not seen yet, in
// order, in one transaction, and returns the versions it applied. It holds
// an advisory lock while it works, so processes starting together apply
// each migration once. It refuses a database migrated by a newer Baton.
func (s *Store) Migrate(ctx context.Context) ([]int, error) {
	ms, err := Migrations()
	if err != nil {
		return nil, err
	}
	var applied []int
	err = inTx(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, sqlMigrateLock, migrateLockKey); err != nil {
			return fmt.Errorf("lock: %w", err)
		}
		if _, err := tx.Exec(ctx, sqlMigrateTable); err != nil {
			return fmt.Errorf("create schema_migrations: %w", err)
		}
		rows, _ := tx.Query(ctx, sqlMigrateApplied)
		done, err := pgx.CollectRows(rows, pgx.RowTo[int])
		if err != nil {
			return fmt.Errorf("read schema_migrations: %w", err)
		}
		have := map[int]bool{}
		for _, v := range done {
			have[v] = true
			if v > len(ms) {
				return fmt.Errorf("the database is at schema version %d, newer than this build knows (%d): run a newer Baton", v, len(ms))
			}
		}
		for _, m := range ms {
			if have[m.Version] {
				continue
			}
			if _, err := tx.Exec(ctx, m.SQL); err != nil {
				return fmt.Errorf("apply %s: %w", m.Name, err)
			}
			if _, err := tx.Exec(ctx, sqlMigrateRecord, m.Version, m.Name); err != nil {
				return fmt.Errorf("record %s: %w", m.Name, err)
			}
			applied = append(applied, m.Version)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("store: migrate: %w", err)
	}
	return applied, nil
}

// PendingMigrations returns how many embedded migrations the database has
// not applied, in one cheap query: readiness probes call it. A database
// never migrated has them all pending.
func (s *Store) PendingMigrations(ctx context.Context) (int, error) {
	ms, err := Migrations()
	if err != nil {
		return 0, err
	}
	var n int
	err = s.pool.QueryRow(ctx, sqlMigratePending).Scan(&n)
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "42P01" { // undefined_table
		return len(ms), nil
	}
	if err != nil {
		return 0, fmt.Errorf("store: read schema_migrations: %w", err)
	}
	return max(0, len(ms)-n), nil
}
