--
-- PostgreSQL database dump
--

\restrict fLf9fIiPBZk77nKZz98gQJeaD8jkg9wVv3m4H23YiU32itmu87HZLuAjMgJj8mZ

-- Dumped from database version 15.18 (Debian 15.18-0+deb12u1)
-- Dumped by pg_dump version 15.18 (Debian 15.18-0+deb12u1)

SET statement_timeout = 0;
SET lock_timeout = 0;
SET idle_in_transaction_session_timeout = 0;
SET client_encoding = 'UTF8';
SET standard_conforming_strings = on;
SELECT pg_catalog.set_config('search_path', '', false);
SET check_function_bodies = false;
SET xmloption = content;
SET client_min_messages = warning;
SET row_security = off;

--
-- Name: record_run_request(text, text, text, text, jsonb, text, bigint); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.record_run_request(p_org text, p_request_id text, p_tool text, p_digest text, p_result jsonb, p_run_id text, p_seq bigint) RETURNS void
    LANGUAGE plpgsql
    AS $$
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


SET default_tablespace = '';

SET default_table_access_method = heap;

--
-- Name: files; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.files (
    org text NOT NULL,
    file_id text NOT NULL,
    name text NOT NULL,
    content_type text NOT NULL,
    size bigint NOT NULL,
    sha256 bytea NOT NULL,
    bytes bytea NOT NULL,
    created_by text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    request_id text,
    CONSTRAINT files_check CHECK ((size = octet_length(bytes))),
    CONSTRAINT files_sha256_check CHECK ((octet_length(sha256) = 32))
);
ALTER TABLE ONLY public.files ALTER COLUMN bytes SET STORAGE EXTERNAL;


--
-- Name: process_drafts; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.process_drafts (
    org text NOT NULL,
    name text NOT NULL,
    source text NOT NULL,
    definition json NOT NULL,
    hash text NOT NULL,
    roles jsonb DEFAULT '{}'::jsonb NOT NULL,
    imported_by text NOT NULL,
    imported_at timestamp with time zone DEFAULT now() NOT NULL
);


--
-- Name: process_versions; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.process_versions (
    org text NOT NULL,
    name text NOT NULL,
    version integer NOT NULL,
    hash text NOT NULL,
    source text NOT NULL,
    definition json NOT NULL,
    roles jsonb DEFAULT '{}'::jsonb NOT NULL,
    published_by text NOT NULL,
    published_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT process_versions_version_check CHECK ((version > 0))
);


--
-- Name: processes; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.processes (
    org text NOT NULL,
    name text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL
);


--
-- Name: requests; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.requests (
    org text NOT NULL,
    request_id text NOT NULL,
    tool text NOT NULL,
    digest text NOT NULL,
    result jsonb,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    attempt integer DEFAULT 0 NOT NULL,
    refused boolean DEFAULT false NOT NULL,
    run_id text
);


--
-- Name: runs; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.runs (
    org text NOT NULL,
    run_id text NOT NULL,
    process text NOT NULL,
    version integer NOT NULL,
    state text NOT NULL,
    outcome text,
    mode text NOT NULL,
    inputs jsonb DEFAULT '{}'::jsonb NOT NULL,
    started_by text NOT NULL,
    started_at timestamp with time zone NOT NULL,
    updated_at timestamp with time zone NOT NULL,
    seq bigint NOT NULL,
    final_view json,
    CONSTRAINT runs_inputs_check CHECK ((jsonb_typeof(inputs) = 'object'::text)),
    CONSTRAINT runs_mode_check CHECK ((mode = ANY (ARRAY['live'::text, 'test'::text])))
);


--
-- Name: schema_migrations; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.schema_migrations (
    version integer NOT NULL,
    name text NOT NULL,
    applied_at timestamp with time zone DEFAULT now() NOT NULL
);


--
-- Name: tool_policies; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.tool_policies (
    org text NOT NULL,
    server text NOT NULL,
    tool text NOT NULL,
    "position" integer NOT NULL,
    policy text NOT NULL,
    idempotency text NOT NULL,
    approvers text[] DEFAULT '{}'::text[] NOT NULL,
    approval_sla_seconds bigint,
    CONSTRAINT tool_policies_approval_sla_seconds_check CHECK ((approval_sla_seconds > 0)),
    CONSTRAINT tool_policies_check CHECK (((policy = 'approval_required'::text) OR ((approvers = '{}'::text[]) AND (approval_sla_seconds IS NULL)))),
    CONSTRAINT tool_policies_idempotency_check CHECK ((idempotency = ANY (ARRAY['key'::text, 'none'::text]))),
    CONSTRAINT tool_policies_policy_check CHECK ((policy = ANY (ARRAY['read'::text, 'write'::text, 'approval_required'::text])))
);


--
-- Name: tool_servers; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.tool_servers (
    org text NOT NULL,
    name text NOT NULL,
    "position" integer NOT NULL,
    url text NOT NULL,
    test_url text,
    credentials jsonb,
    timeout_ms integer NOT NULL,
    listing jsonb,
    listed_at timestamp with time zone,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT tool_servers_credentials_check CHECK (((credentials IS NULL) OR (jsonb_typeof(credentials) = 'object'::text))),
    CONSTRAINT tool_servers_listing_check CHECK (((listing IS NULL) OR (jsonb_typeof(listing) = 'array'::text))),
    CONSTRAINT tool_servers_timeout_ms_check CHECK ((timeout_ms > 0))
);


--
-- Name: work; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.work (
    org text NOT NULL,
    run_id text NOT NULL,
    step_id text NOT NULL,
    work_item_id text,
    kind text NOT NULL,
    process text NOT NULL,
    version integer NOT NULL,
    mode text NOT NULL,
    ready_since timestamp with time zone NOT NULL,
    due timestamp with time zone,
    overdue boolean DEFAULT false NOT NULL,
    assigned_group text,
    assigned_person text,
    handoff jsonb,
    item jsonb,
    also_groups text[],
    CONSTRAINT work_check CHECK (((kind = 'agent'::text) = (work_item_id IS NULL))),
    CONSTRAINT work_check1 CHECK (((kind = 'agent'::text) OR (assigned_group IS NOT NULL) OR (assigned_person IS NOT NULL))),
    CONSTRAINT work_kind_check CHECK ((kind = ANY (ARRAY['agent'::text, 'task'::text, 'approve'::text, 'escalation'::text]))),
    CONSTRAINT work_mode_check CHECK ((mode = ANY (ARRAY['live'::text, 'test'::text])))
);


--
-- Data for Name: files; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.files (org, file_id, name, content_type, size, sha256, bytes, created_by, created_at, request_id) FROM stdin;
o_default	f_8cb52f484d811cfc9d6fae830ceed7bb	note.txt	text/plain	8	\\xd47cd809b55acbb91f27f68180367d0fdf6997acb09692bd2341fc6c4407da8a	\\x41206e6f74652e0a	a_upgrade	2026-12-04 00:27:06.899385+00	upgrade-032
\.


--
-- Data for Name: process_drafts; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.process_drafts (org, name, source, definition, hash, roles, imported_by, imported_at) FROM stdin;
\.


--
-- Data for Name: process_versions; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.process_versions (org, name, version, hash, source, definition, roles, published_by, published_at) FROM stdin;
o_default	upgrade	1	4bf533de88b775138caff14407624a60db70770e1358a1fae37740d13d47b3cb	---\nname: upgrade\ndescription: An agent notes a reference, a reviewer approves it, the run waits for payment and finishes.\ninputs:\n  ref: string\nsteps:\n  - id: work\n    agent: Note the reference.\n    output: { note: string }\n    tools:\n      - crm/get_customer\n      - crm/create_ticket\n      - crm/refund\n  - id: review\n    person: reviewers\n    approve: Approve the note.\n  - id: paid\n    wait_for: paid\n  - id: done\n    finish: done\n---\n\n# Upgrade\n\nA run of every state, written by an earlier Baton.\n	{"name":"upgrade","description":"An agent notes a reference, a reviewer approves it, the run waits for payment and finishes.","inputs":{"ref":"string"},"steps":[{"id":"work","kind":"agent","text":"Note the reference.","output":{"note":"string"},"tools":[{"ref":"crm/get_customer","short":true},{"ref":"crm/create_ticket","short":true},{"ref":"crm/refund","short":true}]},{"id":"review","kind":"approve","text":"Approve the note.","person":"reviewers"},{"id":"paid","kind":"wait_for","text":"paid"},{"id":"done","kind":"finish","text":"done"}],"body":"\\n# Upgrade\\n\\nA run of every state, written by an earlier Baton.\\n","frontmatter":{"description":"An agent notes a reference, a reviewer approves it, the run waits for payment and finishes.","inputs":{"ref":"string"},"name":"upgrade","steps":[{"agent":"Note the reference.","id":"work","output":{"note":"string"},"tools":["crm/get_customer","crm/create_ticket","crm/refund"]},{"approve":"Approve the note.","id":"review","person":"reviewers"},{"id":"paid","wait_for":"paid"},{"finish":"done","id":"done"}]},"hash":"4bf533de88b775138caff14407624a60db70770e1358a1fae37740d13d47b3cb"}	{"reviewers": "reviewers"}	baton-dev	2026-12-04 00:27:01.470445+00
\.


