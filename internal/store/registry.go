package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/baton-run/baton/interpreter"
)

// Draft is an imported process not yet published: its source, the parsed
// definition, its content hash, and the groups its roles are bound to so
// far.
type Draft struct {
	Org        string
	Name       string
	Source     string          // PROCESS.md as imported
	Definition json.RawMessage // the parsed process, as the interpreter serializes it
	Hash       string
	Roles      map[string]string // role name -> group id
	ImportedBy string
	ImportedAt time.Time
}

// ProcessVersion is a published version of a process. It never changes.
type ProcessVersion struct {
	Org        string
	Name       string
	Version    int
	Hash       string
	Source     string
	Definition json.RawMessage
	Roles      map[string]string
	// Children binds each process step to the child version it runs
	// (baton-subprocess-1); empty without process steps.
	Children    interpreter.Bindings
	PublishedBy string
	PublishedAt time.Time
}

const (
	sqlEnsureProcess = `
INSERT INTO processes (org, name) VALUES ($1, $2) ON CONFLICT DO NOTHING`

	sqlPutDraft = `
INSERT INTO process_drafts (org, name, source, definition, hash, roles, imported_by)
VALUES ($1, $2, $3, $4, $5, $6, $7)
ON CONFLICT (org, name) DO UPDATE SET
    source = EXCLUDED.source, definition = EXCLUDED.definition, hash = EXCLUDED.hash,
    roles = EXCLUDED.roles, imported_by = EXCLUDED.imported_by, imported_at = now()`

	sqlGetDraft = `
SELECT org, name, source, definition, hash, roles, imported_by, imported_at
FROM process_drafts WHERE org = $1 AND name = $2`

	sqlSetDraftRoles = `
UPDATE process_drafts SET roles = $3 WHERE org = $1 AND name = $2`

	// Locking the process row serializes publishers of one process, so
	// each gets its own next version number.
	sqlLockProcess = `
SELECT name FROM processes WHERE org = $1 AND name = $2 FOR UPDATE`

	sqlPublishDraft = `
WITH draft AS (
    DELETE FROM process_drafts WHERE org = $1 AND name = $2
    RETURNING org, name, hash, source, definition, roles
)
INSERT INTO process_versions (org, name, version, hash, source, definition, roles, children, published_by)
SELECT org, name,
       (SELECT coalesce(max(version), 0) + 1 FROM process_versions WHERE org = $1 AND name = $2),
       hash, source, definition, roles, $4, $3
FROM draft
RETURNING ` + versionColumns

	sqlGetVersion = `
SELECT ` + versionColumns + `
FROM process_versions WHERE org = $1 AND name = $2 AND version = $3`

	sqlLatestVersion = `
SELECT ` + versionColumns + `
FROM process_versions WHERE org = $1 AND name = $2
ORDER BY version DESC LIMIT 1`

	sqlLatestNumber = `
SELECT version FROM process_versions WHERE org = $1 AND name = $2
ORDER BY version DESC LIMIT 1`

	sqlListLatest = `
SELECT DISTINCT ON (name) ` + versionColumns + `
FROM process_versions WHERE org = $1 AND name > $2
ORDER BY name, version DESC
LIMIT $3`

	versionColumns = `org, name, version, hash, source, definition, roles, children, published_by, published_at`
)

// PutDraft stores d as the draft of its process, replacing an earlier draft.
func (s *Store) PutDraft(ctx context.Context, q Querier, d Draft) error {
	if d.Org == "" || d.Name == "" {
		return fmt.Errorf("store: put draft: Org and Name are required")
	}
	roles := d.Roles
	if roles == nil {
		roles = map[string]string{}
	}
	err := inTx(ctx, s.q(q), func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, sqlEnsureProcess, d.Org, d.Name); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, sqlPutDraft, d.Org, d.Name, d.Source, d.Definition, d.Hash, roles, d.ImportedBy)
		return err
	})
	if err != nil {
		return fmt.Errorf("store: put draft %q: %w", d.Name, err)
	}
	return nil
}

// GetDraft returns the draft of a process, or ErrNotFound.
func (s *Store) GetDraft(ctx context.Context, org, name string) (Draft, error) {
	var d Draft
	err := s.pool.QueryRow(ctx, sqlGetDraft, org, name).Scan(&d.Org, &d.Name, &d.Source, &d.Definition, &d.Hash, &d.Roles, &d.ImportedBy, &d.ImportedAt)
	if err == pgx.ErrNoRows {
		return Draft{}, fmt.Errorf("store: draft of %q: %w", name, ErrNotFound)
	}
	if err != nil {
		return Draft{}, fmt.Errorf("store: get draft %q: %w", name, err)
	}
	return d, nil
}

