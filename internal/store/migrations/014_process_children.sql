-- The child bindings of the baton-subprocess-1 profile
-- (docs/profile-subprocess.md §1): for each process step of a published
-- version, the child process and the version of it the step runs, bound at
-- publication and never changed. [] for a version without process steps.
ALTER TABLE process_versions
    ADD COLUMN children jsonb NOT NULL DEFAULT '[]' CHECK (jsonb_typeof(children) = 'array');
