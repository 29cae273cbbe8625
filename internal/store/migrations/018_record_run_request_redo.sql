-- A run applies a write once; it applies the same requestId again only
-- when the workflow task that applied it first was lost after its answer
-- was stored (a worker or Temporal died before the task completed). The
-- second application is the one the run keeps, and its answer may differ
-- (a renew's expiresAt). A write that changes the run's row replaced the
-- record already (its row is written at the same seq in this transaction);
-- one that changes no row (p_seq -1: a renew, a write whose listing is
-- unchanged) left the lost task's answer in the record, which a replay
-- then gave once Temporal had forgotten the run. Now the run's own
-- second answer replaces it too.
CREATE OR REPLACE FUNCTION record_run_request_json(p_org text, p_request_id text, p_tool text, p_digest text,
                                   p_result json, p_run_id text, p_seq bigint)
RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    cur requests%ROWTYPE;
BEGIN
    FOR i IN 1..3 LOOP
        INSERT INTO requests (org, request_id, tool, digest, result, run_id)
        VALUES (p_org, p_request_id, p_tool, p_digest, p_result, p_run_id)
        ON CONFLICT (org, request_id) DO NOTHING;
        IF FOUND THEN
            RETURN;
        END IF;
        SELECT * INTO cur FROM requests
        WHERE org = p_org AND request_id = p_request_id FOR UPDATE;
        IF FOUND THEN
            EXIT;
        END IF;
        -- released between the two statements: insert again
    END LOOP;
    IF cur.digest = p_digest THEN
        IF p_result IS NULL THEN
            UPDATE requests SET refused = false, run_id = p_run_id
            WHERE org = p_org AND request_id = p_request_id AND result IS NULL;
        ELSIF cur.result IS NULL OR (p_seq < 0 AND cur.run_id = p_run_id) OR EXISTS (
                SELECT 1 FROM runs WHERE org = p_org AND run_id = p_run_id AND seq = p_seq
                  AND xmin = pg_current_xact_id()::xid) THEN
            UPDATE requests SET result = p_result, refused = false, run_id = p_run_id
            WHERE org = p_org AND request_id = p_request_id;
        END IF;
        RETURN;
    END IF;
    IF cur.result IS NULL AND (cur.refused
            OR (cur.run_id IS NULL AND cur.created_at < now() - interval '30 seconds')) THEN
        UPDATE requests SET tool = p_tool, digest = p_digest, result = p_result, run_id = p_run_id,
                            refused = false, created_at = now()
        WHERE org = p_org AND request_id = p_request_id;
        RETURN;
    END IF;
    RAISE EXCEPTION 'requestId % was used with other arguments', p_request_id
        USING ERRCODE = 'unique_violation', CONSTRAINT = 'request_id_reused';
END
$$;