--
-- Data for Name: processes; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.processes (org, name, created_at) FROM stdin;
o_default	upgrade	2026-12-04 00:27:01.442507+00
\.


--
-- Data for Name: requests; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.requests (org, request_id, tool, digest, result, created_at, attempt, refused, run_id) FROM stdin;
o_default	upgrade-001	start_run	bafedd4b85c214f7d26b697c37073ad080de638a0b908389e0b4c6df0e8cbed8	{"run": {"id": "r_6584403bfdc76b85e7ee", "mode": "live", "ended": null, "state": "active", "outcome": null, "process": "upgrade", "version": 1, "startedAt": "2026-12-04T00:27:02.966Z", "startedBy": "a_upgrade", "updatedAt": "2026-12-04T00:27:02.966Z"}, "body": "\\n# Upgrade\\n\\nA run of every state, written by an earlier Baton.\\n", "data": {"steps": {}, "inputs": {"ref": "ready"}}, "steps": [{"id": "work", "kind": "agent", "state": "ready"}, {"id": "review", "kind": "approve", "state": null}, {"id": "paid", "kind": "wait_for", "state": null}, {"id": "done", "kind": "finish", "state": null}], "workItems": []}	2026-12-04 00:27:03.130685+00	0	f	r_6584403bfdc76b85e7ee
o_default	upgrade-002	start_run	b8d19e59b160ce1d85a50aaecfa11a77ec70a1fce2b4fd3df2b82f9d9a052d30	{"run": {"id": "r_d618ef592b85333128c2", "mode": "live", "ended": null, "state": "active", "outcome": null, "process": "upgrade", "version": 1, "startedAt": "2026-12-04T00:27:03.524Z", "startedBy": "a_upgrade", "updatedAt": "2026-12-04T00:27:03.524Z"}, "body": "\\n# Upgrade\\n\\nA run of every state, written by an earlier Baton.\\n", "data": {"steps": {}, "inputs": {"ref": "claimed"}}, "steps": [{"id": "work", "kind": "agent", "state": "ready"}, {"id": "review", "kind": "approve", "state": null}, {"id": "paid", "kind": "wait_for", "state": null}, {"id": "done", "kind": "finish", "state": null}], "workItems": []}	2026-12-04 00:27:03.549018+00	0	f	r_d618ef592b85333128c2
o_default	upgrade-003	claim	93c2d203aa31d59e90e3367030d11dff3ec53588169611e408f1184a49e9bcb8	{"body": "\\n# Upgrade\\n\\nA run of every state, written by an earlier Baton.\\n", "data": {"steps": {}, "inputs": {"ref": "claimed"}}, "mode": "live", "step": {"id": "work", "next": null, "output": {"note": "string"}, "evidence": null, "instructions": "Note the reference."}, "runId": "r_d618ef592b85333128c2", "tools": [{"ref": "crm/get_customer", "short": true}, {"ref": "crm/create_ticket", "short": true}, {"ref": "crm/refund", "short": true}], "stepId": "work", "handoff": null, "leaseId": "upgrade-003", "expiresAt": "2036-12-01T00:27:03.577Z"}	2026-12-04 00:27:03.584318+00	0	f	r_d618ef592b85333128c2
o_default	upgrade-004	renew	92fe989c17436c956fe2fc4052faf273f2e4fe83595c175f0f4e18776a161a14	{"runId": "r_d618ef592b85333128c2", "stepId": "work", "leaseId": "upgrade-004", "expiresAt": "2036-12-01T00:27:03.601Z"}	2026-12-04 00:27:03.607146+00	0	f	r_d618ef592b85333128c2
o_default	upgrade-005	start_run	bc8507cdba552df3dd56bbf4ad9913ed39225af303d78c81c1a89c3dd151e6a0	{"run": {"id": "r_96def8dc863d2b8420ed", "mode": "live", "ended": null, "state": "active", "outcome": null, "process": "upgrade", "version": 1, "startedAt": "2026-12-04T00:27:03.640Z", "startedBy": "a_upgrade", "updatedAt": "2026-12-04T00:27:03.640Z"}, "body": "\\n# Upgrade\\n\\nA run of every state, written by an earlier Baton.\\n", "data": {"steps": {}, "inputs": {"ref": "escalated"}}, "steps": [{"id": "work", "kind": "agent", "state": "ready"}, {"id": "review", "kind": "approve", "state": null}, {"id": "paid", "kind": "wait_for", "state": null}, {"id": "done", "kind": "finish", "state": null}], "workItems": []}	2026-12-04 00:27:03.668275+00	0	f	r_96def8dc863d2b8420ed
o_default	upgrade-006	claim	e80f331c5963c7518b49de12be59426196b93a2069100eba2b5531645c657d9c	{"body": "\\n# Upgrade\\n\\nA run of every state, written by an earlier Baton.\\n", "data": {"steps": {}, "inputs": {"ref": "escalated"}}, "mode": "live", "step": {"id": "work", "next": null, "output": {"note": "string"}, "evidence": null, "instructions": "Note the reference."}, "runId": "r_96def8dc863d2b8420ed", "tools": [{"ref": "crm/get_customer", "short": true}, {"ref": "crm/create_ticket", "short": true}, {"ref": "crm/refund", "short": true}], "stepId": "work", "handoff": null, "leaseId": "upgrade-006", "expiresAt": "2036-12-01T00:27:03.695Z"}	2026-12-04 00:27:03.721258+00	0	f	r_96def8dc863d2b8420ed
o_default	upgrade-007	escalate	60b7959d945e0b724c940dd7f68fb89930ed80d5de73074b61ec049446c79e3e	{"run": {"id": "r_96def8dc863d2b8420ed", "mode": "live", "ended": null, "state": "waiting", "outcome": null, "process": "upgrade", "version": 1, "startedAt": "2026-12-04T00:27:03.640Z", "startedBy": "a_upgrade", "updatedAt": "2026-12-04T00:27:03.761Z"}, "body": "\\n# Upgrade\\n\\nA run of every state, written by an earlier Baton.\\n", "data": {"steps": {}, "inputs": {"ref": "escalated"}}, "steps": [{"id": "work", "kind": "agent", "state": "waiting"}, {"id": "review", "kind": "approve", "state": null}, {"id": "paid", "kind": "wait_for", "state": null}, {"id": "done", "kind": "finish", "state": null}], "workItems": [{"id": "w_1", "due": null, "kind": "agent", "next": null, "text": "Note the reference.", "decide": {"tool": "decide", "arguments": {"runId": "r_96def8dc863d2b8420ed", "snapshot": "aee0c4c326fd9c1987e393df0b32c4bc", "requestId": "<new UUID>", "workItemId": "w_1"}, "decisions": ["returned", "completed", "failed"]}, "output": {"note": "string"}, "stepId": "work", "handoff": null, "evidence": null, "snapshot": "aee0c4c326fd9c1987e393df0b32c4bc", "assignedTo": {"group": "operators"}, "escalation": {"at": "2026-12-04T00:27:03.761Z", "by": "a_upgrade", "note": "I cannot read the reference."}}]}	2026-12-04 00:27:03.767216+00	0	f	r_96def8dc863d2b8420ed
o_default	upgrade-008	start_run	058ed10af512e670ec2a5e7deff558fd584c8c992ccc388f5cc76ff42969aa5c	{"run": {"id": "r_cd5962caea0c834b6f8c", "mode": "live", "ended": null, "state": "active", "outcome": null, "process": "upgrade", "version": 1, "startedAt": "2026-12-04T00:27:03.952Z", "startedBy": "a_upgrade", "updatedAt": "2026-12-04T00:27:03.952Z"}, "body": "\\n# Upgrade\\n\\nA run of every state, written by an earlier Baton.\\n", "data": {"steps": {}, "inputs": {"ref": "review"}}, "steps": [{"id": "work", "kind": "agent", "state": "ready"}, {"id": "review", "kind": "approve", "state": null}, {"id": "paid", "kind": "wait_for", "state": null}, {"id": "done", "kind": "finish", "state": null}], "workItems": []}	2026-12-04 00:27:04.037348+00	0	f	r_cd5962caea0c834b6f8c
o_default	upgrade-009	claim	1ba010e9a53322e7a76103b609edaf3c2c206e5d8cb40eab41a19565dfab06a3	{"body": "\\n# Upgrade\\n\\nA run of every state, written by an earlier Baton.\\n", "data": {"steps": {}, "inputs": {"ref": "review"}}, "mode": "live", "step": {"id": "work", "next": null, "output": {"note": "string"}, "evidence": null, "instructions": "Note the reference."}, "runId": "r_cd5962caea0c834b6f8c", "tools": [{"ref": "crm/get_customer", "short": true}, {"ref": "crm/create_ticket", "short": true}, {"ref": "crm/refund", "short": true}], "stepId": "work", "handoff": null, "leaseId": "upgrade-009", "expiresAt": "2036-12-01T00:27:04.139Z"}	2026-12-04 00:27:04.146768+00	0	f	r_cd5962caea0c834b6f8c
o_default	upgrade-010	submit	b87d26ae93a8316432d92d8da2526cd8ed5deb3e124ed05c7afefaafc9765264	{"run": {"id": "r_cd5962caea0c834b6f8c", "mode": "live", "ended": null, "state": "waiting", "outcome": null, "process": "upgrade", "version": 1, "startedAt": "2026-12-04T00:27:03.952Z", "startedBy": "a_upgrade", "updatedAt": "2026-12-04T00:27:04.178Z"}, "body": "\\n# Upgrade\\n\\nA run of every state, written by an earlier Baton.\\n", "data": {"steps": {"work": {"at": "2026-12-04T00:27:04.178Z", "by": "a_upgrade", "output": {"note": "review"}, "history": [], "summary": "Noted review."}}, "inputs": {"ref": "review"}}, "steps": [{"id": "work", "kind": "agent", "state": "done"}, {"id": "review", "kind": "approve", "state": "waiting"}, {"id": "paid", "kind": "wait_for", "state": null}, {"id": "done", "kind": "finish", "state": null}], "workItems": [{"id": "w_1", "due": null, "kind": "approve", "next": null, "text": "Approve the note.", "decide": {"tool": "decide", "arguments": {"runId": "r_cd5962caea0c834b6f8c", "snapshot": "804895e1cbf066673301f2086967524c", "requestId": "<new UUID>", "workItemId": "w_1"}, "decisions": ["approved", "rejected", "failed"]}, "output": null, "stepId": "review", "handoff": null, "evidence": null, "snapshot": "804895e1cbf066673301f2086967524c", "assignedTo": {"group": "reviewers"}, "escalation": null}]}	2026-12-04 00:27:04.18262+00	0	f	r_cd5962caea0c834b6f8c
o_default	upgrade-011	start_run	2b59c6df25437d721d7cd6199727e6ad595abb6a2fcfa8efbe006f603206d109	{"run": {"id": "r_1f6cd7bfeaab84a87ff9", "mode": "live", "ended": null, "state": "active", "outcome": null, "process": "upgrade", "version": 1, "startedAt": "2026-12-04T00:27:04.224Z", "startedBy": "a_upgrade", "updatedAt": "2026-12-04T00:27:04.224Z"}, "body": "\\n# Upgrade\\n\\nA run of every state, written by an earlier Baton.\\n", "data": {"steps": {}, "inputs": {"ref": "waiting"}}, "steps": [{"id": "work", "kind": "agent", "state": "ready"}, {"id": "review", "kind": "approve", "state": null}, {"id": "paid", "kind": "wait_for", "state": null}, {"id": "done", "kind": "finish", "state": null}], "workItems": []}	2026-12-04 00:27:04.254797+00	0	f	r_1f6cd7bfeaab84a87ff9
o_default	upgrade-012	claim	fb4cdf409bed06648b54f8381260865ec8221eead36a0ff4b62bd79b36734c05	{"body": "\\n# Upgrade\\n\\nA run of every state, written by an earlier Baton.\\n", "data": {"steps": {}, "inputs": {"ref": "waiting"}}, "mode": "live", "step": {"id": "work", "next": null, "output": {"note": "string"}, "evidence": null, "instructions": "Note the reference."}, "runId": "r_1f6cd7bfeaab84a87ff9", "tools": [{"ref": "crm/get_customer", "short": true}, {"ref": "crm/create_ticket", "short": true}, {"ref": "crm/refund", "short": true}], "stepId": "work", "handoff": null, "leaseId": "upgrade-012", "expiresAt": "2036-12-01T00:27:04.272Z"}	2026-12-04 00:27:04.279548+00	0	f	r_1f6cd7bfeaab84a87ff9
o_default	upgrade-013	submit	1a757fe9c97819b521bb41e4d5da724ac3dc8640249e38a9d825fe27f988d9b9	{"run": {"id": "r_1f6cd7bfeaab84a87ff9", "mode": "live", "ended": null, "state": "waiting", "outcome": null, "process": "upgrade", "version": 1, "startedAt": "2026-12-04T00:27:04.224Z", "startedBy": "a_upgrade", "updatedAt": "2026-12-04T00:27:04.297Z"}, "body": "\\n# Upgrade\\n\\nA run of every state, written by an earlier Baton.\\n", "data": {"steps": {"work": {"at": "2026-12-04T00:27:04.297Z", "by": "a_upgrade", "output": {"note": "waiting"}, "history": [], "summary": "Noted waiting."}}, "inputs": {"ref": "waiting"}}, "steps": [{"id": "work", "kind": "agent", "state": "done"}, {"id": "review", "kind": "approve", "state": "waiting"}, {"id": "paid", "kind": "wait_for", "state": null}, {"id": "done", "kind": "finish", "state": null}], "workItems": [{"id": "w_1", "due": null, "kind": "approve", "next": null, "text": "Approve the note.", "decide": {"tool": "decide", "arguments": {"runId": "r_1f6cd7bfeaab84a87ff9", "snapshot": "a8c4bab03c43eac7cd094d22fddabcc3", "requestId": "<new UUID>", "workItemId": "w_1"}, "decisions": ["approved", "rejected", "failed"]}, "output": null, "stepId": "review", "handoff": null, "evidence": null, "snapshot": "a8c4bab03c43eac7cd094d22fddabcc3", "assignedTo": {"group": "reviewers"}, "escalation": null}]}	2026-12-04 00:27:04.304218+00	0	f	r_1f6cd7bfeaab84a87ff9
o_default	upgrade-014	decide	0a3a97ebfe5c29cfb4c39fdcc6f851d788019d8c3019166595f71c4086a85c6c	{"run": {"id": "r_1f6cd7bfeaab84a87ff9", "mode": "live", "ended": null, "state": "waiting", "outcome": null, "process": "upgrade", "version": 1, "startedAt": "2026-12-04T00:27:04.224Z", "startedBy": "a_upgrade", "updatedAt": "2026-12-04T00:27:04.971Z"}, "body": "\\n# Upgrade\\n\\nA run of every state, written by an earlier Baton.\\n", "data": {"steps": {"work": {"at": "2026-12-04T00:27:04.297Z", "by": "a_upgrade", "output": {"note": "waiting"}, "history": [], "summary": "Noted waiting."}, "review": {"at": "2026-12-04T00:27:04.971Z", "by": "pat@example.com", "history": [], "decision": "approved"}}, "inputs": {"ref": "waiting"}}, "steps": [{"id": "work", "kind": "agent", "state": "done"}, {"id": "review", "kind": "approve", "state": "done"}, {"id": "paid", "kind": "wait_for", "state": "waiting"}, {"id": "done", "kind": "finish", "state": null}], "workItems": []}	2026-12-04 00:27:04.977261+00	0	f	r_1f6cd7bfeaab84a87ff9
o_default	upgrade-015	start_run	4d8a92e06a683cddc167d1bff3b62b172c6825255ccd0cd5591a53c204c7bd9d	{"run": {"id": "r_e26d4e716f1192caf8b0", "mode": "live", "ended": null, "state": "active", "outcome": null, "process": "upgrade", "version": 1, "startedAt": "2026-12-04T00:27:05.000Z", "startedBy": "a_upgrade", "updatedAt": "2026-12-04T00:27:05.000Z"}, "body": "\\n# Upgrade\\n\\nA run of every state, written by an earlier Baton.\\n", "data": {"steps": {}, "inputs": {"ref": "held"}}, "steps": [{"id": "work", "kind": "agent", "state": "ready"}, {"id": "review", "kind": "approve", "state": null}, {"id": "paid", "kind": "wait_for", "state": null}, {"id": "done", "kind": "finish", "state": null}], "workItems": []}	2026-12-04 00:27:05.014618+00	0	f	r_e26d4e716f1192caf8b0
o_default	upgrade-016	send_event	a91673172229bdc7c2bd8b8ac4b23270ecfe40975313ed067aa7511e6ce5a93c	{"consumedBy": null}	2026-12-04 00:27:05.269579+00	0	f	r_e26d4e716f1192caf8b0
o_default	upgrade-017	start_run	9338ef48ed1577d7d45866b6f40cab5621a285a1f311c5a296003bd4405eeef3	{"run": {"id": "r_3ca3d89daeeee9049238", "mode": "live", "ended": null, "state": "active", "outcome": null, "process": "upgrade", "version": 1, "startedAt": "2026-12-04T00:27:05.295Z", "startedBy": "a_upgrade", "updatedAt": "2026-12-04T00:27:05.295Z"}, "body": "\\n# Upgrade\\n\\nA run of every state, written by an earlier Baton.\\n", "data": {"steps": {}, "inputs": {"ref": "done"}}, "steps": [{"id": "work", "kind": "agent", "state": "ready"}, {"id": "review", "kind": "approve", "state": null}, {"id": "paid", "kind": "wait_for", "state": null}, {"id": "done", "kind": "finish", "state": null}], "workItems": []}	2026-12-04 00:27:05.304706+00	0	f	r_3ca3d89daeeee9049238
o_default	upgrade-018	claim	6b759ab2269e219598051b29cce08a560c1caeb439152dcc17c976884f610591	{"body": "\\n# Upgrade\\n\\nA run of every state, written by an earlier Baton.\\n", "data": {"steps": {}, "inputs": {"ref": "done"}}, "mode": "live", "step": {"id": "work", "next": null, "output": {"note": "string"}, "evidence": null, "instructions": "Note the reference."}, "runId": "r_3ca3d89daeeee9049238", "tools": [{"ref": "crm/get_customer", "short": true}, {"ref": "crm/create_ticket", "short": true}, {"ref": "crm/refund", "short": true}], "stepId": "work", "handoff": null, "leaseId": "upgrade-018", "expiresAt": "2036-12-01T00:27:05.322Z"}	2026-12-04 00:27:05.339864+00	0	f	r_3ca3d89daeeee9049238
o_default	upgrade-019	submit	960b9871525815246adf8c189459bbb380634dcb8f47cc5a83e69220874924b1	{"run": {"id": "r_3ca3d89daeeee9049238", "mode": "live", "ended": null, "state": "waiting", "outcome": null, "process": "upgrade", "version": 1, "startedAt": "2026-12-04T00:27:05.295Z", "startedBy": "a_upgrade", "updatedAt": "2026-12-04T00:27:05.350Z"}, "body": "\\n# Upgrade\\n\\nA run of every state, written by an earlier Baton.\\n", "data": {"steps": {"work": {"at": "2026-12-04T00:27:05.350Z", "by": "a_upgrade", "output": {"note": "done"}, "history": [], "summary": "Noted done."}}, "inputs": {"ref": "done"}}, "steps": [{"id": "work", "kind": "agent", "state": "done"}, {"id": "review", "kind": "approve", "state": "waiting"}, {"id": "paid", "kind": "wait_for", "state": null}, {"id": "done", "kind": "finish", "state": null}], "workItems": [{"id": "w_1", "due": null, "kind": "approve", "next": null, "text": "Approve the note.", "decide": {"tool": "decide", "arguments": {"runId": "r_3ca3d89daeeee9049238", "snapshot": "616bd822eb3ba4598830a0a099e3cbd3", "requestId": "<new UUID>", "workItemId": "w_1"}, "decisions": ["approved", "rejected", "failed"]}, "output": null, "stepId": "review", "handoff": null, "evidence": null, "snapshot": "616bd822eb3ba4598830a0a099e3cbd3", "assignedTo": {"group": "reviewers"}, "escalation": null}]}	2026-12-04 00:27:05.355385+00	0	f	r_3ca3d89daeeee9049238
o_default	upgrade-020	decide	3c5e68ffe98019d6b61988f306819a5625d6c188b67f5690d0ee78a8ffa18465	{"run": {"id": "r_3ca3d89daeeee9049238", "mode": "live", "ended": null, "state": "waiting", "outcome": null, "process": "upgrade", "version": 1, "startedAt": "2026-12-04T00:27:05.295Z", "startedBy": "a_upgrade", "updatedAt": "2026-12-04T00:27:05.376Z"}, "body": "\\n# Upgrade\\n\\nA run of every state, written by an earlier Baton.\\n", "data": {"steps": {"work": {"at": "2026-12-04T00:27:05.350Z", "by": "a_upgrade", "output": {"note": "done"}, "history": [], "summary": "Noted done."}, "review": {"at": "2026-12-04T00:27:05.376Z", "by": "pat@example.com", "history": [], "decision": "approved"}}, "inputs": {"ref": "done"}}, "steps": [{"id": "work", "kind": "agent", "state": "done"}, {"id": "review", "kind": "approve", "state": "done"}, {"id": "paid", "kind": "wait_for", "state": "waiting"}, {"id": "done", "kind": "finish", "state": null}], "workItems": []}	2026-12-04 00:27:05.380069+00	0	f	r_3ca3d89daeeee9049238
o_default	upgrade-021	send_event	dd49c19708c7592524c023128ecaf9c63b431a9587abc7fa4e07a889af933c3d	{"consumedBy": "paid"}	2026-12-04 00:27:05.392476+00	0	f	r_3ca3d89daeeee9049238
o_default	upgrade-022	start_run	2b8f7d17194dd7bd4b27056c6bd3ac6ed8dac492c467015d809329aacccac0b8	{"run": {"id": "r_a397de9bf3ed5f62946e", "mode": "live", "ended": null, "state": "active", "outcome": null, "process": "upgrade", "version": 1, "startedAt": "2026-12-04T00:27:05.416Z", "startedBy": "a_upgrade", "updatedAt": "2026-12-04T00:27:05.416Z"}, "body": "\\n# Upgrade\\n\\nA run of every state, written by an earlier Baton.\\n", "data": {"steps": {}, "inputs": {"ref": "failed"}}, "steps": [{"id": "work", "kind": "agent", "state": "ready"}, {"id": "review", "kind": "approve", "state": null}, {"id": "paid", "kind": "wait_for", "state": null}, {"id": "done", "kind": "finish", "state": null}], "workItems": []}	2026-12-04 00:27:05.474784+00	0	f	r_a397de9bf3ed5f62946e
o_default	upgrade-023	claim	240a807832fb327e0bed095e9366130f7d32afe5e256a6e7ce288308b8b18dd4	{"body": "\\n# Upgrade\\n\\nA run of every state, written by an earlier Baton.\\n", "data": {"steps": {}, "inputs": {"ref": "failed"}}, "mode": "live", "step": {"id": "work", "next": null, "output": {"note": "string"}, "evidence": null, "instructions": "Note the reference."}, "runId": "r_a397de9bf3ed5f62946e", "tools": [{"ref": "crm/get_customer", "short": true}, {"ref": "crm/create_ticket", "short": true}, {"ref": "crm/refund", "short": true}], "stepId": "work", "handoff": null, "leaseId": "upgrade-023", "expiresAt": "2036-12-01T00:27:05.487Z"}	2026-12-04 00:27:05.49249+00	0	f	r_a397de9bf3ed5f62946e
o_default	upgrade-024	submit	1cb218f63722b768a0df7249107a2af49c46a9334600528d92b662435f8a125b	{"run": {"id": "r_a397de9bf3ed5f62946e", "mode": "live", "ended": null, "state": "waiting", "outcome": null, "process": "upgrade", "version": 1, "startedAt": "2026-12-04T00:27:05.416Z", "startedBy": "a_upgrade", "updatedAt": "2026-12-04T00:27:05.516Z"}, "body": "\\n# Upgrade\\n\\nA run of every state, written by an earlier Baton.\\n", "data": {"steps": {"work": {"at": "2026-12-04T00:27:05.516Z", "by": "a_upgrade", "output": {"note": "failed"}, "history": [], "summary": "Noted failed."}}, "inputs": {"ref": "failed"}}, "steps": [{"id": "work", "kind": "agent", "state": "done"}, {"id": "review", "kind": "approve", "state": "waiting"}, {"id": "paid", "kind": "wait_for", "state": null}, {"id": "done", "kind": "finish", "state": null}], "workItems": [{"id": "w_1", "due": null, "kind": "approve", "next": null, "text": "Approve the note.", "decide": {"tool": "decide", "arguments": {"runId": "r_a397de9bf3ed5f62946e", "snapshot": "5339a6f905bd9ceebef46334b6670dbe", "requestId": "<new UUID>", "workItemId": "w_1"}, "decisions": ["approved", "rejected", "failed"]}, "output": null, "stepId": "review", "handoff": null, "evidence": null, "snapshot": "5339a6f905bd9ceebef46334b6670dbe", "assignedTo": {"group": "reviewers"}, "escalation": null}]}	2026-12-04 00:27:05.522733+00	0	f	r_a397de9bf3ed5f62946e
o_default	upgrade-025	decide	ea43d03f1c4ab92a6522462a986058efc372105a3b427691a9c51ce4cd5b402a	{"run": {"id": "r_a397de9bf3ed5f62946e", "mode": "live", "ended": {"at": "2026-12-04T00:27:05.546Z", "by": "pat@example.com", "note": "The reference is not ours."}, "state": "ended", "outcome": "failed", "process": "upgrade", "version": 1, "startedAt": "2026-12-04T00:27:05.416Z", "startedBy": "a_upgrade", "updatedAt": "2026-12-04T00:27:05.546Z"}, "body": "\\n# Upgrade\\n\\nA run of every state, written by an earlier Baton.\\n", "data": {"steps": {"work": {"at": "2026-12-04T00:27:05.516Z", "by": "a_upgrade", "output": {"note": "failed"}, "history": [], "summary": "Noted failed."}, "review": {"at": "2026-12-04T00:27:05.546Z", "by": "pat@example.com", "note": "The reference is not ours.", "history": [], "decision": "failed"}}, "inputs": {"ref": "failed"}}, "steps": [{"id": "work", "kind": "agent", "state": "done"}, {"id": "review", "kind": "approve", "state": "failed"}, {"id": "paid", "kind": "wait_for", "state": null}, {"id": "done", "kind": "finish", "state": null}], "workItems": []}	2026-12-04 00:27:05.554504+00	0	f	r_a397de9bf3ed5f62946e
o_default	upgrade-026	start_run	8810a522331b9f5453d8000c93771a305ed5192022f44399ab45e02b5b06977b	{"run": {"id": "r_2e7545ea369c65252df8", "mode": "live", "ended": null, "state": "active", "outcome": null, "process": "upgrade", "version": 1, "startedAt": "2026-12-04T00:27:05.570Z", "startedBy": "a_upgrade", "updatedAt": "2026-12-04T00:27:05.570Z"}, "body": "\\n# Upgrade\\n\\nA run of every state, written by an earlier Baton.\\n", "data": {"steps": {}, "inputs": {"ref": "rejected"}}, "steps": [{"id": "work", "kind": "agent", "state": "ready"}, {"id": "review", "kind": "approve", "state": null}, {"id": "paid", "kind": "wait_for", "state": null}, {"id": "done", "kind": "finish", "state": null}], "workItems": []}	2026-12-04 00:27:05.576656+00	0	f	r_2e7545ea369c65252df8
o_default	upgrade-027	claim	35557999f62f51831d615af55da705be7c6c1e3bcacc9534e0fd500845d68201	{"body": "\\n# Upgrade\\n\\nA run of every state, written by an earlier Baton.\\n", "data": {"steps": {}, "inputs": {"ref": "rejected"}}, "mode": "live", "step": {"id": "work", "next": null, "output": {"note": "string"}, "evidence": null, "instructions": "Note the reference."}, "runId": "r_2e7545ea369c65252df8", "tools": [{"ref": "crm/get_customer", "short": true}, {"ref": "crm/create_ticket", "short": true}, {"ref": "crm/refund", "short": true}], "stepId": "work", "handoff": null, "leaseId": "upgrade-027", "expiresAt": "2036-12-01T00:27:05.586Z"}	2026-12-04 00:27:05.591046+00	0	f	r_2e7545ea369c65252df8
o_default	upgrade-028	submit	2bec48b270f7c94853330c034feaa37e6138e5ad13fd0c6caff69f462db9ccb1	{"run": {"id": "r_2e7545ea369c65252df8", "mode": "live", "ended": null, "state": "waiting", "outcome": null, "process": "upgrade", "version": 1, "startedAt": "2026-12-04T00:27:05.570Z", "startedBy": "a_upgrade", "updatedAt": "2026-12-04T00:27:05.600Z"}, "body": "\\n# Upgrade\\n\\nA run of every state, written by an earlier Baton.\\n", "data": {"steps": {"work": {"at": "2026-12-04T00:27:05.600Z", "by": "a_upgrade", "output": {"note": "rejected"}, "history": [], "summary": "Noted rejected."}}, "inputs": {"ref": "rejected"}}, "steps": [{"id": "work", "kind": "agent", "state": "done"}, {"id": "review", "kind": "approve", "state": "waiting"}, {"id": "paid", "kind": "wait_for", "state": null}, {"id": "done", "kind": "finish", "state": null}], "workItems": [{"id": "w_1", "due": null, "kind": "approve", "next": null, "text": "Approve the note.", "decide": {"tool": "decide", "arguments": {"runId": "r_2e7545ea369c65252df8", "snapshot": "a672f461dba33cc0a07ef0477040f363", "requestId": "<new UUID>", "workItemId": "w_1"}, "decisions": ["approved", "rejected", "failed"]}, "output": null, "stepId": "review", "handoff": null, "evidence": null, "snapshot": "a672f461dba33cc0a07ef0477040f363", "assignedTo": {"group": "reviewers"}, "escalation": null}]}	2026-12-04 00:27:05.604316+00	0	f	r_2e7545ea369c65252df8
o_default	upgrade-029	decide	3ae57d93e26af3a58f96f5ec28cb4961c33cea68155b196052eccbdac3c28b13	{"run": {"id": "r_2e7545ea369c65252df8", "mode": "live", "ended": {"at": "2026-12-04T00:27:05.621Z", "by": "pat@example.com", "note": "Wrong note."}, "state": "ended", "outcome": "rejected", "process": "upgrade", "version": 1, "startedAt": "2026-12-04T00:27:05.570Z", "startedBy": "a_upgrade", "updatedAt": "2026-12-04T00:27:05.621Z"}, "body": "\\n# Upgrade\\n\\nA run of every state, written by an earlier Baton.\\n", "data": {"steps": {"work": {"at": "2026-12-04T00:27:05.600Z", "by": "a_upgrade", "output": {"note": "rejected"}, "history": [], "summary": "Noted rejected."}, "review": {"at": "2026-12-04T00:27:05.621Z", "by": "pat@example.com", "note": "Wrong note.", "history": [], "decision": "rejected"}}, "inputs": {"ref": "rejected"}}, "steps": [{"id": "work", "kind": "agent", "state": "done"}, {"id": "review", "kind": "approve", "state": "done"}, {"id": "paid", "kind": "wait_for", "state": null}, {"id": "done", "kind": "finish", "state": null}], "workItems": []}	2026-12-04 00:27:05.624641+00	0	f	r_2e7545ea369c65252df8
o_default	upgrade-030	start_run	bcdb9a6f9f3e48e64144e8d1143d556989a3c9b26e410c76ab35f68320c914e6	{"run": {"id": "r_bbd592daf742eb6574d0", "mode": "live", "ended": null, "state": "active", "outcome": null, "process": "upgrade", "version": 1, "startedAt": "2026-12-04T00:27:05.639Z", "startedBy": "a_upgrade", "updatedAt": "2026-12-04T00:27:05.639Z"}, "body": "\\n# Upgrade\\n\\nA run of every state, written by an earlier Baton.\\n", "data": {"steps": {}, "inputs": {"ref": "cancelled"}}, "steps": [{"id": "work", "kind": "agent", "state": "ready"}, {"id": "review", "kind": "approve", "state": null}, {"id": "paid", "kind": "wait_for", "state": null}, {"id": "done", "kind": "finish", "state": null}], "workItems": []}	2026-12-04 00:27:05.645739+00	0	f	r_bbd592daf742eb6574d0
o_default	upgrade-031	cancel	aeb6f28257810edfee6f07d571cfbbd85668eba2432a330d0c292b83d86f29a1	{"run": {"id": "r_bbd592daf742eb6574d0", "mode": "live", "ended": {"at": "2026-12-04T00:27:06.879Z", "by": "u_ops", "note": "Started by mistake."}, "state": "cancelled", "outcome": null, "process": "upgrade", "version": 1, "startedAt": "2026-12-04T00:27:05.639Z", "startedBy": "a_upgrade", "updatedAt": "2026-12-04T00:27:06.879Z"}, "body": "\\n# Upgrade\\n\\nA run of every state, written by an earlier Baton.\\n", "data": {"steps": {}, "inputs": {"ref": "cancelled"}}, "steps": [{"id": "work", "kind": "agent", "state": "cancelled"}, {"id": "review", "kind": "approve", "state": null}, {"id": "paid", "kind": "wait_for", "state": null}, {"id": "done", "kind": "finish", "state": null}], "workItems": []}	2026-12-04 00:27:06.886129+00	0	f	r_bbd592daf742eb6574d0
o_default	upgrade-032	upload	d1edfa945399004bb52ee0aaeb4c9ab4e1edba49ae5cd81995a413b2aab56d5e	{"id": "f_8cb52f484d811cfc9d6fae830ceed7bb", "bytes": 8, "sha256": "d47cd809b55acbb91f27f68180367d0fdf6997acb09692bd2341fc6c4407da8a"}	2026-12-04 00:27:06.897911+00	0	f	\N
o_default	upgrade-033	start_run	b2084c476d223a5a200991c64fd7bf34d95137895e493e09de3912feb0d3b969	{"run": {"id": "r_331ffcd851fd543b47d6", "mode": "live", "ended": null, "state": "active", "outcome": null, "process": "upgrade", "version": 1, "startedAt": "2026-12-04T00:27:06.923Z", "startedBy": "a_upgrade", "updatedAt": "2026-12-04T00:27:06.923Z"}, "body": "\\n# Upgrade\\n\\nA run of every state, written by an earlier Baton.\\n", "data": {"steps": {}, "inputs": {"ref": "journaled"}}, "steps": [{"id": "work", "kind": "agent", "state": "ready"}, {"id": "review", "kind": "approve", "state": null}, {"id": "paid", "kind": "wait_for", "state": null}, {"id": "done", "kind": "finish", "state": null}], "workItems": []}	2026-12-04 00:27:06.929353+00	0	f	r_331ffcd851fd543b47d6
o_default	upgrade-034	claim	f93471c368e3a7cc7a77100cc1adf6ee52d3da12165c115e604ec42678543502	{"body": "\\n# Upgrade\\n\\nA run of every state, written by an earlier Baton.\\n", "data": {"steps": {}, "inputs": {"ref": "journaled"}}, "mode": "live", "step": {"id": "work", "next": null, "output": {"note": "string"}, "evidence": null, "instructions": "Note the reference."}, "runId": "r_331ffcd851fd543b47d6", "tools": [{"ref": "crm/get_customer", "short": true}, {"ref": "crm/create_ticket", "short": true}, {"ref": "crm/refund", "short": true}], "stepId": "work", "handoff": null, "leaseId": "upgrade-034", "expiresAt": "2036-12-01T00:27:06.940Z"}	2026-12-04 00:27:06.949049+00	0	f	r_331ffcd851fd543b47d6
o_default	upgrade-035	call_tool	a6dd75ccd6cfbee3c1f5e992299de472693c95f05c7d887c3ce38ad9fce62d06	{"tool": "crm/get_customer", "digest": "3f3f949a7dcefdb6b04eb952de237d589f98ab0004b0d0d4ea95af1cd7e41c77", "result": {"content": [{"text": "{\\"id\\":\\"c_001\\",\\"name\\":\\"Alice Martin\\",\\"email\\":\\"alice@example.com\\",\\"tier\\":\\"gold\\"}", "type": "text"}], "isError": false, "structuredContent": {"id": "c_001", "name": "Alice Martin", "tier": "gold", "email": "alice@example.com"}}, "reused": false, "status": "completed", "message": "crm/get_customer ran.", "workItemId": null}	2026-12-04 00:27:06.966064+00	0	f	r_331ffcd851fd543b47d6
o_default	upgrade-036	call_tool	8981d6e8697478e3d1fd0582a6ab20f79e4a41609b92644a72f2131fc61f24b2	{"tool": "crm/create_ticket", "digest": "987449832535cb5cfa54b240fc56c1062b05c271758949b2922dcd20d25626af", "result": {"content": [{"text": "{\\"ticket\\":\\"T-1001\\",\\"customer\\":\\"alice@example.com\\",\\"subject\\":\\"Late order\\"}", "type": "text"}], "isError": false, "structuredContent": {"ticket": "T-1001", "subject": "Late order", "customer": "alice@example.com"}}, "reused": false, "status": "completed", "message": "crm/create_ticket ran.", "workItemId": null}	2026-12-04 00:27:07.086697+00	0	f	r_331ffcd851fd543b47d6
o_default	upgrade-037	start_run	181114085239f756b411cb15de32d7278d196131de0b691d4780e2bdd9f167dc	{"run": {"id": "r_9852c8a2f34528f421f2", "mode": "live", "ended": null, "state": "active", "outcome": null, "process": "upgrade", "version": 1, "startedAt": "2026-12-04T00:27:07.129Z", "startedBy": "a_upgrade", "updatedAt": "2026-12-04T00:27:07.129Z"}, "body": "\\n# Upgrade\\n\\nA run of every state, written by an earlier Baton.\\n", "data": {"steps": {}, "inputs": {"ref": "approval"}}, "steps": [{"id": "work", "kind": "agent", "state": "ready"}, {"id": "review", "kind": "approve", "state": null}, {"id": "paid", "kind": "wait_for", "state": null}, {"id": "done", "kind": "finish", "state": null}], "workItems": []}	2026-12-04 00:27:07.139836+00	0	f	r_9852c8a2f34528f421f2
o_default	upgrade-038	claim	1de42a91dc068947256502d1f879ae45b519c4d6dbf86604e7ac2fa2a38cba8b	{"body": "\\n# Upgrade\\n\\nA run of every state, written by an earlier Baton.\\n", "data": {"steps": {}, "inputs": {"ref": "approval"}}, "mode": "live", "step": {"id": "work", "next": null, "output": {"note": "string"}, "evidence": null, "instructions": "Note the reference."}, "runId": "r_9852c8a2f34528f421f2", "tools": [{"ref": "crm/get_customer", "short": true}, {"ref": "crm/create_ticket", "short": true}, {"ref": "crm/refund", "short": true}], "stepId": "work", "handoff": null, "leaseId": "upgrade-038", "expiresAt": "2036-12-01T00:27:07.154Z"}	2026-12-04 00:27:07.165244+00	0	f	r_9852c8a2f34528f421f2
o_default	upgrade-039	call_tool	e5833f54e351750c933ba0aaedc3b0239c2e2ef808115cf0d852b19d73183e13	{"tool": "crm/refund", "digest": "f75b9f1ae7cf0f7d5d3d6490dd38ed946a5c45966faea0168adae1413da5cf17", "result": null, "reused": false, "status": "awaiting_approval", "message": "crm/refund waits for a person's approval; stop now, and claim the step again after the decision, then repeat this exact call.", "workItemId": "w_1"}	2026-12-04 00:27:07.233481+00	0	f	r_9852c8a2f34528f421f2
\.


