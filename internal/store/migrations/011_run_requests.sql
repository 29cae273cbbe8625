-- A run records the requestIds of its writes itself, in the transaction
-- that writes its read model: run_id names the run that holds a record.
-- A record a run holds without an answer yet (a write waiting for its
-- check or its downstream call) is never abandoned: the run is durable.
ALTER TABLE requests ADD COLUMN run_id text;

-- record_run_request records requestId p_request_id for a run's write with
-- digest p_digest: with its answer p_result, or, when p_result is null,
-- held for the answer to come. A record of the same digest is the run's
-- own: a pending one takes the answer, and an answer recorded by an
-- earlier attempt of the same workflow task (one whose read-model row
-- this very transaction rewrote at seq p_seq) is replaced. A record of
-- another digest is taken over only when it has no answer and was
-- refused, or abandoned by a gateway (older than 30 s, held by no run).
-- Otherwise the requestId was used for something else: it raises
-- unique_violation on the constraint name request_id_reused, which ends
-- the caller's transaction, the run's read-model rows with it.
CREATE FUNCTION record_run_request(p_org text, p_request_id text, p_tool text, p_digest text,
                                   p_result jsonb, p_run_id text, p_seq bigint)
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