// SetDraftRoles replaces the role bindings of a draft; ErrNotFound when the
// process has no draft.
func (s *Store) SetDraftRoles(ctx context.Context, q Querier, org, name string, roles map[string]string) error {
	if roles == nil {
		roles = map[string]string{}
	}
	tag, err := s.q(q).Exec(ctx, sqlSetDraftRoles, org, name, roles)
	if err != nil {
		return fmt.Errorf("store: bind roles of %q: %w", name, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("store: draft of %q: %w", name, ErrNotFound)
	}
	return nil
}

// Publish turns the draft of a process into its next version (1 for the
// first), with the given child bindings, and removes the draft.
// ErrNotFound when there is no draft. Checking that every role is bound
// and binding the children are the caller's job.
func (s *Store) Publish(ctx context.Context, q Querier, org, name, by string, children interpreter.Bindings) (ProcessVersion, error) {
	if children == nil {
		children = interpreter.Bindings{}
	}
	var v ProcessVersion
	err := inTx(ctx, s.q(q), func(tx pgx.Tx) error {
		var locked string
		if err := tx.QueryRow(ctx, sqlLockProcess, org, name).Scan(&locked); err != nil {
			return err
		}
		rows, _ := tx.Query(ctx, sqlPublishDraft, org, name, by, children)
		var err error
		v, err = pgx.CollectExactlyOneRow(rows, scanVersion)
		return err
	})
	if err == pgx.ErrNoRows {
		return ProcessVersion{}, fmt.Errorf("store: publish %q: no draft: %w", name, ErrNotFound)
	}
	if err != nil {
		return ProcessVersion{}, fmt.Errorf("store: publish %q: %w", name, err)
	}
	return v, nil
}

// LatestVersion returns the number of a process's latest published
// version, reading nothing else of it. ErrNotFound when it has none.
func (s *Store) LatestVersion(ctx context.Context, org, name string) (int, error) {
	var v int
	err := s.pool.QueryRow(ctx, sqlLatestNumber, org, name).Scan(&v)
	if err == pgx.ErrNoRows {
		return 0, fmt.Errorf("store: process %q: %w", name, ErrNotFound)
	}
	if err != nil {
		return 0, fmt.Errorf("store: latest version of %q: %w", name, err)
	}
	return v, nil
}

// GetVersion returns a published version of a process; version 0 means the
// latest. ErrNotFound when there is no such version.
func (s *Store) GetVersion(ctx context.Context, org, name string, version int) (ProcessVersion, error) {
	var rows pgx.Rows
	if version == 0 {
		rows, _ = s.pool.Query(ctx, sqlLatestVersion, org, name)
	} else {
		rows, _ = s.pool.Query(ctx, sqlGetVersion, org, name, version)
	}
	v, err := pgx.CollectExactlyOneRow(rows, scanVersion)
	if err == pgx.ErrNoRows {
		return ProcessVersion{}, fmt.Errorf("store: process %q version %d: %w", name, version, ErrNotFound)
	}
	if err != nil {
		return ProcessVersion{}, fmt.Errorf("store: get process %q: %w", name, err)
	}
	return v, nil
}

// ListProcesses lists the latest version of every published process, by
// name, limit at a time. cursor is "" for the first page, else the next
// cursor a previous page returned; next is "" after the last page.
func (s *Store) ListProcesses(ctx context.Context, org string, limit int, cur string) (items []ProcessVersion, next string, err error) {
	if err := checkLimit(limit); err != nil {
		return nil, "", err
	}
	after := ""
	if cur != "" {
		c, _, err := decodeCursor(cur, cursorProcesses)
		if err != nil {
			return nil, "", err
		}
		after = c.Name
	}
	rows, _ := s.pool.Query(ctx, sqlListLatest, org, after, limit+1)
	items, err = pgx.CollectRows(rows, scanVersion)
	if err != nil {
		return nil, "", fmt.Errorf("store: list processes: %w", err)
	}
	if len(items) <= limit {
		return items, "", nil
	}
	items = items[:limit]
	return items, cursor{Kind: cursorProcesses, Name: items[limit-1].Name}.encode(), nil
}

func scanVersion(row pgx.CollectableRow) (ProcessVersion, error) {
	var v ProcessVersion
	err := row.Scan(&v.Org, &v.Name, &v.Version, &v.Hash, &v.Source, &v.Definition, &v.Roles, &v.Children, &v.PublishedBy, &v.PublishedAt)
	return v, err
}