--
-- Data for Name: runs; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.runs (org, run_id, process, version, state, outcome, mode, inputs, started_by, started_at, updated_at, seq, final_view) FROM stdin;
o_default	r_6584403bfdc76b85e7ee	upgrade	1	active	\N	live	{"ref": "ready"}	a_upgrade	2026-12-04 00:27:02.966921+00	2026-12-04 00:27:02.966921+00	1	\N
o_default	r_d618ef592b85333128c2	upgrade	1	active	\N	live	{"ref": "claimed"}	a_upgrade	2026-12-04 00:27:03.524854+00	2026-12-04 00:27:03.577117+00	2	\N
o_default	r_96def8dc863d2b8420ed	upgrade	1	waiting	\N	live	{"ref": "escalated"}	a_upgrade	2026-12-04 00:27:03.640488+00	2026-12-04 00:27:03.761884+00	3	\N
o_default	r_331ffcd851fd543b47d6	upgrade	1	active	\N	live	{"ref": "journaled"}	a_upgrade	2026-12-04 00:27:06.923796+00	2026-12-04 00:27:06.940125+00	2	\N
o_default	r_cd5962caea0c834b6f8c	upgrade	1	waiting	\N	live	{"ref": "review"}	a_upgrade	2026-12-04 00:27:03.952691+00	2026-12-04 00:27:04.178171+00	5	\N
o_default	r_1f6cd7bfeaab84a87ff9	upgrade	1	waiting	\N	live	{"ref": "waiting"}	a_upgrade	2026-12-04 00:27:04.224032+00	2026-12-04 00:27:04.971435+00	8	\N
o_default	r_e26d4e716f1192caf8b0	upgrade	1	active	\N	live	{"ref": "held"}	a_upgrade	2026-12-04 00:27:05.000723+00	2026-12-04 00:27:05.000723+00	1	\N
o_default	r_9852c8a2f34528f421f2	upgrade	1	waiting	\N	live	{"ref": "approval"}	a_upgrade	2026-12-04 00:27:07.129504+00	2026-12-04 00:27:07.229351+00	3	\N
o_default	r_3ca3d89daeeee9049238	upgrade	1	ended	done	live	{"ref": "done"}	a_upgrade	2026-12-04 00:27:05.295892+00	2026-12-04 00:27:05.389223+00	12	{"run":{"id":"r_3ca3d89daeeee9049238","process":"upgrade","version":1,"mode":"live","state":"ended","outcome":"done","ended":{"by":"server","at":"2026-12-04T00:27:05.389Z","note":null},"startedBy":"a_upgrade","startedAt":"2026-12-04T00:27:05.295Z","updatedAt":"2026-12-04T00:27:05.389Z"},"data":{"inputs":{"ref":"done"},"steps":{"paid":{"output":{"amount":12.5},"by":"a_upgrade","at":"2026-12-04T00:27:05.389Z","history":[]},"review":{"decision":"approved","by":"pat@example.com","at":"2026-12-04T00:27:05.376Z","history":[]},"work":{"output":{"note":"done"},"summary":"Noted done.","by":"a_upgrade","at":"2026-12-04T00:27:05.350Z","history":[]}}},"steps":[{"id":"work","kind":"agent","state":"done"},{"id":"review","kind":"approve","state":"done"},{"id":"paid","kind":"wait_for","state":"done"},{"id":"done","kind":"finish","state":"done"}],"workItems":[],"body":"\\n# Upgrade\\n\\nA run of every state, written by an earlier Baton.\\n"}
o_default	r_a397de9bf3ed5f62946e	upgrade	1	ended	failed	live	{"ref": "failed"}	a_upgrade	2026-12-04 00:27:05.416189+00	2026-12-04 00:27:05.546984+00	6	{"run":{"id":"r_a397de9bf3ed5f62946e","process":"upgrade","version":1,"mode":"live","state":"ended","outcome":"failed","ended":{"by":"pat@example.com","at":"2026-12-04T00:27:05.546Z","note":"The reference is not ours."},"startedBy":"a_upgrade","startedAt":"2026-12-04T00:27:05.416Z","updatedAt":"2026-12-04T00:27:05.546Z"},"data":{"inputs":{"ref":"failed"},"steps":{"review":{"decision":"failed","note":"The reference is not ours.","by":"pat@example.com","at":"2026-12-04T00:27:05.546Z","history":[]},"work":{"output":{"note":"failed"},"summary":"Noted failed.","by":"a_upgrade","at":"2026-12-04T00:27:05.516Z","history":[]}}},"steps":[{"id":"work","kind":"agent","state":"done"},{"id":"review","kind":"approve","state":"failed"},{"id":"paid","kind":"wait_for","state":null},{"id":"done","kind":"finish","state":null}],"workItems":[],"body":"\\n# Upgrade\\n\\nA run of every state, written by an earlier Baton.\\n"}
o_default	r_2e7545ea369c65252df8	upgrade	1	ended	rejected	live	{"ref": "rejected"}	a_upgrade	2026-12-04 00:27:05.570168+00	2026-12-04 00:27:05.621047+00	7	{"run":{"id":"r_2e7545ea369c65252df8","process":"upgrade","version":1,"mode":"live","state":"ended","outcome":"rejected","ended":{"by":"pat@example.com","at":"2026-12-04T00:27:05.621Z","note":"Wrong note."},"startedBy":"a_upgrade","startedAt":"2026-12-04T00:27:05.570Z","updatedAt":"2026-12-04T00:27:05.621Z"},"data":{"inputs":{"ref":"rejected"},"steps":{"review":{"decision":"rejected","note":"Wrong note.","by":"pat@example.com","at":"2026-12-04T00:27:05.621Z","history":[]},"work":{"output":{"note":"rejected"},"summary":"Noted rejected.","by":"a_upgrade","at":"2026-12-04T00:27:05.600Z","history":[]}}},"steps":[{"id":"work","kind":"agent","state":"done"},{"id":"review","kind":"approve","state":"done"},{"id":"paid","kind":"wait_for","state":null},{"id":"done","kind":"finish","state":null}],"workItems":[],"body":"\\n# Upgrade\\n\\nA run of every state, written by an earlier Baton.\\n"}
o_default	r_bbd592daf742eb6574d0	upgrade	1	cancelled	\N	live	{"ref": "cancelled"}	a_upgrade	2026-12-04 00:27:05.63994+00	2026-12-04 00:27:06.879917+00	2	{"run":{"id":"r_bbd592daf742eb6574d0","process":"upgrade","version":1,"mode":"live","state":"cancelled","outcome":null,"ended":{"by":"u_ops","at":"2026-12-04T00:27:06.879Z","note":"Started by mistake."},"startedBy":"a_upgrade","startedAt":"2026-12-04T00:27:05.639Z","updatedAt":"2026-12-04T00:27:06.879Z"},"data":{"inputs":{"ref":"cancelled"},"steps":{}},"steps":[{"id":"work","kind":"agent","state":"cancelled"},{"id":"review","kind":"approve","state":null},{"id":"paid","kind":"wait_for","state":null},{"id":"done","kind":"finish","state":null}],"workItems":[],"body":"\\n# Upgrade\\n\\nA run of every state, written by an earlier Baton.\\n"}
\.


