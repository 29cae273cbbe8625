package store

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/baton-run/baton/internal/toolreg"
	"github.com/baton-run/baton/interpreter"
)

// This file keeps the baton-tools-1 profile's tool registration
// (docs/profile-tools.md §1) as toolreg parses it: each toolreg.Server with
// its tools' policies and its last tool listing.

const (
	// The lock serializes loads of one organization's registration: a
	// gateway and a worker starting together both load the file.
	sqlLockToolRegistry = `SELECT pg_advisory_xact_lock(hashtextextended('baton tool registration ' || $1, 0))`

	sqlDeleteOtherToolServers = `DELETE FROM tool_servers WHERE org = $1 AND NOT (name = ANY($2))`

	sqlDeleteToolPolicies = `DELETE FROM tool_policies WHERE org = $1`

	// A server whose url changed loses its listing: it describes another
	// endpoint.
	sqlPutToolServer = `
INSERT INTO tool_servers (org, name, position, url, test_url, credentials, timeout_ms)
VALUES ($1, $2, $3, $4, $5, $6, $7)
ON CONFLICT (org, name) DO UPDATE SET
    position = EXCLUDED.position, url = EXCLUDED.url, test_url = EXCLUDED.test_url,
    credentials = EXCLUDED.credentials, timeout_ms = EXCLUDED.timeout_ms,
    listing = CASE WHEN tool_servers.url = EXCLUDED.url THEN tool_servers.listing END,
    listed_at = CASE WHEN tool_servers.url = EXCLUDED.url THEN tool_servers.listed_at END,
    updated_at = now()`

	sqlPutToolPolicy = `
INSERT INTO tool_policies (org, server, tool, position, policy, idempotency, approvers, approval_sla_seconds)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`

	toolServerColumns = `name, url, coalesce(test_url, ''), credentials, timeout_ms, listing, listed_at, updated_at`

	sqlToolServers = `SELECT ` + toolServerColumns + ` FROM tool_servers WHERE org = $1 ORDER BY position, name`

	sqlToolServer = `SELECT ` + toolServerColumns + ` FROM tool_servers WHERE org = $1 AND name = $2`

	sqlToolPolicies = `
SELECT server, tool, policy, idempotency, approvers, coalesce(approval_sla_seconds, 0)
FROM tool_policies WHERE org = $1 AND ($2 = '' OR server = $2)
ORDER BY server, position`

	sqlSetToolListing = `
UPDATE tool_servers SET listing = $4, listed_at = $5
WHERE org = $1 AND name = $2 AND url = $3`
)

// PutToolServers replaces an organization's tool registration with
// servers: servers not among them are removed with their tools, and every
// tool policy is replaced. A server keeps its listing while its url stays
// the same.
func (s *Store) PutToolServers(ctx context.Context, q Querier, org string, servers []toolreg.Server) error {
	if org == "" {
		return fmt.Errorf("store: put tool servers: org is required")
	}
	names := make([]string, 0, len(servers))
	for _, ts := range servers {
		if ts.Name == "" || ts.URL == "" || ts.Timeout <= 0 {
			return fmt.Errorf("store: put tool server %q: Name, URL and a positive Timeout are required", ts.Name)
		}
		names = append(names, ts.Name)
	}
	err := inTx(ctx, s.q(q), func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, sqlLockToolRegistry, org); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, sqlDeleteOtherToolServers, org, names); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, sqlDeleteToolPolicies, org); err != nil {
			return err
		}
		b := &pgx.Batch{}
		for i, ts := range servers {
			var creds any
			if ts.Credentials != nil {
				creds = ts.Credentials
			}
			var test any
			if ts.TestURL != "" {
				test = ts.TestURL
			}
			b.Queue(sqlPutToolServer, org, ts.Name, i, ts.URL, test, creds, ts.Timeout.Milliseconds())
			for j, tp := range ts.Tools {
				approvers := tp.Approvers
				if approvers == nil {
					approvers = []string{}
				}
				var sla any
				if tp.ApprovalSLA > 0 {
					sla = int64(tp.ApprovalSLA / time.Second)
				}
				b.Queue(sqlPutToolPolicy, org, ts.Name, tp.Name, j, string(tp.Policy), string(tp.Idempotency), approvers, sla)
			}
		}
		return tx.SendBatch(ctx, b).Close()
	})
	if err != nil {
		return fmt.Errorf("store: put tool servers: %w", err)
	}
	return nil
}

