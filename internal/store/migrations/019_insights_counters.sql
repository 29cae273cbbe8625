-- Per-day counters of process insights (docs/insights.md), kept by
-- triggers in the transaction that writes the runs' rows and their step
-- attempts, so that the figures of a 30-day window read about thirty days
-- of counters instead of every attempt begun in it.
--
-- A counter is a named count of a process's live runs or of one step's
-- attempts on one UTC day: the day an attempt became ready, the day a run
-- started or ended. step_id is '' for a run's own counters. Names:
--   of an attempt: attempts, ended, kind:K, outcome:O, done:BY, taken_over,
--     escalated, returned, returns, not_accepted, lease_expiries, overdue,
--     route:O:NEXT, the durations claim:B, work:B, decide:B and esc:B, and
--     q:I:RESULT:VERDICT:ADVISORY:DECISION per checked question;
--   of a run: started, ended:OUTCOME and dur:B:OUTCOME.
-- B is a duration's bucket (insights_bucket): the histogram the medians
-- and 90th percentiles of a large window are read from.
--
-- A trigger adds what a changed row counts now and takes away what it
-- counted before, so a counter is always the count over the rows as they
-- are. The counters of an attempts statement are written in key order, so
-- concurrent writers lock them in the same order and cannot deadlock; a
-- run's own counters, written first by its row's trigger, come before them.
CREATE TABLE insights_counters (
    org     text   NOT NULL,
    process text   NOT NULL,
    day     date   NOT NULL,
    step_id text   NOT NULL,
    name    text   NOT NULL,
    n       bigint NOT NULL,
    PRIMARY KEY (org, process, day, step_id, name)
);

-- The live runs that ended, by when: the ends of a window's first and last
-- days, which the counters hold for whole days only, and the exact
-- durations of a small window. runs has no index on its end time, and one
-- on updated_at would take every write of a run off the heap-only path.
CREATE TABLE insights_run_ends (
    org      text             NOT NULL,
    run_id   text             NOT NULL,
    process  text             NOT NULL,
    ended_at timestamptz      NOT NULL,
    outcome  text             NOT NULL,
    seconds  double precision NOT NULL,
    PRIMARY KEY (org, run_id)
);
CREATE INDEX insights_run_ends_window ON insights_run_ends (org, process, ended_at) INCLUDE (outcome, seconds);

-- The bucket of a duration in seconds: buckets grow by 10% from 1 ms, so
-- the geometric middle of a bucket is within 5% of any duration in it;
-- -1 holds everything under 1 ms.
CREATE FUNCTION insights_bucket(seconds double precision) RETURNS integer
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT CASE WHEN seconds < 0.001 THEN -1 ELSE floor(ln(seconds / 0.001) / ln(1.1))::integer END
$$;

-- The counters of an attempt's checks: one per question of each check.
-- STRICT keeps it a call of its own, planned as the few rows it returns:
-- inlined, its two nested set-returning functions would be estimated at
-- 10,000 rows an attempt, and the reads of a window's edges compiled
-- with JIT for a second and more.
CREATE FUNCTION insights_check_counters(checks jsonb) RETURNS TABLE (name text)
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE ROWS 2 AS $$
    SELECT 'q:' || (q.i - 1) || ':' || q.result || ':' || coalesce(c.value->>'verdict', '') || ':'
           || coalesce((c.value->>'advisory')::boolean, false) || ':' || coalesce(c.value->>'decision', '')
    FROM jsonb_array_elements(CASE WHEN jsonb_typeof(checks) = 'array' THEN checks END) AS c,
         jsonb_array_elements_text(c.value->'results') WITH ORDINALITY AS q(result, i)
$$;

