-- Upload quotas sum what one identity uploaded within a recent window.
CREATE INDEX files_creator_created ON files (org, created_by, created_at);
