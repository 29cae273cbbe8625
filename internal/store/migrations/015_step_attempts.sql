-- The record of step attempts that process insights read (docs/insights.md).
-- A run's workflow writes the attempts that changed in the transaction that
-- publishes its read model (store.PublishRun), each guarded by its rev, so a
-- retried or late write never overwrites a newer one. Nothing is backfilled:
-- runs that ended before this migration have no attempts, and the insights
-- say from when they exist (schema_migrations.applied_at of this version).
CREATE TABLE step_attempts (
    org            text        NOT NULL,
    run_id         text        NOT NULL,
    step_id        text        NOT NULL,
    -- The run machine's sequence number at which the attempt began.
    attempt        bigint      NOT NULL,
    -- Copied from the run, so that the figures need no join.
    process        text        NOT NULL,
    version        integer     NOT NULL,
    mode           text        NOT NULL CHECK (mode IN ('live', 'test')),
    kind           text        NOT NULL,
    -- ready, claimed or waiting while open; ended once it ended.
    state          text        NOT NULL,
    outcome        text CHECK (outcome IN ('done', 'rework', 'rejected', 'failed', 'cancelled')),
    ended_by       text CHECK (ended_by IN ('agent', 'person', 'server')),
    -- The step the run went on to.
    next           text,
    ready_at       timestamptz NOT NULL,
    claimed_at     timestamptz,
    escalated_at   timestamptz,
    ended_at       timestamptz,
    due            timestamptz,
    overdue_at     timestamptz,
    claims         integer     NOT NULL DEFAULT 0,
    lease_expiries integer     NOT NULL DEFAULT 0,
    not_accepted   integer     NOT NULL DEFAULT 0,
    escalations    integer     NOT NULL DEFAULT 0,
    returns        integer     NOT NULL DEFAULT 0,
    -- [{verdict, advisory, results: [pass|fail|unsure per question], decision}]
    checks         jsonb,
    rev            bigint      NOT NULL,
    PRIMARY KEY (org, run_id, step_id, attempt),
    CHECK ((outcome IS NULL) = (ended_at IS NULL))
) WITH (fillfactor = 80);
-- fillfactor leaves room on each page, so that the updates of an open
-- attempt (a claim, an escalation), which change no indexed column, stay
-- on their page and add no index entries.

-- The figures of a window: the attempts of a process begun since then.
CREATE INDEX step_attempts_window ON step_attempts (org, process, ready_at);
-- Open work now, the oldest first; and the open-steps gauge.
CREATE INDEX step_attempts_open ON step_attempts (org, process, ready_at) WHERE outcome IS NULL;
