--
-- PostgreSQL database dump
--

\restrict TeRcEwgevYGZ1lAFvu9ln5DBj0H053XqIwAa4waKA9fdRXBDBPQtvkOMFsCoLoN

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
    digest bytea NOT NULL,
    result jsonb,
    created_at timestamp with time zone DEFAULT now() NOT NULL
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
    CONSTRAINT work_check CHECK (((kind = 'agent'::text) = (work_item_id IS NULL))),
    CONSTRAINT work_check1 CHECK (((kind = 'agent'::text) OR (assigned_group IS NOT NULL) OR (assigned_person IS NOT NULL))),
    CONSTRAINT work_kind_check CHECK ((kind = ANY (ARRAY['agent'::text, 'task'::text, 'approve'::text, 'escalation'::text]))),
    CONSTRAINT work_mode_check CHECK ((mode = ANY (ARRAY['live'::text, 'test'::text])))
);


--
-- Data for Name: files; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.files (org, file_id, name, content_type, size, sha256, bytes, created_by, created_at) FROM stdin;
o_default	f_69d27c60c41cf6a1eea7	note.txt	text/plain	8	\\xd47cd809b55acbb91f27f68180367d0fdf6997acb09692bd2341fc6c4407da8a	\\x41206e6f74652e0a	a_upgrade	2026-12-04 00:36:45.956573+00
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
o_default	upgrade	1	e857b79e5c36c05d20c0ea3c054de6ca31d17c868c7610e453aa8a4044566310	---\nname: upgrade\ndescription: An agent notes a reference, a reviewer approves it, the run waits for payment and finishes.\ninputs:\n  ref: string\nsteps:\n  - id: work\n    agent: Note the reference.\n    output: { note: string }\n  - id: review\n    person: reviewers\n    approve: Approve the note.\n  - id: paid\n    wait_for: paid\n  - id: done\n    finish: done\n---\n\n# Upgrade\n\nA run of every state, written by an earlier Baton.\n	{"name":"upgrade","description":"An agent notes a reference, a reviewer approves it, the run waits for payment and finishes.","inputs":{"ref":"string"},"steps":[{"id":"work","kind":"agent","text":"Note the reference.","output":{"note":"string"}},{"id":"review","kind":"approve","text":"Approve the note.","person":"reviewers"},{"id":"paid","kind":"wait_for","text":"paid"},{"id":"done","kind":"finish","text":"done"}],"body":"\\n# Upgrade\\n\\nA run of every state, written by an earlier Baton.\\n","frontmatter":{"description":"An agent notes a reference, a reviewer approves it, the run waits for payment and finishes.","inputs":{"ref":"string"},"name":"upgrade","steps":[{"agent":"Note the reference.","id":"work","output":{"note":"string"}},{"approve":"Approve the note.","id":"review","person":"reviewers"},{"id":"paid","wait_for":"paid"},{"finish":"done","id":"done"}]},"hash":"e857b79e5c36c05d20c0ea3c054de6ca31d17c868c7610e453aa8a4044566310"}	{"reviewers": "reviewers"}	baton-dev	2026-12-04 00:36:38.039878+00
\.


--
-- Data for Name: processes; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.processes (org, name, created_at) FROM stdin;
o_default	upgrade	2026-12-04 00:36:37.851946+00
\.