// ToolServers returns an organization's registered servers with their
// tools, in the registration's order; none when nothing is registered.
func (s *Store) ToolServers(ctx context.Context, org string) ([]toolreg.Server, error) {
	rows, _ := s.pool.Query(ctx, sqlToolServers, org)
	servers, err := pgx.CollectRows(rows, scanToolServer)
	if err != nil {
		return nil, fmt.Errorf("store: tool servers: %w", err)
	}
	if err := s.fillToolPolicies(ctx, org, "", servers); err != nil {
		return nil, err
	}
	return servers, nil
}

// GetToolServer returns one registered server with its tools, or
// ErrNotFound.
func (s *Store) GetToolServer(ctx context.Context, org, name string) (toolreg.Server, error) {
	rows, _ := s.pool.Query(ctx, sqlToolServer, org, name)
	ts, err := pgx.CollectExactlyOneRow(rows, scanToolServer)
	if err == pgx.ErrNoRows {
		return toolreg.Server{}, fmt.Errorf("store: tool server %q: %w", name, ErrNotFound)
	}
	if err != nil {
		return toolreg.Server{}, fmt.Errorf("store: tool server %q: %w", name, err)
	}
	list := []toolreg.Server{ts}
	if err := s.fillToolPolicies(ctx, org, name, list); err != nil {
		return toolreg.Server{}, err
	}
	return list[0], nil
}

// fillToolPolicies adds the tools of server (every server when "") to
// servers.
func (s *Store) fillToolPolicies(ctx context.Context, org, server string, servers []toolreg.Server) error {
	rows, err := s.pool.Query(ctx, sqlToolPolicies, org, server)
	if err != nil {
		return fmt.Errorf("store: tool policies: %w", err)
	}
	defer rows.Close()
	byName := map[string]*toolreg.Server{}
	for i := range servers {
		byName[servers[i].Name] = &servers[i]
	}
	for rows.Next() {
		var srv, policy, idem string
		var tp toolreg.Tool
		var sla int64
		if err := rows.Scan(&srv, &tp.Name, &policy, &idem, &tp.Approvers, &sla); err != nil {
			return fmt.Errorf("store: tool policies: %w", err)
		}
		tp.Policy, tp.Idempotency = interpreter.Policy(policy), interpreter.Idempotency(idem)
		if len(tp.Approvers) == 0 {
			tp.Approvers = nil
		}
		tp.ApprovalSLA = time.Duration(sla) * time.Second
		if ts := byName[srv]; ts != nil {
			ts.Tools = append(ts.Tools, tp)
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("store: tool policies: %w", err)
	}
	return nil
}

// SetToolListing stores a server's tools/list answer, fetched from url at
// at. ErrNotFound when no server of that name has that url any more (the
// registration changed since the listing was asked for).
func (s *Store) SetToolListing(ctx context.Context, q Querier, org, name, url string, listing []toolreg.ListedTool, at time.Time) error {
	if listing == nil {
		listing = []toolreg.ListedTool{}
	}
	tag, err := s.q(q).Exec(ctx, sqlSetToolListing, org, name, url, listing, at)
	if err != nil {
		return fmt.Errorf("store: listing of tool server %q: %w", name, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("store: tool server %q at %s: %w", name, url, ErrNotFound)
	}
	return nil
}

func scanToolServer(row pgx.CollectableRow) (toolreg.Server, error) {
	var ts toolreg.Server
	var timeoutMS int64
	var listedAt *time.Time
	err := row.Scan(&ts.Name, &ts.URL, &ts.TestURL, &ts.Credentials, &timeoutMS, &ts.Listing, &listedAt, &ts.UpdatedAt)
	ts.Timeout = time.Duration(timeoutMS) * time.Millisecond
	if listedAt != nil {
		ts.ListedAt = *listedAt
	}
	return ts, err
}