--
-- Data for Name: schema_migrations; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.schema_migrations (version, name, applied_at) FROM stdin;
1	001_read_model.sql	2026-12-04 00:27:00.080751+00
2	002_gateway.sql	2026-12-04 00:27:00.080751+00
3	003_definition_order.sql	2026-12-04 00:27:00.080751+00
4	004_final_view.sql	2026-12-04 00:27:00.080751+00
5	005_tools.sql	2026-12-04 00:27:00.080751+00
6	006_upload_quota.sql	2026-12-04 00:27:00.080751+00
7	007_request_attempts.sql	2026-12-04 00:27:00.080751+00
8	008_work_also_groups.sql	2026-12-04 00:27:00.080751+00
9	009_request_digest_text.sql	2026-12-04 00:27:00.080751+00
10	010_file_request.sql	2026-12-04 00:27:00.080751+00
11	011_run_requests.sql	2026-12-04 00:27:00.080751+00
\.


--
-- Data for Name: tool_policies; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.tool_policies (org, server, tool, "position", policy, idempotency, approvers, approval_sla_seconds) FROM stdin;
o_default	crm	get_customer	0	read	none	{}	\N
o_default	crm	create_ticket	1	write	key	{}	\N
o_default	crm	refund	2	approval_required	key	{approvers}	\N
\.


