-- A write's answer is stored as its bytes (json), not parsed into jsonb:
-- every answer carries the run's view, data and all, and PostgreSQL parsed
-- each one into jsonb on the way in (BenchmarkPublishRunLargeAnswer: a
-- transaction storing a 158 KB answer took 2.4 ms as jsonb). json only
-- checks the syntax, and a replay read from here gets the answer as it
-- was given, its keys in their order. Nothing queries inside an answer.
ALTER TABLE requests ALTER COLUMN result TYPE json USING result::json;

-- record_run_request_json is record_run_request (migration 011) for a json
-- answer. The jsonb one stays, for workers of an earlier version while a
-- deployment rolls (an overload of the same name would make their untyped
-- calls ambiguous), and hands its answer to this one, so the rules live
-- in one function.
CREATE FUNCTION record_run_request_json(p_org text, p_request_id text, p_tool text, p_digest text,
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
        ELSIF cur.result IS NULL OR EXISTS (
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

CREATE OR REPLACE FUNCTION record_run_request(p_org text, p_request_id text, p_tool text, p_digest text,
                                              p_result jsonb, p_run_id text, p_seq bigint)
RETURNS void LANGUAGE sql AS $$
    SELECT record_run_request_json(p_org, p_request_id, p_tool, p_digest, p_result::json, p_run_id, p_seq)
$$;
