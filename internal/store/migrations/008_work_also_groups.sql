-- A work item that more than one group may decide (a tool-call approval
-- naming several approver groups) is listed to each: assigned_group is
-- the first, as the item shows it, also_groups the others. Few items have
-- them, so a partial index keeps their listing to those rows.
ALTER TABLE work ADD COLUMN also_groups text[];
CREATE INDEX work_also_ready ON work (org, ready_since, run_id, step_id)
    WHERE also_groups IS NOT NULL;