--
-- Data for Name: tool_servers; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.tool_servers (org, name, "position", url, test_url, credentials, timeout_ms, listing, listed_at, updated_at) FROM stdin;
o_default	crm	0	http://127.0.0.1:43381/mcp	\N	\N	10000	[{"name": "get_customer", "description": "Look up a customer by email address: id, name and tier.", "inputSchema": {"type": "object", "required": ["email"], "properties": {"email": {"type": "string", "description": "the customer's email address"}}, "additionalProperties": false}}, {"name": "create_ticket", "description": "Open a support ticket for a customer. Send an idempotency key: the same key opens one ticket.", "inputSchema": {"type": "object", "required": ["customer", "subject"], "properties": {"body": {"type": "string", "description": "the details"}, "subject": {"type": "string", "description": "one line: what the ticket is about"}, "customer": {"type": "string", "description": "the customer's email address"}}, "additionalProperties": false}}, {"name": "refund", "description": "Refund a customer. Moves money: send an idempotency key, the same key refunds once.", "inputSchema": {"type": "object", "required": ["customer", "amount", "currency"], "properties": {"amount": {"type": "number", "description": "the amount to refund, more than 0"}, "reason": {"type": "string", "description": "why, for the customer's statement"}, "ticket": {"type": "string", "description": "the ticket the refund settles"}, "currency": {"type": "string", "description": "EUR or USD"}, "customer": {"type": "string", "description": "the customer's email address"}}, "additionalProperties": false}}]	2026-12-04 00:27:01.186664+00	2026-12-04 00:27:01.122123+00
\.


