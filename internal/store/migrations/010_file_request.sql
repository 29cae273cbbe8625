-- A file's id is random; the requestId that uploaded it finds it again, so a
-- replay answers the same id even once its idempotency record is swept. Files
-- uploaded before keep no requestId (their ids derive from it).
ALTER TABLE files ADD COLUMN request_id text;
CREATE UNIQUE INDEX files_request ON files (org, request_id) WHERE request_id IS NOT NULL;
