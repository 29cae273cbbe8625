package store

import (
	"encoding/json"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/baton-run/baton/interpreter"
)

// sqlUpsertAttempts writes a run's step attempts that changed ($6, a JSON
// array of interpreter.Attempt): each row is inserted, or updated unless
// the stored one has a higher rev, so a retried or late write never
// overwrites a newer one. A write of the same rev overwrites, as a run's
// row of the same seq does (UpsertRun): it is a workflow task that
// Temporal lost and ran again.
const sqlUpsertAttempts = `
INSERT INTO step_attempts AS s (org, run_id, step_id, attempt, process, version, mode, kind, state,
    outcome, ended_by, next, ready_at, claimed_at, escalated_at, ended_at, due, overdue_at,
    claims, lease_expiries, not_accepted, escalations, returns, checks, rev)
SELECT $1, $2, a."stepId", a.seq, $3, $4, $5, a.kind, coalesce(nullif(a.state, ''), 'ended'),
       nullif(a.outcome, ''), nullif(a."endedBy", ''), nullif(a.next, ''), a."readyAt", a."claimedAt",
       a."escalatedAt", a."endedAt", a.due, a."overdueAt",
       coalesce(a.claims, 0), coalesce(a."leaseExpiries", 0), coalesce(a."notAccepted", 0),
       coalesce(a.escalations, 0), coalesce(a.returns, 0), a.checks, a.rev
FROM jsonb_to_recordset($6::jsonb) AS a("stepId" text, seq bigint, kind text, state text, outcome text,
    "endedBy" text, next text, "readyAt" timestamptz, "claimedAt" timestamptz, "escalatedAt" timestamptz,
    "endedAt" timestamptz, due timestamptz, "overdueAt" timestamptz, claims integer, "leaseExpiries" integer,
    "notAccepted" integer, escalations integer, returns integer, checks jsonb, rev bigint)
ON CONFLICT (org, run_id, step_id, attempt) DO UPDATE SET
    process = EXCLUDED.process, version = EXCLUDED.version, mode = EXCLUDED.mode, kind = EXCLUDED.kind,
    state = EXCLUDED.state, outcome = EXCLUDED.outcome, ended_by = EXCLUDED.ended_by, next = EXCLUDED.next,
    ready_at = EXCLUDED.ready_at, claimed_at = EXCLUDED.claimed_at, escalated_at = EXCLUDED.escalated_at,
    ended_at = EXCLUDED.ended_at, due = EXCLUDED.due, overdue_at = EXCLUDED.overdue_at,
    claims = EXCLUDED.claims, lease_expiries = EXCLUDED.lease_expiries, not_accepted = EXCLUDED.not_accepted,
    escalations = EXCLUDED.escalations, returns = EXCLUDED.returns, checks = EXCLUDED.checks, rev = EXCLUDED.rev
WHERE s.rev <= EXCLUDED.rev`

// queueAttempts adds the write of a run's changed attempts to a publishing
// batch, in the transaction of the run's row; it queues nothing when
// none changed, and reports whether it queued.
func queueAttempts(b *pgx.Batch, row *RunRow, attempts []interpreter.Attempt) (bool, error) {
	if len(attempts) == 0 {
		return false, nil
	}
	doc, err := json.Marshal(attempts)
	if err != nil {
		return false, fmt.Errorf("store: attempts of run %s: %w", row.RunID, err)
	}
	b.Queue(sqlUpsertAttempts, row.Org, row.RunID, row.Process, row.Version, row.Mode, doc)
	return true, nil
}