--
-- Data for Name: work; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.work (org, run_id, step_id, work_item_id, kind, process, version, mode, ready_since, due, overdue, assigned_group, assigned_person, handoff, item, also_groups) FROM stdin;
o_default	r_6584403bfdc76b85e7ee	work	\N	agent	upgrade	1	live	2026-12-04 00:27:02.966921+00	\N	f	\N	\N	\N	\N	\N
o_default	r_96def8dc863d2b8420ed	work	w_1	escalation	upgrade	1	live	2026-12-04 00:27:03.761884+00	\N	f	operators	\N	\N	{"id": "w_1", "due": null, "kind": "agent", "next": null, "text": "Note the reference.", "decide": {"tool": "decide", "arguments": {"runId": "r_96def8dc863d2b8420ed", "snapshot": "aee0c4c326fd9c1987e393df0b32c4bc", "requestId": "<new UUID>", "workItemId": "w_1"}, "decisions": ["returned", "completed", "failed"]}, "output": {"note": "string"}, "stepId": "work", "handoff": null, "evidence": null, "snapshot": "aee0c4c326fd9c1987e393df0b32c4bc", "assignedTo": {"group": "operators"}, "escalation": {"at": "2026-12-04T00:27:03.761Z", "by": "a_upgrade", "note": "I cannot read the reference."}}	\N
o_default	r_cd5962caea0c834b6f8c	review	w_1	approve	upgrade	1	live	2026-12-04 00:27:04.178171+00	\N	f	reviewers	\N	\N	{"id": "w_1", "due": null, "kind": "approve", "next": null, "text": "Approve the note.", "decide": {"tool": "decide", "arguments": {"runId": "r_cd5962caea0c834b6f8c", "snapshot": "804895e1cbf066673301f2086967524c", "requestId": "<new UUID>", "workItemId": "w_1"}, "decisions": ["approved", "rejected", "failed"]}, "output": null, "stepId": "review", "handoff": null, "evidence": null, "snapshot": "804895e1cbf066673301f2086967524c", "assignedTo": {"group": "reviewers"}, "escalation": null}	\N
o_default	r_e26d4e716f1192caf8b0	work	\N	agent	upgrade	1	live	2026-12-04 00:27:05.000723+00	\N	f	\N	\N	\N	\N	\N
o_default	r_9852c8a2f34528f421f2	work	w_1	approve	upgrade	1	live	2026-12-04 00:27:07.229351+00	\N	f	approvers	\N	\N	{"id": "w_1", "due": null, "kind": "approve", "next": null, "text": "An agent asks to call crm/refund. Approve only if this exact call should run; it runs once, exactly as shown.\\n\\nTool: crm/refund\\nArguments:\\n{\\n  \\"amount\\": 12.5,\\n  \\"currency\\": \\"EUR\\",\\n  \\"customer\\": \\"bob@example.com\\",\\n  \\"reason\\": \\"Late order\\"\\n}\\nStep: work (process upgrade, version 1, run r_9852c8a2f34528f421f2)\\nAgent: a_upgrade, attempt 1\\nDigest: f75b9f1ae7cf0f7d5d3d6490dd38ed946a5c45966faea0168adae1413da5cf17\\n\\nApprove to let the agent run it. Reject with a note to refuse it; the agent reads your note.", "decide": {"tool": "decide", "arguments": {"runId": "r_9852c8a2f34528f421f2", "snapshot": "a63b2e4dcff634011ed9c04ec9852772", "requestId": "<new UUID>", "workItemId": "w_1"}, "decisions": ["approved", "rejected"]}, "output": null, "stepId": "work", "handoff": null, "evidence": null, "snapshot": "a63b2e4dcff634011ed9c04ec9852772", "assignedTo": {"group": "approvers"}, "escalation": null}	\N
\.