-- What a step attempt counts (nothing for a test run's), from its columns:
-- a whole-row argument would build each row as a value and take it apart
-- again for every field.
CREATE FUNCTION insights_attempt_counters(mode text, kind text, outcome text, ended_by text, next text,
    ready_at timestamptz, claimed_at timestamptz, escalated_at timestamptz, ended_at timestamptz, overdue_at timestamptz,
    escalations integer, returns integer, not_accepted integer, lease_expiries integer, checks jsonb)
RETURNS TABLE (name text, n bigint)
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT v.name, v.n FROM (VALUES
        ('attempts', 1::bigint),
        ('kind:' || kind, 1),
        ('ended', (outcome IS NOT NULL)::int),
        ('outcome:' || outcome, 1),
        ('done:' || ended_by, (outcome = 'done')::int),
        ('taken_over', (outcome = 'done' AND ended_by = 'person' AND escalated_at IS NOT NULL)::int),
        ('escalated', (escalations > 0)::int),
        ('returned', (returns > 0)::int),
        ('returns', returns),
        ('not_accepted', not_accepted),
        ('lease_expiries', lease_expiries),
        ('overdue', (overdue_at IS NOT NULL)::int),
        ('route:' || outcome || ':' || coalesce(next, ''), 1),
        ('claim:' || insights_bucket(extract(epoch FROM claimed_at - ready_at)), 1),
        ('work:' || CASE WHEN outcome = 'done' AND ended_by = 'agent'
            THEN insights_bucket(extract(epoch FROM ended_at - claimed_at)) END, 1),
        ('decide:' || CASE WHEN ended_by = 'person' AND kind IN ('task', 'approve') AND outcome <> 'cancelled'
            THEN insights_bucket(extract(epoch FROM ended_at - ready_at)) END, 1),
        ('esc:' || CASE WHEN ended_by = 'person' AND outcome <> 'cancelled'
            THEN insights_bucket(extract(epoch FROM ended_at - escalated_at)) END, 1)
    ) AS v(name, n)
    WHERE mode = 'live' AND v.name IS NOT NULL AND v.n <> 0
    UNION ALL
    SELECT q.name, 1 FROM insights_check_counters(checks) AS q WHERE mode = 'live'
$$;

-- What a run counts, and when (nothing for a test run's).
CREATE FUNCTION insights_run_counters(r runs) RETURNS TABLE (at timestamptz, name text, n bigint)
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT r.started_at, 'started', 1::bigint WHERE r.mode = 'live'
    UNION ALL
    SELECT r.updated_at, v.name, 1 FROM (VALUES
        ('ended:' || coalesce(r.outcome, r.state)),
        ('dur:' || insights_bucket(extract(epoch FROM r.updated_at - r.started_at)) || ':' || coalesce(r.outcome, r.state))
    ) AS v(name)
    WHERE r.mode = 'live' AND r.state IN ('ended', 'cancelled')
$$;

-- A run's row changed: its counters, and its end.
CREATE FUNCTION insights_run_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO insights_counters AS k (org, process, day, step_id, name, n)
    SELECT d.org, d.process, (d.at AT TIME ZONE 'UTC')::date, '', d.name, sum(d.n)
    FROM (SELECT NEW.org AS org, NEW.process AS process, c.at, c.name, c.n FROM insights_run_counters(NEW) AS c
          UNION ALL
          SELECT OLD.org, OLD.process, c.at, c.name, -c.n FROM insights_run_counters(OLD) AS c) AS d
    GROUP BY 1, 2, 3, 5 HAVING sum(d.n) <> 0 ORDER BY 1, 2, 3, 5
    ON CONFLICT (org, process, day, step_id, name) DO UPDATE SET n = k.n + EXCLUDED.n;
    IF NEW.mode = 'live' AND NEW.state IN ('ended', 'cancelled') THEN
        INSERT INTO insights_run_ends (org, run_id, process, ended_at, outcome, seconds)
        VALUES (NEW.org, NEW.run_id, NEW.process, NEW.updated_at, coalesce(NEW.outcome, NEW.state),
                extract(epoch FROM NEW.updated_at - NEW.started_at))
        ON CONFLICT (org, run_id) DO UPDATE SET process = EXCLUDED.process, ended_at = EXCLUDED.ended_at,
            outcome = EXCLUDED.outcome, seconds = EXCLUDED.seconds;
    ELSIF OLD.mode = 'live' AND OLD.state IN ('ended', 'cancelled') THEN
        DELETE FROM insights_run_ends WHERE org = OLD.org AND run_id = OLD.run_id;
    END IF;
    RETURN NULL;
END
$$;

-- The run's row fires only when what it counts may have changed: when it
-- is inserted, ends, or is written again after its end.
CREATE TRIGGER runs_insights_insert AFTER INSERT ON runs
    FOR EACH ROW WHEN (NEW.mode = 'live') EXECUTE FUNCTION insights_run_changed();
CREATE TRIGGER runs_insights_update AFTER UPDATE ON runs
    FOR EACH ROW WHEN ((OLD.mode = 'live' OR NEW.mode = 'live') AND (
        (OLD.org, OLD.process, OLD.mode, OLD.started_at, OLD.state, OLD.outcome)
            IS DISTINCT FROM (NEW.org, NEW.process, NEW.mode, NEW.started_at, NEW.state, NEW.outcome)
        OR (NEW.state IN ('ended', 'cancelled') AND OLD.updated_at IS DISTINCT FROM NEW.updated_at)))
    EXECUTE FUNCTION insights_run_changed();
CREATE TRIGGER runs_insights_delete AFTER DELETE ON runs
    FOR EACH ROW WHEN (OLD.mode = 'live') EXECUTE FUNCTION insights_run_changed();

-- A statement wrote step attempts: what they count now less what they
-- counted before, in key order.
CREATE FUNCTION insights_attempts_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO insights_counters AS k (org, process, day, step_id, name, n)
        SELECT a.org, a.process, (a.ready_at AT TIME ZONE 'UTC')::date, a.step_id, c.name, sum(c.n)
        FROM new_attempts AS a, insights_attempt_counters(a.mode, a.kind, a.outcome, a.ended_by, a.next,
                 a.ready_at, a.claimed_at, a.escalated_at, a.ended_at, a.overdue_at,
                 a.escalations, a.returns, a.not_accepted, a.lease_expiries, a.checks) AS c
        GROUP BY 1, 2, 3, 4, 5 ORDER BY 1, 2, 3, 4, 5
        ON CONFLICT (org, process, day, step_id, name) DO UPDATE SET n = k.n + EXCLUDED.n;
    ELSIF TG_OP = 'UPDATE' THEN
        INSERT INTO insights_counters AS k (org, process, day, step_id, name, n)
        SELECT d.org, d.process, d.day, d.step_id, d.name, sum(d.n)
        FROM (SELECT a.org, a.process, (a.ready_at AT TIME ZONE 'UTC')::date AS day, a.step_id, c.name, c.n
              FROM new_attempts AS a, insights_attempt_counters(a.mode, a.kind, a.outcome, a.ended_by, a.next,
                 a.ready_at, a.claimed_at, a.escalated_at, a.ended_at, a.overdue_at,
                 a.escalations, a.returns, a.not_accepted, a.lease_expiries, a.checks) AS c
              UNION ALL
              SELECT a.org, a.process, (a.ready_at AT TIME ZONE 'UTC')::date, a.step_id, c.name, -c.n
              FROM old_attempts AS a, insights_attempt_counters(a.mode, a.kind, a.outcome, a.ended_by, a.next,
                 a.ready_at, a.claimed_at, a.escalated_at, a.ended_at, a.overdue_at,
                 a.escalations, a.returns, a.not_accepted, a.lease_expiries, a.checks) AS c) AS d
        GROUP BY 1, 2, 3, 4, 5 HAVING sum(d.n) <> 0 ORDER BY 1, 2, 3, 4, 5
        ON CONFLICT (org, process, day, step_id, name) DO UPDATE SET n = k.n + EXCLUDED.n;
    ELSE
        INSERT INTO insights_counters AS k (org, process, day, step_id, name, n)
        SELECT a.org, a.process, (a.ready_at AT TIME ZONE 'UTC')::date, a.step_id, c.name, -sum(c.n)
        FROM old_attempts AS a, insights_attempt_counters(a.mode, a.kind, a.outcome, a.ended_by, a.next,
                 a.ready_at, a.claimed_at, a.escalated_at, a.ended_at, a.overdue_at,
                 a.escalations, a.returns, a.not_accepted, a.lease_expiries, a.checks) AS c
        GROUP BY 1, 2, 3, 4, 5 ORDER BY 1, 2, 3, 4, 5
        ON CONFLICT (org, process, day, step_id, name) DO UPDATE SET n = k.n + EXCLUDED.n;
    END IF;
    RETURN NULL;
END
$$;

CREATE TRIGGER step_attempts_insights_insert AFTER INSERT ON step_attempts
    REFERENCING NEW TABLE AS new_attempts FOR EACH STATEMENT EXECUTE FUNCTION insights_attempts_changed();
CREATE TRIGGER step_attempts_insights_update AFTER UPDATE ON step_attempts
    REFERENCING OLD TABLE AS old_attempts NEW TABLE AS new_attempts FOR EACH STATEMENT EXECUTE FUNCTION insights_attempts_changed();
CREATE TRIGGER step_attempts_insights_delete AFTER DELETE ON step_attempts
    REFERENCING OLD TABLE AS old_attempts FOR EACH STATEMENT EXECUTE FUNCTION insights_attempts_changed();

-- What was recorded before this migration counts too. Creating the
-- triggers locked out the writers of both tables until the migration
-- commits, so the counters are filled from the rows as they are.
INSERT INTO insights_counters (org, process, day, step_id, name, n)
SELECT org, process, day, step_id, name, sum(n) FROM (
    SELECT a.org, a.process, (a.ready_at AT TIME ZONE 'UTC')::date AS day, a.step_id, c.name, c.n
    FROM step_attempts AS a, insights_attempt_counters(a.mode, a.kind, a.outcome, a.ended_by, a.next,
                 a.ready_at, a.claimed_at, a.escalated_at, a.ended_at, a.overdue_at,
                 a.escalations, a.returns, a.not_accepted, a.lease_expiries, a.checks) AS c
    UNION ALL
    SELECT r.org, r.process, (c.at AT TIME ZONE 'UTC')::date, '', c.name, c.n
    FROM runs AS r, insights_run_counters(r) AS c
) AS d
GROUP BY 1, 2, 3, 4, 5;

INSERT INTO insights_run_ends (org, run_id, process, ended_at, outcome, seconds)
SELECT org, run_id, process, updated_at, coalesce(outcome, state), extract(epoch FROM updated_at - started_at)
FROM runs WHERE mode = 'live' AND state IN ('ended', 'cancelled');
