-- A parsed definition keeps its fields in declared order: inputs and
-- output are JSON objects whose key order is the order written, and issues,
-- claims and work items list fields in that order. jsonb sorts keys, so the
-- definition is kept as json, byte for byte as written.
ALTER TABLE process_drafts ALTER COLUMN definition TYPE json USING definition::json;
ALTER TABLE process_versions ALTER COLUMN definition TYPE json USING definition::json;
