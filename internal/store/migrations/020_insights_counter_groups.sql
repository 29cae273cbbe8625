-- A step attempt's counters in fewer rows (docs/insights.md), so that a
-- write updates fewer of them. What an attempt counted as attempts,
-- kind:K, ended, outcome:O, done:BY and route:O:NEXT is now one counter,
--   g:KIND:OUTCOME:BY:NEXT (OUTCOME, BY and NEXT '' while it is open),
-- from which the report sums each of them; the other names of migration
-- 019 stay. A submission that ends an attempt and begins the next now
-- updates four counters where it updated seven.
--
-- And each counter is split four ways by run (shard, insights_shard): a
-- write locks the counters it updates until it commits, and every write
-- of a process's step on one day updated the same few, so its writers
-- waited on each other. Two writers of different runs now share a
-- counter one time in four. The report sums the shards.
--
-- The insert trigger of an upsert that only updated returns at once: its
-- statement used to be started for no rows. A write computes the counters
-- of a checked attempt in PL/pgSQL (insights_attempt_checks), whose plan
-- a connection keeps: insights_check_counters, a SQL function that is not
-- inlined, is planned again in every statement that calls it, about 0.1
-- ms of each write of a checked attempt. (The report's reads keep
-- insights_check_counters: they call it for many rows in one statement,
-- and planned once it is the cheaper.) And the counters leave room in
-- their pages (fillfactor), so that an update stays on its page without
-- a new index entry.

CREATE FUNCTION insights_attempt_checks(checks jsonb) RETURNS TABLE (name text)
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE ROWS 2 AS $$
BEGIN
    RETURN QUERY
    SELECT 'q:' || (q.i - 1) || ':' || q.result || ':' || coalesce(c.value->>'verdict', '') || ':'
           || coalesce((c.value->>'advisory')::boolean, false) || ':' || coalesce(c.value->>'decision', '')
    FROM jsonb_array_elements(CASE WHEN jsonb_typeof(checks) = 'array' THEN checks END) AS c,
         jsonb_array_elements_text(c.value->'results') WITH ORDINALITY AS q(result, i);
END
$$;

CREATE OR REPLACE FUNCTION insights_attempt_counters(mode text, kind text, outcome text, ended_by text, next text,
    ready_at timestamptz, claimed_at timestamptz, escalated_at timestamptz, ended_at timestamptz, overdue_at timestamptz,
    escalations integer, returns integer, not_accepted integer, lease_expiries integer, checks jsonb)
