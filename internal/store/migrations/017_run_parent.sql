-- A child run's parent (baton-subprocess-1, docs/profile-subprocess.md §6):
-- the run and the process step that started it, set when the run's row is
-- inserted and never changed; NULL for a run start_run started. list_runs
-- with parent lists a parent's children through the partial index, oldest
-- first, as list_runs orders every listing.
ALTER TABLE runs
    ADD COLUMN parent_run_id text,
    ADD COLUMN parent_step   text;

CREATE INDEX runs_parent ON runs (org, parent_run_id, started_at, run_id)
    WHERE parent_run_id IS NOT NULL;