--
-- Name: files files_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.files
    ADD CONSTRAINT files_pkey PRIMARY KEY (org, file_id);


--
-- Name: process_drafts process_drafts_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.process_drafts
    ADD CONSTRAINT process_drafts_pkey PRIMARY KEY (org, name);


--
-- Name: process_versions process_versions_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.process_versions
    ADD CONSTRAINT process_versions_pkey PRIMARY KEY (org, name, version);


--
-- Name: processes processes_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.processes
    ADD CONSTRAINT processes_pkey PRIMARY KEY (org, name);


--
-- Name: requests requests_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.requests
    ADD CONSTRAINT requests_pkey PRIMARY KEY (org, request_id);


--
-- Name: runs runs_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.runs
    ADD CONSTRAINT runs_pkey PRIMARY KEY (org, run_id);


--
-- Name: schema_migrations schema_migrations_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.schema_migrations
    ADD CONSTRAINT schema_migrations_pkey PRIMARY KEY (version);


--
-- Name: tool_policies tool_policies_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.tool_policies
    ADD CONSTRAINT tool_policies_pkey PRIMARY KEY (org, server, tool);


--
-- Name: tool_servers tool_servers_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.tool_servers
    ADD CONSTRAINT tool_servers_pkey PRIMARY KEY (org, name);