RETURNS TABLE (name text, n bigint)
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT v.name, v.n FROM (VALUES
        ('g:' || kind || ':' || coalesce(outcome, '') || ':' || coalesce(ended_by, '') || ':' || coalesce(next, ''), 1::bigint),
        ('taken_over', (outcome = 'done' AND ended_by = 'person' AND escalated_at IS NOT NULL)::int),
        ('escalated', (escalations > 0)::int),
        ('returned', (returns > 0)::int),
        ('returns', returns),
        ('not_accepted', not_accepted),
        ('lease_expiries', lease_expiries),
        ('overdue', (overdue_at IS NOT NULL)::int),
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
    SELECT q.name, 1 FROM insights_attempt_checks(checks) AS q WHERE mode = 'live'
$$;

-- The shard of a run's counters: 0 to 3, from its id.
CREATE FUNCTION insights_shard(run_id text) RETURNS smallint
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT (hashtext(run_id) & 3)::smallint
$$;

LOCK TABLE runs, step_attempts IN SHARE MODE;
LOCK TABLE insights_counters IN ACCESS EXCLUSIVE MODE;
ALTER TABLE insights_counters ADD COLUMN shard smallint NOT NULL DEFAULT 0;
ALTER TABLE insights_counters DROP CONSTRAINT insights_counters_pkey;
ALTER TABLE insights_counters ADD PRIMARY KEY (org, process, day, step_id, name, shard);

-- A run's row changed: its counters, and its end.
CREATE OR REPLACE FUNCTION insights_run_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO insights_counters AS k (org, process, day, step_id, name, shard, n)
    SELECT d.org, d.process, (d.at AT TIME ZONE 'UTC')::date, '', d.name, d.shard, sum(d.n)
    FROM (SELECT NEW.org AS org, NEW.process AS process, insights_shard(NEW.run_id) AS shard, c.at, c.name, c.n
          FROM insights_run_counters(NEW) AS c
          UNION ALL
          SELECT OLD.org, OLD.process, insights_shard(OLD.run_id), c.at, c.name, -c.n
          FROM insights_run_counters(OLD) AS c) AS d
    GROUP BY 1, 2, 3, 5, 6 HAVING sum(d.n) <> 0 ORDER BY 1, 2, 3, 5, 6
    ON CONFLICT (org, process, day, step_id, name, shard) DO UPDATE SET n = k.n + EXCLUDED.n;
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

CREATE OR REPLACE FUNCTION insights_attempts_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        IF NOT EXISTS (SELECT FROM new_attempts) THEN
            RETURN NULL;
        END IF;
        INSERT INTO insights_counters AS k (org, process, day, step_id, name, shard, n)
        SELECT a.org, a.process, (a.ready_at AT TIME ZONE 'UTC')::date, a.step_id, c.name, insights_shard(a.run_id), sum(c.n)
        FROM new_attempts AS a, insights_attempt_counters(a.mode, a.kind, a.outcome, a.ended_by, a.next,
                 a.ready_at, a.claimed_at, a.escalated_at, a.ended_at, a.overdue_at,
                 a.escalations, a.returns, a.not_accepted, a.lease_expiries, a.checks) AS c
        GROUP BY 1, 2, 3, 4, 5, 6 ORDER BY 1, 2, 3, 4, 5, 6
        ON CONFLICT (org, process, day, step_id, name, shard) DO UPDATE SET n = k.n + EXCLUDED.n;
    ELSIF TG_OP = 'UPDATE' THEN
        INSERT INTO insights_counters AS k (org, process, day, step_id, name, shard, n)
        SELECT d.org, d.process, d.day, d.step_id, d.name, d.shard, sum(d.n)
        FROM (SELECT a.org, a.process, (a.ready_at AT TIME ZONE 'UTC')::date AS day, a.step_id, c.name,
                     insights_shard(a.run_id) AS shard, c.n
              FROM new_attempts AS a, insights_attempt_counters(a.mode, a.kind, a.outcome, a.ended_by, a.next,
                 a.ready_at, a.claimed_at, a.escalated_at, a.ended_at, a.overdue_at,
                 a.escalations, a.returns, a.not_accepted, a.lease_expiries, a.checks) AS c
              UNION ALL
              SELECT a.org, a.process, (a.ready_at AT TIME ZONE 'UTC')::date, a.step_id, c.name,
                     insights_shard(a.run_id), -c.n
              FROM old_attempts AS a, insights_attempt_counters(a.mode, a.kind, a.outcome, a.ended_by, a.next,
                 a.ready_at, a.claimed_at, a.escalated_at, a.ended_at, a.overdue_at,
                 a.escalations, a.returns, a.not_accepted, a.lease_expiries, a.checks) AS c) AS d
        GROUP BY 1, 2, 3, 4, 5, 6 HAVING sum(d.n) <> 0 ORDER BY 1, 2, 3, 4, 5, 6
        ON CONFLICT (org, process, day, step_id, name, shard) DO UPDATE SET n = k.n + EXCLUDED.n;
    ELSE
        INSERT INTO insights_counters AS k (org, process, day, step_id, name, shard, n)
        SELECT a.org, a.process, (a.ready_at AT TIME ZONE 'UTC')::date, a.step_id, c.name, insights_shard(a.run_id), -sum(c.n)
        FROM old_attempts AS a, insights_attempt_counters(a.mode, a.kind, a.outcome, a.ended_by, a.next,
                 a.ready_at, a.claimed_at, a.escalated_at, a.ended_at, a.overdue_at,
                 a.escalations, a.returns, a.not_accepted, a.lease_expiries, a.checks) AS c
        GROUP BY 1, 2, 3, 4, 5, 6 ORDER BY 1, 2, 3, 4, 5, 6
        ON CONFLICT (org, process, day, step_id, name, shard) DO UPDATE SET n = k.n + EXCLUDED.n;
    END IF;
    RETURN NULL;
END
$$;

-- The counters again, from the rows as they are, in the new names and
-- shards. The locks taken above keep writers of runs, attempts and
-- counters out until the migration commits, so nothing is counted twice
-- or missed.
ALTER TABLE insights_counters SET (fillfactor = 70);
TRUNCATE insights_counters;
INSERT INTO insights_counters (org, process, day, step_id, name, shard, n)
SELECT org, process, day, step_id, name, shard, sum(n) FROM (
    SELECT a.org, a.process, (a.ready_at AT TIME ZONE 'UTC')::date AS day, a.step_id, c.name, insights_shard(a.run_id) AS shard, c.n
    FROM step_attempts AS a, insights_attempt_counters(a.mode, a.kind, a.outcome, a.ended_by, a.next,
             a.ready_at, a.claimed_at, a.escalated_at, a.ended_at, a.overdue_at,
             a.escalations, a.returns, a.not_accepted, a.lease_expiries, a.checks) AS c
    UNION ALL
    SELECT r.org, r.process, (c.at AT TIME ZONE 'UTC')::date, '', c.name, insights_shard(r.run_id), c.n
    FROM runs AS r, insights_run_counters(r) AS c
) AS d
GROUP BY 1, 2, 3, 4, 5, 6;
