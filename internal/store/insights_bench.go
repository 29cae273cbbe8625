package store

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// What `baton bench --insights` measures the insights against: ended and
// open runs of one process, seeded straight into the tables in an
// organization of their own, and deleted after. Every value is a function
// of the run's number, so two seedings are alike. $1 org, $2 process, $3
// now, $4 ended runs, $5 open runs.
const (
	// sqlSeedInsightsRuns: run i started 1 to 30 days before now; the
	// first $4 ended (one in ten rejected) 1h40m to a day after.
	sqlSeedInsightsRuns = `
INSERT INTO runs (org, run_id, process, version, state, outcome, mode, inputs, started_by, started_at, updated_at, seq)
SELECT $1, 'rb_' || i, $2, 1,
       CASE WHEN i <= $4 THEN 'ended' ELSE 'waiting' END,
       CASE WHEN i <= $4 THEN CASE WHEN i % 10 = 0 THEN 'rejected' ELSE 'ok' END END,
       'live', '{}', 'u_bench', s.started,
       CASE WHEN i <= $4 THEN s.started + make_interval(secs => 6000 + (i::bigint * 104729) % 80000) ELSE s.started + interval '2 hours' END,
       9
FROM generate_series(1, $4::int + $5::int) AS i,
     LATERAL (SELECT $3::timestamptz - make_interval(secs => 86400 + (i::bigint * 7919) % (29 * 86400))) AS s(started)`

	// sqlSeedInsightsAttempts: each run's agent step, done within an
	// hour and a half of its start (one in twenty after a lease ran out,
	// one in seven after a refusal, one in five checked), and its
	// approval: decided at the run's end, or open and, one in three,
	// overdue.
	sqlSeedInsightsAttempts = `
INSERT INTO step_attempts (org, run_id, step_id, attempt, process, version, mode, kind, state, outcome, ended_by, next,
    ready_at, claimed_at, ended_at, due, overdue_at, claims, lease_expiries, not_accepted, checks, rev)
SELECT r.org, r.run_id, a.step_id, a.attempt, r.process, 1, 'live', a.kind, a.state, a.outcome, a.ended_by, a.next,
       a.ready_at, a.claimed_at, a.ended_at, a.due, a.overdue_at, a.claims, a.lease_expiries, a.not_accepted, a.checks, 1
FROM runs r,
     LATERAL (SELECT substr(r.run_id, 4)::bigint AS i) AS n,
     LATERAL (SELECT r.started_at + make_interval(secs => 60 + (n.i * 31) % 3600) AS claimed,
                     r.started_at + make_interval(secs => 120 + (n.i * 31) % 3600 + (n.i * 17) % 1800) AS worked) AS w,
     LATERAL (VALUES
        ('work', 1::bigint, 'agent', 'ended', 'done', 'agent', 'check', r.started_at, w.claimed, w.worked, NULL::timestamptz, NULL::timestamptz,
         CASE WHEN n.i % 20 = 0 THEN 2 ELSE 1 END, CASE WHEN n.i % 20 = 0 THEN 1 ELSE 0 END, CASE WHEN n.i % 7 = 0 THEN 1 ELSE 0 END,
         CASE WHEN n.i % 5 = 0 THEN '[{"verdict":"pass","results":["pass"]}]'::jsonb END),
        ('check', 3::bigint, 'approve', CASE WHEN r.state = 'ended' THEN 'ended' ELSE 'waiting' END,
         CASE WHEN r.state = 'ended' THEN CASE WHEN r.outcome = 'rejected' THEN 'rejected' ELSE 'done' END END,
         CASE WHEN r.state = 'ended' THEN 'person' END,
         CASE WHEN r.state = 'ended' AND r.outcome = 'ok' THEN 'done' END,
         w.worked, NULL::timestamptz, CASE WHEN r.state = 'ended' THEN r.updated_at END, w.worked + interval '1 day',
         CASE WHEN r.state <> 'ended' AND n.i % 3 = 0 THEN w.worked + interval '1 day' END, 0, 0, 0, NULL::jsonb)
     ) AS a(step_id, attempt, kind, state, outcome, ended_by, next, ready_at, claimed_at, ended_at, due, overdue_at,
            claims, lease_expiries, not_accepted, checks)
WHERE r.org = $1 AND r.process = $2`

	// sqlSeedInsightsWork: the open approvals' work items.
	sqlSeedInsightsWork = `
INSERT INTO work (org, run_id, step_id, work_item_id, kind, process, version, mode, ready_since, assigned_group)
SELECT org, run_id, step_id, 'w_1', 'approve', process, 1, 'live', ready_at, 'reviewers'
FROM step_attempts WHERE org = $1 AND process = $2 AND outcome IS NULL`

	sqlSeedInsightsAnalyze = `ANALYZE runs; ANALYZE step_attempts; ANALYZE work`

	// sqlSeedInsightsVacuumCounters: seeding in one transaction updated
	// the counters once a run and left every old version of them behind,
	// which writes spread over time would not (and autovacuum clears).
	sqlSeedInsightsVacuumCounters = `VACUUM (ANALYZE) insights_counters, insights_run_ends`
)

// dropInsightsBench deletes what a seeding wrote ($1 org), and then the
// counters the deletions left at 0.
var dropInsightsBench = []string{
	`DELETE FROM step_attempts WHERE org = $1`,
	`DELETE FROM runs WHERE org = $1`,
	`DELETE FROM insights_counters WHERE org = $1`,
	`DELETE FROM insights_run_ends WHERE org = $1`,
}

// SeedInsightsBench writes ended and open runs of process, with their step
// attempts and open work, in org, which must hold nothing else: what
// `baton bench --insights` measures. DropInsightsBench deletes them.
func (s *Store) SeedInsightsBench(ctx context.Context, org, process string, ended, open int, now time.Time) error {
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, sqlSeedInsightsRuns, org, process, now, ended, open); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, sqlSeedInsightsAttempts, org, process); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, sqlSeedInsightsWork, org, process)
		return err
	})
	if err == nil {
		_, err = s.pool.Exec(ctx, sqlSeedInsightsAnalyze)
	}
	if err == nil {
		_, err = s.pool.Exec(ctx, sqlSeedInsightsVacuumCounters)
	}
	if err != nil {
		return fmt.Errorf("store: seed the insights bench: %w", err)
	}
	return nil
}

// DropInsightsBench deletes every run, work row and step attempt of org.
func (s *Store) DropInsightsBench(ctx context.Context, org string) error {
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		for _, q := range dropInsightsBench {
			if _, err := tx.Exec(ctx, q, org); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("store: drop the insights bench: %w", err)
	}
	return nil
}

// ExplainInsights runs each statement of Insights under EXPLAIN (ANALYZE,
// BUFFERS) and returns the plans, by statement, in Insights' order; with
// exact, also those of a small window's exact durations.
func (s *Store) ExplainInsights(ctx context.Context, org, process string, opts *InsightsOptions, exact bool) ([][2]string, error) {
	w := opts.window()
	qs := insightsQueries(org, process, w)
	if exact {
		qs = append(qs, exactQueries(org, process, w)...)
	}
	var out [][2]string
	for _, q := range qs {
		rows, _ := s.pool.Query(ctx, "EXPLAIN (ANALYZE, BUFFERS) "+q.sql, q.args...)
		lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			return nil, fmt.Errorf("store: explain %s: %w", q.name, err)
		}
		out = append(out, [2]string{q.name, strings.Join(lines, "\n")})
	}
	return out, nil
}