--
-- Name: work work_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.work
    ADD CONSTRAINT work_pkey PRIMARY KEY (org, run_id, step_id);


--
-- Name: files_creator_created; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX files_creator_created ON public.files USING btree (org, created_by, created_at);


--
-- Name: files_request; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX files_request ON public.files USING btree (org, request_id) WHERE (request_id IS NOT NULL);


--
-- Name: requests_created; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX requests_created ON public.requests USING btree (created_at);


--
-- Name: runs_inputs; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX runs_inputs ON public.runs USING gin (inputs jsonb_path_ops) WITH (fastupdate=off);


--
-- Name: runs_org_process_started; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX runs_org_process_started ON public.runs USING btree (org, process, started_at, run_id);


--
-- Name: runs_org_process_state_started; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX runs_org_process_state_started ON public.runs USING btree (org, process, state, started_at, run_id);


--
-- Name: runs_org_started; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX runs_org_started ON public.runs USING btree (org, started_at, run_id);


--
-- Name: runs_org_state_started; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX runs_org_state_started ON public.runs USING btree (org, state, started_at, run_id);


--
-- Name: work_agent_process_ready; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX work_agent_process_ready ON public.work USING btree (org, process, ready_since, run_id, step_id) WHERE (kind = 'agent'::text);


--
-- Name: work_agent_ready; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX work_agent_ready ON public.work USING btree (org, ready_since, run_id, step_id) WHERE (kind = 'agent'::text);


--
-- Name: work_also_ready; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX work_also_ready ON public.work USING btree (org, ready_since, run_id, step_id) WHERE (also_groups IS NOT NULL);


--
-- Name: work_group_ready; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX work_group_ready ON public.work USING btree (org, assigned_group, ready_since, run_id, step_id) WHERE (assigned_group IS NOT NULL);


--
-- Name: work_person_ready; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX work_person_ready ON public.work USING btree (org, assigned_person, ready_since, run_id, step_id) WHERE (assigned_person IS NOT NULL);


--
-- Name: process_drafts process_drafts_org_name_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.process_drafts
    ADD CONSTRAINT process_drafts_org_name_fkey FOREIGN KEY (org, name) REFERENCES public.processes(org, name);


--
-- Name: process_versions process_versions_org_name_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.process_versions
    ADD CONSTRAINT process_versions_org_name_fkey FOREIGN KEY (org, name) REFERENCES public.processes(org, name);


--
-- Name: tool_policies tool_policies_org_server_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.tool_policies
    ADD CONSTRAINT tool_policies_org_server_fkey FOREIGN KEY (org, server) REFERENCES public.tool_servers(org, name) ON DELETE CASCADE;


--
-- Name: work work_org_run_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.work
    ADD CONSTRAINT work_org_run_id_fkey FOREIGN KEY (org, run_id) REFERENCES public.runs(org, run_id) ON DELETE CASCADE;


--
-- PostgreSQL database dump complete
--

\unrestrict fLf9fIiPBZk77nKZz98gQJeaD8jkg9wVv3m4H23YiU32itmu87HZLuAjMgJj8mZ