--
-- Data for Name: requests; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.requests (org, request_id, tool, digest, result, created_at) FROM stdin;
o_default	upgrade-001	start_run	\\xbafedd4b85c214f7d26b697c37073ad080de638a0b908389e0b4c6df0e8cbed8	{"run": {"id": "r_6584403bfdc76b85e7ee", "mode": "live", "ended": null, "state": "active", "outcome": null, "process": "upgrade", "version": 1, "startedAt": "2026-12-04T00:36:39.875Z", "startedBy": "a_upgrade", "updatedAt": "2026-12-04T00:36:39.875Z"}, "body": "\\n# Upgrade\\n\\nA run of every state, written by an earlier Baton.\\n", "data": {"steps": {}, "inputs": {"ref": "ready"}}, "steps": [{"id": "work", "kind": "agent", "state": "ready"}, {"id": "review", "kind": "approve", "state": null}, {"id": "paid", "kind": "wait_for", "state": null}, {"id": "done", "kind": "finish", "state": null}], "workItems": []}	2026-12-04 00:36:40.036308+00
o_default	upgrade-002	start_run	\\xb8d19e59b160ce1d85a50aaecfa11a77ec70a1fce2b4fd3df2b82f9d9a052d30	{"run": {"id": "r_d618ef592b85333128c2", "mode": "live", "ended": null, "state": "active", "outcome": null, "process": "upgrade", "version": 1, "startedAt": "2026-12-04T00:36:40.159Z", "startedBy": "a_upgrade", "updatedAt": "2026-12-04T00:36:40.159Z"}, "body": "\\n# Upgrade\\n\\nA run of every state, written by an earlier Baton.\\n", "data": {"steps": {}, "inputs": {"ref": "claimed"}}, "steps": [{"id": "work", "kind": "agent", "state": "ready"}, {"id": "review", "kind": "approve", "state": null}, {"id": "paid", "kind": "wait_for", "state": null}, {"id": "done", "kind": "finish", "state": null}], "workItems": []}	2026-12-04 00:36:40.510831+00
o_default	upgrade-003	claim	\\x93c2d203aa31d59e90e3367030d11dff3ec53588169611e408f1184a49e9bcb8	{"body": "\\n# Upgrade\\n\\nA run of every state, written by an earlier Baton.\\n", "data": {"steps": {}, "inputs": {"ref": "claimed"}}, "mode": "live", "step": {"id": "work", "next": null, "output": {"note": "string"}, "evidence": null, "instructions": "Note the reference."}, "token": "AQlvX2RlZmF1bHQWcl9kNjE4ZWY1OTJiODUzMzMxMjhjMgR3b3JrC3VwZ3JhZGUtMDAzBsVn5Eu292843eCqRF7y3FjCQ0xLVnkyoxLnm11JPTw", "handoff": null, "expiresAt": "2036-12-01T00:36:40.541Z"}	2026-12-04 00:36:40.590252+00
o_default	upgrade-004	renew	\\x63db4f646752608fc6b43b9351dd82f8f6ba17ab3b009f8a272ba2b507413761	{"token": "AQlvX2RlZmF1bHQWcl9kNjE4ZWY1OTJiODUzMzMxMjhjMgR3b3JrC3VwZ3JhZGUtMDA0iYo9REIaCtXm5ra3xup6TQKSR09PQlBWBoD_zRJqhtk", "expiresAt": "2036-12-01T00:36:40.601Z"}	2026-12-04 00:36:40.656942+00
o_default	upgrade-005	start_run	\\xbc8507cdba552df3dd56bbf4ad9913ed39225af303d78c81c1a89c3dd151e6a0	{"run": {"id": "r_96def8dc863d2b8420ed", "mode": "live", "ended": null, "state": "active", "outcome": null, "process": "upgrade", "version": 1, "startedAt": "2026-12-04T00:36:40.701Z", "startedBy": "a_upgrade", "updatedAt": "2026-12-04T00:36:40.701Z"}, "body": "\\n# Upgrade\\n\\nA run of every state, written by an earlier Baton.\\n", "data": {"steps": {}, "inputs": {"ref": "escalated"}}, "steps": [{"id": "work", "kind": "agent", "state": "ready"}, {"id": "review", "kind": "approve", "state": null}, {"id": "paid", "kind": "wait_for", "state": null}, {"id": "done", "kind": "finish", "state": null}], "workItems": []}	2026-12-04 00:36:40.911115+00
o_default	upgrade-006	claim	\\xe80f331c5963c7518b49de12be59426196b93a2069100eba2b5531645c657d9c	{"body": "\\n# Upgrade\\n\\nA run of every state, written by an earlier Baton.\\n", "data": {"steps": {}, "inputs": {"ref": "escalated"}}, "mode": "live", "step": {"id": "work", "next": null, "output": {"note": "string"}, "evidence": null, "instructions": "Note the reference."}, "token": "AQlvX2RlZmF1bHQWcl85NmRlZjhkYzg2M2QyYjg0MjBlZAR3b3JrC3VwZ3JhZGUtMDA26N4jopx5-cLyp6eeJws1K63739aMXr-rSsBLnZqU1vA", "handoff": null, "expiresAt": "2036-12-01T00:36:40.932Z"}	2026-12-04 00:36:40.970838+00
o_default	upgrade-007	escalate	\\x021b7518418007ccc7064062d229713109576f0bd4a76832a6f49916eae5e0ee	{"run": {"id": "r_96def8dc863d2b8420ed", "mode": "live", "ended": null, "state": "waiting", "outcome": null, "process": "upgrade", "version": 1, "startedAt": "2026-12-04T00:36:40.701Z", "startedBy": "a_upgrade", "updatedAt": "2026-12-04T00:36:40.976Z"}, "body": "\\n# Upgrade\\n\\nA run of every state, written by an earlier Baton.\\n", "data": {"steps": {}, "inputs": {"ref": "escalated"}}, "steps": [{"id": "work", "kind": "agent", "state": "waiting"}, {"id": "review", "kind": "approve", "state": null}, {"id": "paid", "kind": "wait_for", "state": null}, {"id": "done", "kind": "finish", "state": null}], "workItems": [{"id": "w_1", "due": null, "kind": "agent", "next": null, "text": "Note the reference.", "decide": {"tool": "decide", "arguments": {"runId": "r_96def8dc863d2b8420ed", "snapshot": "aee0c4c326fd9c1987e393df0b32c4bc", "requestId": "<new UUID>", "workItemId": "w_1"}, "decisions": ["returned", "completed", "failed"]}, "output": {"note": "string"}, "stepId": "work", "handoff": null, "evidence": null, "snapshot": "aee0c4c326fd9c1987e393df0b32c4bc", "assignedTo": {"group": "operators"}, "escalation": {"at": "2026-12-04T00:36:40.976Z", "by": "a_upgrade", "note": "I cannot read the reference."}}]}	2026-12-04 00:36:41.023402+00
o_default	upgrade-008	start_run	\\x058ed10af512e670ec2a5e7deff558fd584c8c992ccc388f5cc76ff42969aa5c	{"run": {"id": "r_cd5962caea0c834b6f8c", "mode": "live", "ended": null, "state": "active", "outcome": null, "process": "upgrade", "version": 1, "startedAt": "2026-12-04T00:36:41.064Z", "startedBy": "a_upgrade", "updatedAt": "2026-12-04T00:36:41.064Z"}, "body": "\\n# Upgrade\\n\\nA run of every state, written by an earlier Baton.\\n", "data": {"steps": {}, "inputs": {"ref": "review"}}, "steps": [{"id": "work", "kind": "agent", "state": "ready"}, {"id": "review", "kind": "approve", "state": null}, {"id": "paid", "kind": "wait_for", "state": null}, {"id": "done", "kind": "finish", "state": null}], "workItems": []}	2026-12-04 00:36:41.432022+00
o_default	upgrade-009	claim	\\x1ba010e9a53322e7a76103b609edaf3c2c206e5d8cb40eab41a19565dfab06a3	{"body": "\\n# Upgrade\\n\\nA run of every state, written by an earlier Baton.\\n", "data": {"steps": {}, "inputs": {"ref": "review"}}, "mode": "live", "step": {"id": "work", "next": null, "output": {"note": "string"}, "evidence": null, "instructions": "Note the reference."}, "token": "AQlvX2RlZmF1bHQWcl9jZDU5NjJjYWVhMGM4MzRiNmY4YwR3b3JrC3VwZ3JhZGUtMDA5aoXpK6YqNJ6eCwWaeJfLs0pokPXzVGNJC8UZo8MV4gk", "handoff": null, "expiresAt": "2036-12-01T00:36:41.482Z"}	2026-12-04 00:36:41.550665+00
o_default	upgrade-010	submit	\\x7104612d36f706038f9b180bc733788f08b8dbfefbcbc370328c255b12cff1bf	{"run": {"id": "r_cd5962caea0c834b6f8c", "mode": "live", "ended": null, "state": "waiting", "outcome": null, "process": "upgrade", "version": 1, "startedAt": "2026-12-04T00:36:41.064Z", "startedBy": "a_upgrade", "updatedAt": "2026-12-04T00:36:41.556Z"}, "body": "\\n# Upgrade\\n\\nA run of every state, written by an earlier Baton.\\n", "data": {"steps": {"work": {"at": "2026-12-04T00:36:41.556Z", "by": "a_upgrade", "output": {"note": "review"}, "history": [], "summary": "Noted review."}}, "inputs": {"ref": "review"}}, "steps": [{"id": "work", "kind": "agent", "state": "done"}, {"id": "review", "kind": "approve", "state": "waiting"}, {"id": "paid", "kind": "wait_for", "state": null}, {"id": "done", "kind": "finish", "state": null}], "workItems": [{"id": "w_1", "due": null, "kind": "approve", "next": null, "text": "Approve the note.", "decide": {"tool": "decide", "arguments": {"runId": "r_cd5962caea0c834b6f8c", "snapshot": "6797bc3ba7946d6f83494bb49c2bfbe1", "requestId": "<new UUID>", "workItemId": "w_1"}, "decisions": ["approved", "rejected", "failed"]}, "output": null, "stepId": "review", "handoff": null, "evidence": null, "snapshot": "6797bc3ba7946d6f83494bb49c2bfbe1", "assignedTo": {"group": "reviewers"}, "escalation": null}]}	2026-12-04 00:36:41.637896+00
o_default	upgrade-011	start_run	\\x2b59c6df25437d721d7cd6199727e6ad595abb6a2fcfa8efbe006f603206d109	{"run": {"id": "r_1f6cd7bfeaab84a87ff9", "mode": "live", "ended": null, "state": "active", "outcome": null, "process": "upgrade", "version": 1, "startedAt": "2026-12-04T00:36:41.699Z", "startedBy": "a_upgrade", "updatedAt": "2026-12-04T00:36:41.699Z"}, "body": "\\n# Upgrade\\n\\nA run of every state, written by an earlier Baton.\\n", "data": {"steps": {}, "inputs": {"ref": "waiting"}}, "steps": [{"id": "work", "kind": "agent", "state": "ready"}, {"id": "review", "kind": "approve", "state": null}, {"id": "paid", "kind": "wait_for", "state": null}, {"id": "done", "kind": "finish", "state": null}], "workItems": []}	2026-12-04 00:36:41.830329+00
o_default	upgrade-012	claim	\\xfb4cdf409bed06648b54f8381260865ec8221eead36a0ff4b62bd79b36734c05	{"body": "\\n# Upgrade\\n\\nA run of every state, written by an earlier Baton.\\n", "data": {"steps": {}, "inputs": {"ref": "waiting"}}, "mode": "live", "step": {"id": "work", "next": null, "output": {"note": "string"}, "evidence": null, "instructions": "Note the reference."}, "token": "AQlvX2RlZmF1bHQWcl8xZjZjZDdiZmVhYWI4NGE4N2ZmOQR3b3JrC3VwZ3JhZGUtMDEyfMCGHBU5mKIvbSx6EElExLVy9cl1TOkF01dmFCQiquI", "handoff": null, "expiresAt": "2036-12-01T00:36:41.848Z"}	2026-12-04 00:36:41.959164+00
o_default	upgrade-013	submit	\\xdac8e6824f9f8c0de050b14d459f61e24bd5b748a95a77f0d30fe3cb1255a7e7	{"run": {"id": "r_1f6cd7bfeaab84a87ff9", "mode": "live", "ended": null, "state": "waiting", "outcome": null, "process": "upgrade", "version": 1, "startedAt": "2026-12-04T00:36:41.699Z", "startedBy": "a_upgrade", "updatedAt": "2026-12-04T00:36:41.966Z"}, "body": "\\n# Upgrade\\n\\nA run of every state, written by an earlier Baton.\\n", "data": {"steps": {"work": {"at": "2026-12-04T00:36:41.966Z", "by": "a_upgrade", "output": {"note": "waiting"}, "history": [], "summary": "Noted waiting."}}, "inputs": {"ref": "waiting"}}, "steps": [{"id": "work", "kind": "agent", "state": "done"}, {"id": "review", "kind": "approve", "state": "waiting"}, {"id": "paid", "kind": "wait_for", "state": null}, {"id": "done", "kind": "finish", "state": null}], "workItems": [{"id": "w_1", "due": null, "kind": "approve", "next": null, "text": "Approve the note.", "decide": {"tool": "decide", "arguments": {"runId": "r_1f6cd7bfeaab84a87ff9", "snapshot": "3c5731de8bf82831d42fca21c80eccc2", "requestId": "<new UUID>", "workItemId": "w_1"}, "decisions": ["approved", "rejected", "failed"]}, "output": null, "stepId": "review", "handoff": null, "evidence": null, "snapshot": "3c5731de8bf82831d42fca21c80eccc2", "assignedTo": {"group": "reviewers"}, "escalation": null}]}	2026-12-04 00:36:42.083751+00
o_default	upgrade-014	decide	\\xd340ad0c6d1d7f04e64f27c0749d77ae3371882f5af529f5866e63bf2eb7691d	{"run": {"id": "r_1f6cd7bfeaab84a87ff9", "mode": "live", "ended": null, "state": "waiting", "outcome": null, "process": "upgrade", "version": 1, "startedAt": "2026-12-04T00:36:41.699Z", "startedBy": "a_upgrade", "updatedAt": "2026-12-04T00:36:42.769Z"}, "body": "\\n# Upgrade\\n\\nA run of every state, written by an earlier Baton.\\n", "data": {"steps": {"work": {"at": "2026-12-04T00:36:41.966Z", "by": "a_upgrade", "output": {"note": "waiting"}, "history": [], "summary": "Noted waiting."}, "review": {"at": "2026-12-04T00:36:42.769Z", "by": "pat@example.com", "history": [], "decision": "approved"}}, "inputs": {"ref": "waiting"}}, "steps": [{"id": "work", "kind": "agent", "state": "done"}, {"id": "review", "kind": "approve", "state": "done"}, {"id": "paid", "kind": "wait_for", "state": "waiting"}, {"id": "done", "kind": "finish", "state": null}], "workItems": []}	2026-12-04 00:36:42.803296+00
o_default	upgrade-015	start_run	\\x4d8a92e06a683cddc167d1bff3b62b172c6825255ccd0cd5591a53c204c7bd9d	{"run": {"id": "r_e26d4e716f1192caf8b0", "mode": "live", "ended": null, "state": "active", "outcome": null, "process": "upgrade", "version": 1, "startedAt": "2026-12-04T00:36:42.862Z", "startedBy": "a_upgrade", "updatedAt": "2026-12-04T00:36:42.862Z"}, "body": "\\n# Upgrade\\n\\nA run of every state, written by an earlier Baton.\\n", "data": {"steps": {}, "inputs": {"ref": "held"}}, "steps": [{"id": "work", "kind": "agent", "state": "ready"}, {"id": "review", "kind": "approve", "state": null}, {"id": "paid", "kind": "wait_for", "state": null}, {"id": "done", "kind": "finish", "state": null}], "workItems": []}	2026-12-04 00:36:43.019406+00
o_default	upgrade-016	send_event	\\xa91673172229bdc7c2bd8b8ac4b23270ecfe40975313ed067aa7511e6ce5a93c	{"consumedBy": null}	2026-12-04 00:36:43.140436+00
o_default	upgrade-017	start_run	\\x9338ef48ed1577d7d45866b6f40cab5621a285a1f311c5a296003bd4405eeef3	{"run": {"id": "r_3ca3d89daeeee9049238", "mode": "live", "ended": null, "state": "active", "outcome": null, "process": "upgrade", "version": 1, "startedAt": "2026-12-04T00:36:43.205Z", "startedBy": "a_upgrade", "updatedAt": "2026-12-04T00:36:43.205Z"}, "body": "\\n# Upgrade\\n\\nA run of every state, written by an earlier Baton.\\n", "data": {"steps": {}, "inputs": {"ref": "done"}}, "steps": [{"id": "work", "kind": "agent", "state": "ready"}, {"id": "review", "kind": "approve", "state": null}, {"id": "paid", "kind": "wait_for", "state": null}, {"id": "done", "kind": "finish", "state": null}], "workItems": []}	2026-12-04 00:36:43.265012+00
o_default	upgrade-018	claim	\\x6b759ab2269e219598051b29cce08a560c1caeb439152dcc17c976884f610591	{"body": "\\n# Upgrade\\n\\nA run of every state, written by an earlier Baton.\\n", "data": {"steps": {}, "inputs": {"ref": "done"}}, "mode": "live", "step": {"id": "work", "next": null, "output": {"note": "string"}, "evidence": null, "instructions": "Note the reference."}, "token": "AQlvX2RlZmF1bHQWcl8zY2EzZDg5ZGFlZWVlOTA0OTIzOAR3b3JrC3VwZ3JhZGUtMDE4oxLV0e4YNEw5fXVq_TLB1E1jUUCcuONiB37fyo39zWM", "handoff": null, "expiresAt": "2036-12-01T00:36:43.294Z"}	2026-12-04 00:36:43.312558+00
o_default	upgrade-019	submit	\\x77f5ca6526ab498beecd4fd384349f19469fdf25a620d71c05bf804d7449dc74	{"run": {"id": "r_3ca3d89daeeee9049238", "mode": "live", "ended": null, "state": "waiting", "outcome": null, "process": "upgrade", "version": 1, "startedAt": "2026-12-04T00:36:43.205Z", "startedBy": "a_upgrade", "updatedAt": "2026-12-04T00:36:43.320Z"}, "body": "\\n# Upgrade\\n\\nA run of every state, written by an earlier Baton.\\n", "data": {"steps": {"work": {"at": "2026-12-04T00:36:43.320Z", "by": "a_upgrade", "output": {"note": "done"}, "history": [], "summary": "Noted done."}}, "inputs": {"ref": "done"}}, "steps": [{"id": "work", "kind": "agent", "state": "done"}, {"id": "review", "kind": "approve", "state": "waiting"}, {"id": "paid", "kind": "wait_for", "state": null}, {"id": "done", "kind": "finish", "state": null}], "workItems": [{"id": "w_1", "due": null, "kind": "approve", "next": null, "text": "Approve the note.", "decide": {"tool": "decide", "arguments": {"runId": "r_3ca3d89daeeee9049238", "snapshot": "e7ac62fbf54261057a1d9417b85024bd", "requestId": "<new UUID>", "workItemId": "w_1"}, "decisions": ["approved", "rejected", "failed"]}, "output": null, "stepId": "review", "handoff": null, "evidence": null, "snapshot": "e7ac62fbf54261057a1d9417b85024bd", "assignedTo": {"group": "reviewers"}, "escalation": null}]}	2026-12-04 00:36:43.375903+00
o_default	upgrade-020	decide	\\x0724633fc777024a8c8f549138da1b6cd81e02b625bf862f9de458c1b4b3da77	{"run": {"id": "r_3ca3d89daeeee9049238", "mode": "live", "ended": null, "state": "waiting", "outcome": null, "process": "upgrade", "version": 1, "startedAt": "2026-12-04T00:36:43.205Z", "startedBy": "a_upgrade", "updatedAt": "2026-12-04T00:36:43.413Z"}, "body": "\\n# Upgrade\\n\\nA run of every state, written by an earlier Baton.\\n", "data": {"steps": {"work": {"at": "2026-12-04T00:36:43.320Z", "by": "a_upgrade", "output": {"note": "done"}, "history": [], "summary": "Noted done."}, "review": {"at": "2026-12-04T00:36:43.413Z", "by": "pat@example.com", "history": [], "decision": "approved"}}, "inputs": {"ref": "done"}}, "steps": [{"id": "work", "kind": "agent", "state": "done"}, {"id": "review", "kind": "approve", "state": "done"}, {"id": "paid", "kind": "wait_for", "state": "waiting"}, {"id": "done", "kind": "finish", "state": null}], "workItems": []}	2026-12-04 00:36:43.660933+00
o_default	upgrade-021	send_event	\\xdd49c19708c7592524c023128ecaf9c63b431a9587abc7fa4e07a889af933c3d	{"consumedBy": "paid"}	2026-12-04 00:36:43.787422+00
o_default	upgrade-022	start_run	\\x2b8f7d17194dd7bd4b27056c6bd3ac6ed8dac492c467015d809329aacccac0b8	{"run": {"id": "r_a397de9bf3ed5f62946e", "mode": "live", "ended": null, "state": "active", "outcome": null, "process": "upgrade", "version": 1, "startedAt": "2026-12-04T00:36:43.872Z", "startedBy": "a_upgrade", "updatedAt": "2026-12-04T00:36:43.872Z"}, "body": "\\n# Upgrade\\n\\nA run of every state, written by an earlier Baton.\\n", "data": {"steps": {}, "inputs": {"ref": "failed"}}, "steps": [{"id": "work", "kind": "agent", "state": "ready"}, {"id": "review", "kind": "approve", "state": null}, {"id": "paid", "kind": "wait_for", "state": null}, {"id": "done", "kind": "finish", "state": null}], "workItems": []}	2026-12-04 00:36:44.100168+00
o_default	upgrade-023	claim	\\x240a807832fb327e0bed095e9366130f7d32afe5e256a6e7ce288308b8b18dd4	{"body": "\\n# Upgrade\\n\\nA run of every state, written by an earlier Baton.\\n", "data": {"steps": {}, "inputs": {"ref": "failed"}}, "mode": "live", "step": {"id": "work", "next": null, "output": {"note": "string"}, "evidence": null, "instructions": "Note the reference."}, "token": "AQlvX2RlZmF1bHQWcl9hMzk3ZGU5YmYzZWQ1ZjYyOTQ2ZQR3b3JrC3VwZ3JhZGUtMDIzrK47M3ZrZUqOW4Biu3MQdd7rx70S4VzX8-wgJ2OZR3w", "handoff": null, "expiresAt": "2036-12-01T00:36:44.207Z"}	2026-12-04 00:36:44.267759+00
o_default	upgrade-024	submit	\\x8d64a1ee6ac77fa68a2ccd2b930fc6bf66ffa61c703a9e830d8ec11f09a59804	{"run": {"id": "r_a397de9bf3ed5f62946e", "mode": "live", "ended": null, "state": "waiting", "outcome": null, "process": "upgrade", "version": 1, "startedAt": "2026-12-04T00:36:43.872Z", "startedBy": "a_upgrade", "updatedAt": "2026-12-04T00:36:44.272Z"}, "body": "\\n# Upgrade\\n\\nA run of every state, written by an earlier Baton.\\n", "data": {"steps": {"work": {"at": "2026-12-04T00:36:44.272Z", "by": "a_upgrade", "output": {"note": "failed"}, "history": [], "summary": "Noted failed."}}, "inputs": {"ref": "failed"}}, "steps": [{"id": "work", "kind": "agent", "state": "done"}, {"id": "review", "kind": "approve", "state": "waiting"}, {"id": "paid", "kind": "wait_for", "state": null}, {"id": "done", "kind": "finish", "state": null}], "workItems": [{"id": "w_1", "due": null, "kind": "approve", "next": null, "text": "Approve the note.", "decide": {"tool": "decide", "arguments": {"runId": "r_a397de9bf3ed5f62946e", "snapshot": "1b8d71d915b2dcb683e6f4b35ccb3f74", "requestId": "<new UUID>", "workItemId": "w_1"}, "decisions": ["approved", "rejected", "failed"]}, "output": null, "stepId": "review", "handoff": null, "evidence": null, "snapshot": "1b8d71d915b2dcb683e6f4b35ccb3f74", "assignedTo": {"group": "reviewers"}, "escalation": null}]}	2026-12-04 00:36:44.366017+00
o_default	upgrade-025	decide	\\x79137adee80957b815d12c42827053f1f15d3c018b4a96bebfbe1004e7819e59	{"run": {"id": "r_a397de9bf3ed5f62946e", "mode": "live", "ended": {"at": "2026-12-04T00:36:44.389Z", "by": "pat@example.com", "note": "The reference is not ours."}, "state": "ended", "outcome": "failed", "process": "upgrade", "version": 1, "startedAt": "2026-12-04T00:36:43.872Z", "startedBy": "a_upgrade", "updatedAt": "2026-12-04T00:36:44.389Z"}, "body": "\\n# Upgrade\\n\\nA run of every state, written by an earlier Baton.\\n", "data": {"steps": {"work": {"at": "2026-12-04T00:36:44.272Z", "by": "a_upgrade", "output": {"note": "failed"}, "history": [], "summary": "Noted failed."}, "review": {"at": "2026-12-04T00:36:44.389Z", "by": "pat@example.com", "note": "The reference is not ours.", "history": [], "decision": "failed"}}, "inputs": {"ref": "failed"}}, "steps": [{"id": "work", "kind": "agent", "state": "done"}, {"id": "review", "kind": "approve", "state": "failed"}, {"id": "paid", "kind": "wait_for", "state": null}, {"id": "done", "kind": "finish", "state": null}], "workItems": []}	2026-12-04 00:36:44.437781+00
o_default	upgrade-026	start_run	\\x8810a522331b9f5453d8000c93771a305ed5192022f44399ab45e02b5b06977b	{"run": {"id": "r_2e7545ea369c65252df8", "mode": "live", "ended": null, "state": "active", "outcome": null, "process": "upgrade", "version": 1, "startedAt": "2026-12-04T00:36:44.518Z", "startedBy": "a_upgrade", "updatedAt": "2026-12-04T00:36:44.518Z"}, "body": "\\n# Upgrade\\n\\nA run of every state, written by an earlier Baton.\\n", "data": {"steps": {}, "inputs": {"ref": "rejected"}}, "steps": [{"id": "work", "kind": "agent", "state": "ready"}, {"id": "review", "kind": "approve", "state": null}, {"id": "paid", "kind": "wait_for", "state": null}, {"id": "done", "kind": "finish", "state": null}], "workItems": []}	2026-12-04 00:36:44.578558+00
o_default	upgrade-027	claim	\\x35557999f62f51831d615af55da705be7c6c1e3bcacc9534e0fd500845d68201	{"body": "\\n# Upgrade\\n\\nA run of every state, written by an earlier Baton.\\n", "data": {"steps": {}, "inputs": {"ref": "rejected"}}, "mode": "live", "step": {"id": "work", "next": null, "output": {"note": "string"}, "evidence": null, "instructions": "Note the reference."}, "token": "AQlvX2RlZmF1bHQWcl8yZTc1NDVlYTM2OWM2NTI1MmRmOAR3b3JrC3VwZ3JhZGUtMDI3F_Q5IEH2jwmgnA3J4y4uDYcdjAyzD31vNgsN_3AnhzM", "handoff": null, "expiresAt": "2036-12-01T00:36:44.596Z"}	2026-12-04 00:36:44.753805+00
o_default	upgrade-028	submit	\\x7907ecdf480edaf39205d3fa7a6d1999482356221131cdb1c58b4c60c8fa49df	{"run": {"id": "r_2e7545ea369c65252df8", "mode": "live", "ended": null, "state": "waiting", "outcome": null, "process": "upgrade", "version": 1, "startedAt": "2026-12-04T00:36:44.518Z", "startedBy": "a_upgrade", "updatedAt": "2026-12-04T00:36:44.758Z"}, "body": "\\n# Upgrade\\n\\nA run of every state, written by an earlier Baton.\\n", "data": {"steps": {"work": {"at": "2026-12-04T00:36:44.758Z", "by": "a_upgrade", "output": {"note": "rejected"}, "history": [], "summary": "Noted rejected."}}, "inputs": {"ref": "rejected"}}, "steps": [{"id": "work", "kind": "agent", "state": "done"}, {"id": "review", "kind": "approve", "state": "waiting"}, {"id": "paid", "kind": "wait_for", "state": null}, {"id": "done", "kind": "finish", "state": null}], "workItems": [{"id": "w_1", "due": null, "kind": "approve", "next": null, "text": "Approve the note.", "decide": {"tool": "decide", "arguments": {"runId": "r_2e7545ea369c65252df8", "snapshot": "a051e03150d49b6fc3bcd072a5189953", "requestId": "<new UUID>", "workItemId": "w_1"}, "decisions": ["approved", "rejected", "failed"]}, "output": null, "stepId": "review", "handoff": null, "evidence": null, "snapshot": "a051e03150d49b6fc3bcd072a5189953", "assignedTo": {"group": "reviewers"}, "escalation": null}]}	2026-12-04 00:36:44.940218+00
o_default	upgrade-029	decide	\\xdf41a4997a1409b9682a3bd1f96488de48556e449dd8fa5352bd24ffa871c5d8	{"run": {"id": "r_2e7545ea369c65252df8", "mode": "live", "ended": {"at": "2026-12-04T00:36:44.981Z", "by": "pat@example.com", "note": "Wrong note."}, "state": "ended", "outcome": "rejected", "process": "upgrade", "version": 1, "startedAt": "2026-12-04T00:36:44.518Z", "startedBy": "a_upgrade", "updatedAt": "2026-12-04T00:36:44.981Z"}, "body": "\\n# Upgrade\\n\\nA run of every state, written by an earlier Baton.\\n", "data": {"steps": {"work": {"at": "2026-12-04T00:36:44.758Z", "by": "a_upgrade", "output": {"note": "rejected"}, "history": [], "summary": "Noted rejected."}, "review": {"at": "2026-12-04T00:36:44.981Z", "by": "pat@example.com", "note": "Wrong note.", "history": [], "decision": "rejected"}}, "inputs": {"ref": "rejected"}}, "steps": [{"id": "work", "kind": "agent", "state": "done"}, {"id": "review", "kind": "approve", "state": "done"}, {"id": "paid", "kind": "wait_for", "state": null}, {"id": "done", "kind": "finish", "state": null}], "workItems": []}	2026-12-04 00:36:45.101934+00
o_default	upgrade-030	start_run	\\xbcdb9a6f9f3e48e64144e8d1143d556989a3c9b26e410c76ab35f68320c914e6	{"run": {"id": "r_bbd592daf742eb6574d0", "mode": "live", "ended": null, "state": "active", "outcome": null, "process": "upgrade", "version": 1, "startedAt": "2026-12-04T00:36:45.169Z", "startedBy": "a_upgrade", "updatedAt": "2026-12-04T00:36:45.169Z"}, "body": "\\n# Upgrade\\n\\nA run of every state, written by an earlier Baton.\\n", "data": {"steps": {}, "inputs": {"ref": "cancelled"}}, "steps": [{"id": "work", "kind": "agent", "state": "ready"}, {"id": "review", "kind": "approve", "state": null}, {"id": "paid", "kind": "wait_for", "state": null}, {"id": "done", "kind": "finish", "state": null}], "workItems": []}	2026-12-04 00:36:45.348355+00
o_default	upgrade-031	cancel	\\xaeb6f28257810edfee6f07d571cfbbd85668eba2432a330d0c292b83d86f29a1	{"run": {"id": "r_bbd592daf742eb6574d0", "mode": "live", "ended": {"at": "2026-12-04T00:36:45.708Z", "by": "u_ops", "note": "Started by mistake."}, "state": "cancelled", "outcome": null, "process": "upgrade", "version": 1, "startedAt": "2026-12-04T00:36:45.169Z", "startedBy": "a_upgrade", "updatedAt": "2026-12-04T00:36:45.708Z"}, "body": "\\n# Upgrade\\n\\nA run of every state, written by an earlier Baton.\\n", "data": {"steps": {}, "inputs": {"ref": "cancelled"}}, "steps": [{"id": "work", "kind": "agent", "state": "cancelled"}, {"id": "review", "kind": "approve", "state": null}, {"id": "paid", "kind": "wait_for", "state": null}, {"id": "done", "kind": "finish", "state": null}], "workItems": []}	2026-12-04 00:36:45.952697+00
o_default	upgrade-032	upload	\\xd1edfa945399004bb52ee0aaeb4c9ab4e1edba49ae5cd81995a413b2aab56d5e	{"id": "f_69d27c60c41cf6a1eea7", "bytes": 8, "sha256": "d47cd809b55acbb91f27f68180367d0fdf6997acb09692bd2341fc6c4407da8a"}	2026-12-04 00:36:45.957206+00
\.


