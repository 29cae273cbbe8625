-- The run read model: one row per run and one per piece of open work.
-- The run's workflow is the only writer (store.UpsertRun, guarded by seq);
-- get_work and list_runs read it.

CREATE TABLE runs (
    org         text        NOT NULL,
    run_id      text        NOT NULL,
    process     text        NOT NULL,
    version     integer     NOT NULL,
    state       text        NOT NULL,
    outcome     text,
    mode        text        NOT NULL CHECK (mode IN ('live', 'test')),
    inputs      jsonb       NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(inputs) = 'object'),
    started_by  text        NOT NULL,
    started_at  timestamptz NOT NULL,
    updated_at  timestamptz NOT NULL,
    -- The run machine's sequence number of the state this row shows.
    seq         bigint      NOT NULL,
    PRIMARY KEY (org, run_id)
);

-- list_runs: newest-to-oldest or oldest-to-newest walks, with and without
-- a process and/or state filter. Every index ends in (started_at, run_id),
-- the keyset, so a page is an index range scan.
CREATE INDEX runs_org_started ON runs (org, started_at, run_id);
CREATE INDEX runs_org_process_started ON runs (org, process, started_at, run_id);
CREATE INDEX runs_org_state_started ON runs (org, state, started_at, run_id);
CREATE INDEX runs_org_process_state_started ON runs (org, process, state, started_at, run_id);
-- list_runs inputs filter: inputs @> '{"vendorName": "Acme"}'. fastupdate
-- off: entries go straight into the index instead of a pending list that
-- every search scans until vacuum flushes it; inputs never change after a
-- run starts, so this costs little on writes.
CREATE INDEX runs_inputs ON runs USING gin (inputs jsonb_path_ops) WITH (fastupdate = off);

CREATE TABLE work (
    org             text        NOT NULL,
    run_id          text        NOT NULL,
    step_id         text        NOT NULL,
    -- NULL for a ready agent step; the work item's id otherwise.
    work_item_id    text,
    kind            text        NOT NULL CHECK (kind IN ('agent', 'task', 'approve', 'escalation')),
    -- Copied from the run so listings need no join.
    process         text        NOT NULL,
    version         integer     NOT NULL,
    mode            text        NOT NULL CHECK (mode IN ('live', 'test')),
    ready_since     timestamptz NOT NULL,
    due             timestamptz,
    overdue         boolean     NOT NULL DEFAULT false,
    assigned_group  text,
    assigned_person text,
    -- What the previous attempt left (get_work's handoff), or NULL.
    handoff         jsonb,
    -- The work item as get_run shows it, for person listings; NULL for
    -- agent steps.
    item            jsonb,
    PRIMARY KEY (org, run_id, step_id),
    FOREIGN KEY (org, run_id) REFERENCES runs (org, run_id) ON DELETE CASCADE,
    CHECK ((kind = 'agent') = (work_item_id IS NULL)),
    CHECK (kind = 'agent' OR assigned_group IS NOT NULL OR assigned_person IS NOT NULL)
);

-- get_work for agents: ready agent steps oldest first, optionally of one
-- process.
CREATE INDEX work_agent_ready ON work (org, ready_since, run_id, step_id)
    WHERE kind = 'agent';
CREATE INDEX work_agent_process_ready ON work (org, process, ready_since, run_id, step_id)
    WHERE kind = 'agent';
-- get_work for persons: open items assigned to them or to one of their
-- groups, oldest first.
CREATE INDEX work_person_ready ON work (org, assigned_person, ready_since, run_id, step_id)
    WHERE assigned_person IS NOT NULL;
CREATE INDEX work_group_ready ON work (org, assigned_group, ready_since, run_id, step_id)
    WHERE assigned_group IS NOT NULL;