--
-- Data for Name: runs; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.runs (org, run_id, process, version, state, outcome, mode, inputs, started_by, started_at, updated_at, seq, final_view) FROM stdin;
o_default	r_6584403bfdc76b85e7ee	upgrade	1	active	\N	live	{"ref": "ready"}	a_upgrade	2026-12-04 00:36:39.875649+00	2026-12-04 00:36:39.875649+00	1	\N
o_default	r_d618ef592b85333128c2	upgrade	1	active	\N	live	{"ref": "claimed"}	a_upgrade	2026-12-04 00:36:40.159947+00	2026-12-04 00:36:40.541403+00	2	\N
o_default	r_96def8dc863d2b8420ed	upgrade	1	waiting	\N	live	{"ref": "escalated"}	a_upgrade	2026-12-04 00:36:40.701324+00	2026-12-04 00:36:40.976321+00	3	\N
o_default	r_cd5962caea0c834b6f8c	upgrade	1	waiting	\N	live	{"ref": "review"}	a_upgrade	2026-12-04 00:36:41.064758+00	2026-12-04 00:36:41.55662+00	5	\N
o_default	r_1f6cd7bfeaab84a87ff9	upgrade	1	waiting	\N	live	{"ref": "waiting"}	a_upgrade	2026-12-04 00:36:41.699681+00	2026-12-04 00:36:42.769767+00	8	\N
o_default	r_e26d4e716f1192caf8b0	upgrade	1	active	\N	live	{"ref": "held"}	a_upgrade	2026-12-04 00:36:42.862778+00	2026-12-04 00:36:42.862778+00	1	\N
o_default	r_3ca3d89daeeee9049238	upgrade	1	ended	done	live	{"ref": "done"}	a_upgrade	2026-12-04 00:36:43.205814+00	2026-12-04 00:36:43.708387+00	12	{"run":{"id":"r_3ca3d89daeeee9049238","process":"upgrade","version":1,"mode":"live","state":"ended","outcome":"done","ended":{"by":"server","at":"2026-12-04T00:36:43.708Z","note":null},"startedBy":"a_upgrade","startedAt":"2026-12-04T00:36:43.205Z","updatedAt":"2026-12-04T00:36:43.708Z"},"data":{"inputs":{"ref":"done"},"steps":{"paid":{"output":{"amount":12.5},"by":"a_upgrade","at":"2026-12-04T00:36:43.708Z","history":[]},"review":{"decision":"approved","by":"pat@example.com","at":"2026-12-04T00:36:43.413Z","history":[]},"work":{"output":{"note":"done"},"summary":"Noted done.","by":"a_upgrade","at":"2026-12-04T00:36:43.320Z","history":[]}}},"steps":[{"id":"work","kind":"agent","state":"done"},{"id":"review","kind":"approve","state":"done"},{"id":"paid","kind":"wait_for","state":"done"},{"id":"done","kind":"finish","state":"done"}],"workItems":[],"body":"\\n# Upgrade\\n\\nA run of every state, written by an earlier Baton.\\n"}
o_default	r_a397de9bf3ed5f62946e	upgrade	1	ended	failed	live	{"ref": "failed"}	a_upgrade	2026-12-04 00:36:43.872274+00	2026-12-04 00:36:44.389086+00	6	{"run":{"id":"r_a397de9bf3ed5f62946e","process":"upgrade","version":1,"mode":"live","state":"ended","outcome":"failed","ended":{"by":"pat@example.com","at":"2026-12-04T00:36:44.389Z","note":"The reference is not ours."},"startedBy":"a_upgrade","startedAt":"2026-12-04T00:36:43.872Z","updatedAt":"2026-12-04T00:36:44.389Z"},"data":{"inputs":{"ref":"failed"},"steps":{"review":{"decision":"failed","note":"The reference is not ours.","by":"pat@example.com","at":"2026-12-04T00:36:44.389Z","history":[]},"work":{"output":{"note":"failed"},"summary":"Noted failed.","by":"a_upgrade","at":"2026-12-04T00:36:44.272Z","history":[]}}},"steps":[{"id":"work","kind":"agent","state":"done"},{"id":"review","kind":"approve","state":"failed"},{"id":"paid","kind":"wait_for","state":null},{"id":"done","kind":"finish","state":null}],"workItems":[],"body":"\\n# Upgrade\\n\\nA run of every state, written by an earlier Baton.\\n"}
o_default	r_2e7545ea369c65252df8	upgrade	1	ended	rejected	live	{"ref": "rejected"}	a_upgrade	2026-12-04 00:36:44.518204+00	2026-12-04 00:36:44.981092+00	7	{"run":{"id":"r_2e7545ea369c65252df8","process":"upgrade","version":1,"mode":"live","state":"ended","outcome":"rejected","ended":{"by":"pat@example.com","at":"2026-12-04T00:36:44.981Z","note":"Wrong note."},"startedBy":"a_upgrade","startedAt":"2026-12-04T00:36:44.518Z","updatedAt":"2026-12-04T00:36:44.981Z"},"data":{"inputs":{"ref":"rejected"},"steps":{"review":{"decision":"rejected","note":"Wrong note.","by":"pat@example.com","at":"2026-12-04T00:36:44.981Z","history":[]},"work":{"output":{"note":"rejected"},"summary":"Noted rejected.","by":"a_upgrade","at":"2026-12-04T00:36:44.758Z","history":[]}}},"steps":[{"id":"work","kind":"agent","state":"done"},{"id":"review","kind":"approve","state":"done"},{"id":"paid","kind":"wait_for","state":null},{"id":"done","kind":"finish","state":null}],"workItems":[],"body":"\\n# Upgrade\\n\\nA run of every state, written by an earlier Baton.\\n"}
o_default	r_bbd592daf742eb6574d0	upgrade	1	cancelled	\N	live	{"ref": "cancelled"}	a_upgrade	2026-12-04 00:36:45.169337+00	2026-12-04 00:36:45.708792+00	2	{"run":{"id":"r_bbd592daf742eb6574d0","process":"upgrade","version":1,"mode":"live","state":"cancelled","outcome":null,"ended":{"by":"u_ops","at":"2026-12-04T00:36:45.708Z","note":"Started by mistake."},"startedBy":"a_upgrade","startedAt":"2026-12-04T00:36:45.169Z","updatedAt":"2026-12-04T00:36:45.708Z"},"data":{"inputs":{"ref":"cancelled"},"steps":{}},"steps":[{"id":"work","kind":"agent","state":"cancelled"},{"id":"review","kind":"approve","state":null},{"id":"paid","kind":"wait_for","state":null},{"id":"done","kind":"finish","state":null}],"workItems":[],"body":"\\n# Upgrade\\n\\nA run of every state, written by an earlier Baton.\\n"}
\.


--
-- Data for Name: schema_migrations; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.schema_migrations (version, name, applied_at) FROM stdin;
1	001_read_model.sql	2026-12-04 00:36:32.501963+00
2	002_gateway.sql	2026-12-04 00:36:32.501963+00
3	003_definition_order.sql	2026-12-04 00:36:32.501963+00
4	004_final_view.sql	2026-12-04 00:36:32.501963+00
5	005_tools.sql	2026-12-04 00:36:32.501963+00
\.


--
-- Data for Name: tool_policies; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.tool_policies (org, server, tool, "position", policy, idempotency, approvers, approval_sla_seconds) FROM stdin;
\.


--
-- Data for Name: tool_servers; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.tool_servers (org, name, "position", url, test_url, credentials, timeout_ms, listing, listed_at, updated_at) FROM stdin;
\.


--
-- Data for Name: work; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.work (org, run_id, step_id, work_item_id, kind, process, version, mode, ready_since, due, overdue, assigned_group, assigned_person, handoff, item) FROM stdin;
o_default	r_6584403bfdc76b85e7ee	work	\N	agent	upgrade	1	live	2026-12-04 00:36:39.875649+00	\N	f	\N	\N	\N	\N
o_default	r_96def8dc863d2b8420ed	work	w_1	escalation	upgrade	1	live	2026-12-04 00:36:40.976321+00	\N	f	operators	\N	\N	{"id": "w_1", "due": null, "kind": "agent", "next": null, "text": "Note the reference.", "decide": {"tool": "decide", "arguments": {"runId": "r_96def8dc863d2b8420ed", "snapshot": "aee0c4c326fd9c1987e393df0b32c4bc", "requestId": "<new UUID>", "workItemId": "w_1"}, "decisions": ["returned", "completed", "failed"]}, "output": {"note": "string"}, "stepId": "work", "handoff": null, "evidence": null, "snapshot": "aee0c4c326fd9c1987e393df0b32c4bc", "assignedTo": {"group": "operators"}, "escalation": {"at": "2026-12-04T00:36:40.976Z", "by": "a_upgrade", "note": "I cannot read the reference."}}
o_default	r_cd5962caea0c834b6f8c	review	w_1	approve	upgrade	1	live	2026-12-04 00:36:41.55662+00	\N	f	reviewers	\N	\N	{"id": "w_1", "due": null, "kind": "approve", "next": null, "text": "Approve the note.", "decide": {"tool": "decide", "arguments": {"runId": "r_cd5962caea0c834b6f8c", "snapshot": "6797bc3ba7946d6f83494bb49c2bfbe1", "requestId": "<new UUID>", "workItemId": "w_1"}, "decisions": ["approved", "rejected", "failed"]}, "output": null, "stepId": "review", "handoff": null, "evidence": null, "snapshot": "6797bc3ba7946d6f83494bb49c2bfbe1", "assignedTo": {"group": "reviewers"}, "escalation": null}
o_default	r_e26d4e716f1192caf8b0	work	\N	agent	upgrade	1	live	2026-12-04 00:36:42.862778+00	\N	f	\N	\N	\N	\N
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

\unrestrict TeRcEwgevYGZ1lAFvu9ln5DBj0H053XqIwAa4waKA9fdRXBDBPQtvkOMFsCoLoN

