--
-- PostgreSQL database dump
--

\restrict wMQ4pLWiWTW2rIki3rmzFVWfZSKzvSTDcVutc6PqIbwi38MhwatAlRY49iMvvYE

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
-- Name: btree_gin; Type: EXTENSION; Schema: -; Owner: -
--

CREATE EXTENSION IF NOT EXISTS btree_gin WITH SCHEMA public;


--
-- Name: EXTENSION btree_gin; Type: COMMENT; Schema: -; Owner: -
--

COMMENT ON EXTENSION btree_gin IS 'support for indexing common datatypes in GIN';


--
-- Name: convert_ts(character varying); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.convert_ts(s character varying) RETURNS timestamp without time zone
    LANGUAGE plpgsql IMMUTABLE STRICT
    AS $$
BEGIN
  RETURN s::timestamptz at time zone 'UTC';
END
$$;


SET default_tablespace = '';

SET default_table_access_method = heap;

--
-- Name: executions_visibility; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.executions_visibility (
    namespace_id character(64) NOT NULL,
    run_id character(64) NOT NULL,
    _version bigint DEFAULT 0 NOT NULL,
    start_time timestamp without time zone NOT NULL,
    execution_time timestamp without time zone NOT NULL,
    workflow_id character varying(255) NOT NULL,
    workflow_type_name character varying(255) NOT NULL,
    status integer NOT NULL,
    close_time timestamp without time zone,
    history_length bigint,
    history_size_bytes bigint,
    execution_duration bigint,
    state_transition_count bigint,
    memo bytea,
    encoding character varying(64) NOT NULL,
    task_queue character varying(255) DEFAULT ''::character varying NOT NULL,
    search_attributes jsonb,
    parent_workflow_id character varying(255),
    parent_run_id character varying(255),
    root_workflow_id character varying(255) DEFAULT ''::character varying NOT NULL,
    root_run_id character varying(255) DEFAULT ''::character varying NOT NULL,
    temporalchangeversion jsonb GENERATED ALWAYS AS ((search_attributes -> 'TemporalChangeVersion'::text)) STORED,
    binarychecksums jsonb GENERATED ALWAYS AS ((search_attributes -> 'BinaryChecksums'::text)) STORED,
    batcheruser character varying(255) GENERATED ALWAYS AS ((search_attributes ->> 'BatcherUser'::text)) STORED,
    temporalscheduledstarttime timestamp without time zone GENERATED ALWAYS AS (public.convert_ts(((search_attributes ->> 'TemporalScheduledStartTime'::text))::character varying)) STORED,
    temporalscheduledbyid character varying(255) GENERATED ALWAYS AS ((search_attributes ->> 'TemporalScheduledById'::text)) STORED,
    temporalschedulepaused boolean GENERATED ALWAYS AS (((search_attributes -> 'TemporalSchedulePaused'::text))::boolean) STORED,
    temporalnamespacedivision character varying(255) GENERATED ALWAYS AS ((search_attributes ->> 'TemporalNamespaceDivision'::text)) STORED,
    buildids jsonb GENERATED ALWAYS AS ((search_attributes -> 'BuildIds'::text)) STORED,
    temporalpauseinfo jsonb GENERATED ALWAYS AS ((search_attributes -> 'TemporalPauseInfo'::text)) STORED,
    temporalreportedproblems jsonb GENERATED ALWAYS AS ((search_attributes -> 'TemporalReportedProblems'::text)) STORED,
    temporalworkerdeploymentversion character varying(255) GENERATED ALWAYS AS ((search_attributes ->> 'TemporalWorkerDeploymentVersion'::text)) STORED,
    temporalworkflowversioningbehavior character varying(255) GENERATED ALWAYS AS ((search_attributes ->> 'TemporalWorkflowVersioningBehavior'::text)) STORED,
    temporalworkerdeployment character varying(255) GENERATED ALWAYS AS ((search_attributes ->> 'TemporalWorkerDeployment'::text)) STORED,
    temporalusedworkerdeploymentversions jsonb GENERATED ALWAYS AS ((search_attributes -> 'TemporalUsedWorkerDeploymentVersions'::text)) STORED,
    temporalexternalpayloadsizebytes bigint GENERATED ALWAYS AS (((search_attributes -> 'TemporalExternalPayloadSizeBytes'::text))::bigint) STORED,
    temporalexternalpayloadcount bigint GENERATED ALWAYS AS (((search_attributes -> 'TemporalExternalPayloadCount'::text))::bigint) STORED,
    bool01 boolean GENERATED ALWAYS AS (((search_attributes -> 'Bool01'::text))::boolean) STORED,
    bool02 boolean GENERATED ALWAYS AS (((search_attributes -> 'Bool02'::text))::boolean) STORED,
    bool03 boolean GENERATED ALWAYS AS (((search_attributes -> 'Bool03'::text))::boolean) STORED,
    datetime01 timestamp without time zone GENERATED ALWAYS AS (public.convert_ts(((search_attributes ->> 'Datetime01'::text))::character varying)) STORED,
    datetime02 timestamp without time zone GENERATED ALWAYS AS (public.convert_ts(((search_attributes ->> 'Datetime02'::text))::character varying)) STORED,
    datetime03 timestamp without time zone GENERATED ALWAYS AS (public.convert_ts(((search_attributes ->> 'Datetime03'::text))::character varying)) STORED,
    double01 numeric(20,5) GENERATED ALWAYS AS (((search_attributes -> 'Double01'::text))::numeric) STORED,
    double02 numeric(20,5) GENERATED ALWAYS AS (((search_attributes -> 'Double02'::text))::numeric) STORED,
    double03 numeric(20,5) GENERATED ALWAYS AS (((search_attributes -> 'Double03'::text))::numeric) STORED,
    int01 bigint GENERATED ALWAYS AS (((search_attributes -> 'Int01'::text))::bigint) STORED,
    int02 bigint GENERATED ALWAYS AS (((search_attributes -> 'Int02'::text))::bigint) STORED,
    int03 bigint GENERATED ALWAYS AS (((search_attributes -> 'Int03'::text))::bigint) STORED,
    keyword01 character varying(255) GENERATED ALWAYS AS ((search_attributes ->> 'Keyword01'::text)) STORED,
    keyword02 character varying(255) GENERATED ALWAYS AS ((search_attributes ->> 'Keyword02'::text)) STORED,
    keyword03 character varying(255) GENERATED ALWAYS AS ((search_attributes ->> 'Keyword03'::text)) STORED,
    keyword04 character varying(255) GENERATED ALWAYS AS ((search_attributes ->> 'Keyword04'::text)) STORED,
    keyword05 character varying(255) GENERATED ALWAYS AS ((search_attributes ->> 'Keyword05'::text)) STORED,
    keyword06 character varying(255) GENERATED ALWAYS AS ((search_attributes ->> 'Keyword06'::text)) STORED,
    keyword07 character varying(255) GENERATED ALWAYS AS ((search_attributes ->> 'Keyword07'::text)) STORED,
    keyword08 character varying(255) GENERATED ALWAYS AS ((search_attributes ->> 'Keyword08'::text)) STORED,
    keyword09 character varying(255) GENERATED ALWAYS AS ((search_attributes ->> 'Keyword09'::text)) STORED,
    keyword10 character varying(255) GENERATED ALWAYS AS ((search_attributes ->> 'Keyword10'::text)) STORED,
    text01 tsvector GENERATED ALWAYS AS (((search_attributes ->> 'Text01'::text))::tsvector) STORED,
    text02 tsvector GENERATED ALWAYS AS (((search_attributes ->> 'Text02'::text))::tsvector) STORED,
    text03 tsvector GENERATED ALWAYS AS (((search_attributes ->> 'Text03'::text))::tsvector) STORED,
    keywordlist01 jsonb GENERATED ALWAYS AS ((search_attributes -> 'KeywordList01'::text)) STORED,
    keywordlist02 jsonb GENERATED ALWAYS AS ((search_attributes -> 'KeywordList02'::text)) STORED,
    keywordlist03 jsonb GENERATED ALWAYS AS ((search_attributes -> 'KeywordList03'::text)) STORED,
    temporalbool01 boolean GENERATED ALWAYS AS (((search_attributes -> 'TemporalBool01'::text))::boolean) STORED,
    temporalbool02 boolean GENERATED ALWAYS AS (((search_attributes -> 'TemporalBool02'::text))::boolean) STORED,
    temporaldatetime01 timestamp without time zone GENERATED ALWAYS AS (public.convert_ts(((search_attributes ->> 'TemporalDatetime01'::text))::character varying)) STORED,
    temporaldatetime02 timestamp without time zone GENERATED ALWAYS AS (public.convert_ts(((search_attributes ->> 'TemporalDatetime02'::text))::character varying)) STORED,
    temporaldouble01 numeric(20,5) GENERATED ALWAYS AS (((search_attributes -> 'TemporalDouble01'::text))::numeric) STORED,
    temporaldouble02 numeric(20,5) GENERATED ALWAYS AS (((search_attributes -> 'TemporalDouble02'::text))::numeric) STORED,
    temporalint01 bigint GENERATED ALWAYS AS (((search_attributes -> 'TemporalInt01'::text))::bigint) STORED,
    temporalint02 bigint GENERATED ALWAYS AS (((search_attributes -> 'TemporalInt02'::text))::bigint) STORED,
    temporalkeyword01 character varying(255) GENERATED ALWAYS AS ((search_attributes ->> 'TemporalKeyword01'::text)) STORED,
    temporalkeyword02 character varying(255) GENERATED ALWAYS AS ((search_attributes ->> 'TemporalKeyword02'::text)) STORED,
    temporalkeyword03 character varying(255) GENERATED ALWAYS AS ((search_attributes ->> 'TemporalKeyword03'::text)) STORED,
    temporalkeyword04 character varying(255) GENERATED ALWAYS AS ((search_attributes ->> 'TemporalKeyword04'::text)) STORED,
    temporallowcardinalitykeyword01 character varying(255) GENERATED ALWAYS AS ((search_attributes ->> 'TemporalLowCardinalityKeyword01'::text)) STORED,
    temporalkeywordlist01 jsonb GENERATED ALWAYS AS ((search_attributes -> 'TemporalKeywordList01'::text)) STORED,
    temporalkeywordlist02 jsonb GENERATED ALWAYS AS ((search_attributes -> 'TemporalKeywordList02'::text)) STORED
);


--
-- Name: schema_update_history; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.schema_update_history (
    version_partition integer NOT NULL,
    year integer NOT NULL,
    month integer NOT NULL,
    update_time timestamp without time zone NOT NULL,
    description character varying(255),
    manifest_md5 character varying(64),
    new_version character varying(64),
    old_version character varying(64)
);


--
-- Name: schema_version; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.schema_version (
    version_partition integer NOT NULL,
    db_name character varying(255) NOT NULL,
    creation_time timestamp without time zone,
    curr_version character varying(64),
    min_compatible_version character varying(64)
);


--
-- Data for Name: executions_visibility; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.executions_visibility (namespace_id, run_id, _version, start_time, execution_time, workflow_id, workflow_type_name, status, close_time, history_length, history_size_bytes, execution_duration, state_transition_count, memo, encoding, task_queue, search_attributes, parent_workflow_id, parent_run_id, root_workflow_id, root_run_id) FROM stdin;
32049b68-7872-4094-8e63-d0dd59896a83                            	01a23e72-73ea-7155-a125-7ea71c7b6531                            	1048578	2026-12-04 00:26:57.898103	2026-12-04 12:00:00.898103	temporal-sys-history-scanner	temporal-sys-history-scanner-workflow	1	\N	\N	\N	\N	\N	\\x	Proto3	temporal-sys-history-scanner-taskqueue-0	\N	\N	\N	temporal-sys-history-scanner	01a23e72-73ea-7155-a125-7ea71c7b6531
32049b68-7872-4094-8e63-d0dd59896a83                            	01a23e72-7407-7465-b516-294101d18c15                            	1048585	2026-12-04 00:26:57.927289	2026-12-04 12:00:00.927289	temporal-sys-tq-scanner	temporal-sys-tq-scanner-workflow	1	\N	\N	\N	\N	\N	\\x	Proto3	temporal-sys-tq-scanner-taskqueue-0	\N	\N	\N	temporal-sys-tq-scanner	01a23e72-7407-7465-b516-294101d18c15
01a23e72-69a8-711f-b449-f434a5cdbb38                            	01a23e72-8752-7664-b008-caaec13d8ef9                            	1048595	2026-12-04 00:27:02.86642	2026-12-04 00:27:02.86642	r_6584403bfdc76b85e7ee	ProcessRun	1	\N	\N	\N	\N	\N	\\x	Proto3	baton	{"Int03": 1, "BuildIds": ["unversioned", "unversioned:9c677d091de7e00d5bbd07cab002343e"], "Keyword01": "upgrade", "Keyword02": "active", "Keyword04": "live", "TemporalChangeVersion": ["deadline-timer-1", "run-records-requests-1"]}	\N	\N	r_6584403bfdc76b85e7ee	01a23e72-8752-7664-b008-caaec13d8ef9
01a23e72-69a8-711f-b449-f434a5cdbb38                            	01a23e72-89c2-7057-a994-0799bc0ba7f7                            	1048606	2026-12-04 00:27:03.490023	2026-12-04 00:27:03.490023	r_d618ef592b85333128c2	ProcessRun	1	\N	\N	\N	\N	\N	\\x	Proto3	baton	{"Int03": 1, "BuildIds": ["unversioned", "unversioned:9c677d091de7e00d5bbd07cab002343e"], "Keyword01": "upgrade", "Keyword02": "active", "Keyword04": "live", "TemporalChangeVersion": ["deadline-timer-1", "run-records-requests-1"]}	\N	\N	r_d618ef592b85333128c2	01a23e72-89c2-7057-a994-0799bc0ba7f7
01a23e72-69a8-711f-b449-f434a5cdbb38                            	01a23e72-8a46-71dc-b20f-935ecd4a7efd                            	1048686	2026-12-04 00:27:03.622122	2026-12-04 00:27:03.622122	r_96def8dc863d2b8420ed	ProcessRun	1	\N	\N	\N	\N	\N	\\x	Proto3	baton	{"Int03": 1, "BuildIds": ["unversioned", "unversioned:9c677d091de7e00d5bbd07cab002343e"], "Keyword01": "upgrade", "Keyword02": "waiting", "Keyword04": "live", "TemporalChangeVersion": ["deadline-timer-1", "run-records-requests-1"]}	\N	\N	r_96def8dc863d2b8420ed	01a23e72-8a46-71dc-b20f-935ecd4a7efd
01a23e72-69a8-711f-b449-f434a5cdbb38                            	01a23e72-8afa-7bed-9be1-3c8cd62d7f04                            	1048625	2026-12-04 00:27:03.802782	2026-12-04 00:27:03.802782	r_cd5962caea0c834b6f8c	ProcessRun	1	\N	\N	\N	\N	\N	\\x	Proto3	baton	{"Int03": 1, "BuildIds": ["unversioned", "unversioned:9c677d091de7e00d5bbd07cab002343e"], "Keyword01": "upgrade", "Keyword02": "waiting", "Keyword04": "live", "TemporalChangeVersion": ["deadline-timer-1", "run-records-requests-1"]}	\N	\N	r_cd5962caea0c834b6f8c	01a23e72-8afa-7bed-9be1-3c8cd62d7f04
01a23e72-69a8-711f-b449-f434a5cdbb38                            	01a23e72-8c8f-7987-8824-1358ac7f9734                            	1048646	2026-12-04 00:27:04.207625	2026-12-04 00:27:04.207625	r_1f6cd7bfeaab84a87ff9	ProcessRun	1	\N	\N	\N	\N	\N	\\x	Proto3	baton	{"Int03": 1, "BuildIds": ["unversioned", "unversioned:9c677d091de7e00d5bbd07cab002343e"], "Keyword01": "upgrade", "Keyword02": "waiting", "Keyword04": "live", "TemporalChangeVersion": ["deadline-timer-1", "run-records-requests-1"]}	\N	\N	r_1f6cd7bfeaab84a87ff9	01a23e72-8c8f-7987-8824-1358ac7f9734
01a23e72-69a8-711f-b449-f434a5cdbb38                            	01a23e72-8f9f-775a-9139-9e3aaa7eeb94                            	1048706	2026-12-04 00:27:04.991483	2026-12-04 00:27:04.991483	r_e26d4e716f1192caf8b0	ProcessRun	1	\N	\N	\N	\N	\N	\\x	Proto3	baton	{"Int03": 1, "BuildIds": ["unversioned", "unversioned:9c677d091de7e00d5bbd07cab002343e"], "Keyword01": "upgrade", "Keyword02": "active", "Keyword04": "live", "TemporalChangeVersion": ["deadline-timer-1", "run-records-requests-1"]}	\N	\N	r_e26d4e716f1192caf8b0	01a23e72-8f9f-775a-9139-9e3aaa7eeb94
01a23e72-69a8-711f-b449-f434a5cdbb38                            	01a23e72-90c2-7984-bdcb-8257dbe623b0                            	1048654	2026-12-04 00:27:05.282624	2026-12-04 00:27:05.282624	r_3ca3d89daeeee9049238	ProcessRun	2	2026-12-04 00:27:05.396953	41	11791	114328867	7	\\x	Proto3	baton	{"Int03": 1, "BuildIds": ["unversioned", "unversioned:9c677d091de7e00d5bbd07cab002343e"], "Keyword01": "upgrade", "Keyword02": "ended", "Keyword04": "live", "Keyword07": "done", "TemporalChangeVersion": ["deadline-timer-1", "run-records-requests-1"]}	\N	\N	r_3ca3d89daeeee9049238	01a23e72-90c2-7984-bdcb-8257dbe623b0
01a23e72-69a8-711f-b449-f434a5cdbb38                            	01a23e72-9140-7d77-afcd-e198cb82fdd9                            	1048723	2026-12-04 00:27:05.408883	2026-12-04 00:27:05.408883	r_a397de9bf3ed5f62946e	ProcessRun	2	2026-12-04 00:27:05.558334	35	10967	149450903	6	\\x	Proto3	baton	{"Int03": 1, "BuildIds": ["unversioned", "unversioned:9c677d091de7e00d5bbd07cab002343e"], "Keyword01": "upgrade", "Keyword02": "ended", "Keyword04": "live", "Keyword07": "failed", "TemporalChangeVersion": ["deadline-timer-1", "run-records-requests-1"]}	\N	\N	r_a397de9bf3ed5f62946e	01a23e72-9140-7d77-afcd-e198cb82fdd9
01a23e72-69a8-711f-b449-f434a5cdbb38                            	01a23e72-91de-7596-9fee-8d2cccb6b21a                            	1048790	2026-12-04 00:27:05.566366	2026-12-04 00:27:05.566366	r_2e7545ea369c65252df8	ProcessRun	2	2026-12-04 00:27:05.626992	35	10939	60625273	6	\\x	Proto3	baton	{"Int03": 1, "BuildIds": ["unversioned", "unversioned:9c677d091de7e00d5bbd07cab002343e"], "Keyword01": "upgrade", "Keyword02": "ended", "Keyword04": "live", "Keyword07": "rejected", "TemporalChangeVersion": ["deadline-timer-1", "run-records-requests-1"]}	\N	\N	r_2e7545ea369c65252df8	01a23e72-91de-7596-9fee-8d2cccb6b21a
01a23e72-69a8-711f-b449-f434a5cdbb38                            	01a23e72-9223-7c47-8b80-b9eeece33526                            	1048755	2026-12-04 00:27:05.635805	2026-12-04 00:27:05.635805	r_bbd592daf742eb6574d0	ProcessRun	4	2026-12-04 00:27:06.889864	20	6348	1254059003	4	\\x	Proto3	baton	{"Int03": 1, "BuildIds": ["unversioned", "unversioned:9c677d091de7e00d5bbd07cab002343e"], "Keyword01": "upgrade", "Keyword02": "cancelled", "Keyword04": "live", "TemporalChangeVersion": ["deadline-timer-1", "run-records-requests-1"]}	\N	\N	r_bbd592daf742eb6574d0	01a23e72-9223-7c47-8b80-b9eeece33526
01a23e72-69a8-711f-b449-f434a5cdbb38                            	01a23e72-97f4-781d-8d7c-ffc2c7f0c6e3                            	1048842	2026-12-04 00:27:07.124532	2026-12-04 00:27:07.124532	r_9852c8a2f34528f421f2	ProcessRun	1	\N	\N	\N	\N	\N	\\x	Proto3	baton	{"Int03": 1, "BuildIds": ["unversioned", "unversioned:9c677d091de7e00d5bbd07cab002343e"], "Keyword01": "upgrade", "Keyword02": "waiting", "Keyword04": "live", "TemporalChangeVersion": ["deadline-timer-1", "run-records-requests-1"]}	\N	\N	r_9852c8a2f34528f421f2	01a23e72-97f4-781d-8d7c-ffc2c7f0c6e3
01a23e72-69a8-711f-b449-f434a5cdbb38                            	01a23e72-9727-7817-93ad-e83dd5495f98                            	1048674	2026-12-04 00:27:06.919531	2026-12-04 00:27:06.919531	r_331ffcd851fd543b47d6	ProcessRun	1	\N	\N	\N	\N	\N	\\x	Proto3	baton	{"Int03": 1, "BuildIds": ["unversioned", "unversioned:9c677d091de7e00d5bbd07cab002343e"], "Keyword01": "upgrade", "Keyword02": "active", "Keyword04": "live", "TemporalChangeVersion": ["deadline-timer-1", "run-records-requests-1"]}	\N	\N	r_331ffcd851fd543b47d6	01a23e72-9727-7817-93ad-e83dd5495f98
\.


--
-- Data for Name: schema_update_history; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.schema_update_history (version_partition, year, month, update_time, description, manifest_md5, new_version, old_version) FROM stdin;
0	2026	12	2026-12-04 00:26:55.268559	initial version		1.14	0
\.


--
-- Data for Name: schema_version; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.schema_version (version_partition, db_name, creation_time, curr_version, min_compatible_version) FROM stdin;
0	temporal_visibility	2026-12-04 00:26:55.267674	1.14	1.14
\.


--
-- Name: executions_visibility executions_visibility_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.executions_visibility
    ADD CONSTRAINT executions_visibility_pkey PRIMARY KEY (namespace_id, run_id);


--
-- Name: schema_update_history schema_update_history_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.schema_update_history
    ADD CONSTRAINT schema_update_history_pkey PRIMARY KEY (version_partition, year, month, update_time);


--
-- Name: schema_version schema_version_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.schema_version
    ADD CONSTRAINT schema_version_pkey PRIMARY KEY (version_partition, db_name);


--
-- Name: by_batcher_user; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX by_batcher_user ON public.executions_visibility USING btree (namespace_id, batcheruser, COALESCE(close_time, '9999-12-31 23:59:59'::timestamp without time zone) DESC, start_time DESC, run_id);


--
-- Name: by_binary_checksums; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX by_binary_checksums ON public.executions_visibility USING gin (namespace_id, binarychecksums jsonb_path_ops);


--
-- Name: by_bool_01; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX by_bool_01 ON public.executions_visibility USING btree (namespace_id, bool01, COALESCE(close_time, '9999-12-31 23:59:59'::timestamp without time zone) DESC, start_time DESC, run_id);


--
-- Name: by_bool_02; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX by_bool_02 ON public.executions_visibility USING btree (namespace_id, bool02, COALESCE(close_time, '9999-12-31 23:59:59'::timestamp without time zone) DESC, start_time DESC, run_id);


--
-- Name: by_bool_03; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX by_bool_03 ON public.executions_visibility USING btree (namespace_id, bool03, COALESCE(close_time, '9999-12-31 23:59:59'::timestamp without time zone) DESC, start_time DESC, run_id);


--
-- Name: by_build_ids; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX by_build_ids ON public.executions_visibility USING gin (namespace_id, buildids jsonb_path_ops);


--
-- Name: by_datetime_01; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX by_datetime_01 ON public.executions_visibility USING btree (namespace_id, datetime01, COALESCE(close_time, '9999-12-31 23:59:59'::timestamp without time zone) DESC, start_time DESC, run_id);


--
-- Name: by_datetime_02; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX by_datetime_02 ON public.executions_visibility USING btree (namespace_id, datetime02, COALESCE(close_time, '9999-12-31 23:59:59'::timestamp without time zone) DESC, start_time DESC, run_id);


--
-- Name: by_datetime_03; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX by_datetime_03 ON public.executions_visibility USING btree (namespace_id, datetime03, COALESCE(close_time, '9999-12-31 23:59:59'::timestamp without time zone) DESC, start_time DESC, run_id);


--
-- Name: by_double_01; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX by_double_01 ON public.executions_visibility USING btree (namespace_id, double01, COALESCE(close_time, '9999-12-31 23:59:59'::timestamp without time zone) DESC, start_time DESC, run_id);


--
-- Name: by_double_02; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX by_double_02 ON public.executions_visibility USING btree (namespace_id, double02, COALESCE(close_time, '9999-12-31 23:59:59'::timestamp without time zone) DESC, start_time DESC, run_id);


--
-- Name: by_double_03; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX by_double_03 ON public.executions_visibility USING btree (namespace_id, double03, COALESCE(close_time, '9999-12-31 23:59:59'::timestamp without time zone) DESC, start_time DESC, run_id);


--
-- Name: by_execution_duration; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX by_execution_duration ON public.executions_visibility USING btree (namespace_id, execution_duration, COALESCE(close_time, '9999-12-31 23:59:59'::timestamp without time zone) DESC, start_time DESC, run_id);


--
-- Name: by_execution_time; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX by_execution_time ON public.executions_visibility USING btree (namespace_id, execution_time, COALESCE(close_time, '9999-12-31 23:59:59'::timestamp without time zone) DESC, start_time DESC, run_id);


--
-- Name: by_history_length; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX by_history_length ON public.executions_visibility USING btree (namespace_id, history_length, COALESCE(close_time, '9999-12-31 23:59:59'::timestamp without time zone) DESC, start_time DESC, run_id);


--
-- Name: by_history_size_bytes; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX by_history_size_bytes ON public.executions_visibility USING btree (namespace_id, history_size_bytes, COALESCE(close_time, '9999-12-31 23:59:59'::timestamp without time zone) DESC, start_time DESC, run_id);


--
-- Name: by_int_01; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX by_int_01 ON public.executions_visibility USING btree (namespace_id, int01, COALESCE(close_time, '9999-12-31 23:59:59'::timestamp without time zone) DESC, start_time DESC, run_id);


--
-- Name: by_int_02; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX by_int_02 ON public.executions_visibility USING btree (namespace_id, int02, COALESCE(close_time, '9999-12-31 23:59:59'::timestamp without time zone) DESC, start_time DESC, run_id);


--
-- Name: by_int_03; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX by_int_03 ON public.executions_visibility USING btree (namespace_id, int03, COALESCE(close_time, '9999-12-31 23:59:59'::timestamp without time zone) DESC, start_time DESC, run_id);


--
-- Name: by_keyword_01; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX by_keyword_01 ON public.executions_visibility USING btree (namespace_id, keyword01, COALESCE(close_time, '9999-12-31 23:59:59'::timestamp without time zone) DESC, start_time DESC, run_id);


--
-- Name: by_keyword_02; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX by_keyword_02 ON public.executions_visibility USING btree (namespace_id, keyword02, COALESCE(close_time, '9999-12-31 23:59:59'::timestamp without time zone) DESC, start_time DESC, run_id);


--
-- Name: by_keyword_03; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX by_keyword_03 ON public.executions_visibility USING btree (namespace_id, keyword03, COALESCE(close_time, '9999-12-31 23:59:59'::timestamp without time zone) DESC, start_time DESC, run_id);


--
-- Name: by_keyword_04; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX by_keyword_04 ON public.executions_visibility USING btree (namespace_id, keyword04, COALESCE(close_time, '9999-12-31 23:59:59'::timestamp without time zone) DESC, start_time DESC, run_id);


--
-- Name: by_keyword_05; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX by_keyword_05 ON public.executions_visibility USING btree (namespace_id, keyword05, COALESCE(close_time, '9999-12-31 23:59:59'::timestamp without time zone) DESC, start_time DESC, run_id);


--
-- Name: by_keyword_06; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX by_keyword_06 ON public.executions_visibility USING btree (namespace_id, keyword06, COALESCE(close_time, '9999-12-31 23:59:59'::timestamp without time zone) DESC, start_time DESC, run_id);


--
-- Name: by_keyword_07; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX by_keyword_07 ON public.executions_visibility USING btree (namespace_id, keyword07, COALESCE(close_time, '9999-12-31 23:59:59'::timestamp without time zone) DESC, start_time DESC, run_id);


--
-- Name: by_keyword_08; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX by_keyword_08 ON public.executions_visibility USING btree (namespace_id, keyword08, COALESCE(close_time, '9999-12-31 23:59:59'::timestamp without time zone) DESC, start_time DESC, run_id);


--
-- Name: by_keyword_09; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX by_keyword_09 ON public.executions_visibility USING btree (namespace_id, keyword09, COALESCE(close_time, '9999-12-31 23:59:59'::timestamp without time zone) DESC, start_time DESC, run_id);


--
-- Name: by_keyword_10; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX by_keyword_10 ON public.executions_visibility USING btree (namespace_id, keyword10, COALESCE(close_time, '9999-12-31 23:59:59'::timestamp without time zone) DESC, start_time DESC, run_id);


--
-- Name: by_keyword_list_01; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX by_keyword_list_01 ON public.executions_visibility USING gin (namespace_id, keywordlist01 jsonb_path_ops);


--
-- Name: by_keyword_list_02; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX by_keyword_list_02 ON public.executions_visibility USING gin (namespace_id, keywordlist02 jsonb_path_ops);


--
-- Name: by_keyword_list_03; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX by_keyword_list_03 ON public.executions_visibility USING gin (namespace_id, keywordlist03 jsonb_path_ops);


--
-- Name: by_parent_run_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX by_parent_run_id ON public.executions_visibility USING btree (namespace_id, parent_run_id, COALESCE(close_time, '9999-12-31 23:59:59'::timestamp without time zone) DESC, start_time DESC, run_id);


--
-- Name: by_parent_workflow_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX by_parent_workflow_id ON public.executions_visibility USING btree (namespace_id, parent_workflow_id, COALESCE(close_time, '9999-12-31 23:59:59'::timestamp without time zone) DESC, start_time DESC, run_id);


--
-- Name: by_root_run_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX by_root_run_id ON public.executions_visibility USING btree (namespace_id, root_run_id, COALESCE(close_time, '9999-12-31 23:59:59'::timestamp without time zone) DESC, start_time DESC, run_id);


--
-- Name: by_root_workflow_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX by_root_workflow_id ON public.executions_visibility USING btree (namespace_id, root_workflow_id, COALESCE(close_time, '9999-12-31 23:59:59'::timestamp without time zone) DESC, start_time DESC, run_id);


--
-- Name: by_state_transition_count; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX by_state_transition_count ON public.executions_visibility USING btree (namespace_id, state_transition_count, COALESCE(close_time, '9999-12-31 23:59:59'::timestamp without time zone) DESC, start_time DESC, run_id);


--
-- Name: by_status; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX by_status ON public.executions_visibility USING btree (namespace_id, status, COALESCE(close_time, '9999-12-31 23:59:59'::timestamp without time zone) DESC, start_time DESC, run_id);


--
-- Name: by_task_queue; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX by_task_queue ON public.executions_visibility USING btree (namespace_id, task_queue, COALESCE(close_time, '9999-12-31 23:59:59'::timestamp without time zone) DESC, start_time DESC, run_id);


--
-- Name: by_temporal_bool_01; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX by_temporal_bool_01 ON public.executions_visibility USING btree (namespace_id, temporalbool01, COALESCE(close_time, '9999-12-31 23:59:59'::timestamp without time zone) DESC, start_time DESC, run_id);


--
-- Name: by_temporal_bool_02; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX by_temporal_bool_02 ON public.executions_visibility USING btree (namespace_id, temporalbool02, COALESCE(close_time, '9999-12-31 23:59:59'::timestamp without time zone) DESC, start_time DESC, run_id);


--
-- Name: by_temporal_change_version; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX by_temporal_change_version ON public.executions_visibility USING gin (namespace_id, temporalchangeversion jsonb_path_ops);


--
-- Name: by_temporal_datetime_01; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX by_temporal_datetime_01 ON public.executions_visibility USING btree (namespace_id, temporaldatetime01, COALESCE(close_time, '9999-12-31 23:59:59'::timestamp without time zone) DESC, start_time DESC, run_id);


--
-- Name: by_temporal_datetime_02; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX by_temporal_datetime_02 ON public.executions_visibility USING btree (namespace_id, temporaldatetime02, COALESCE(close_time, '9999-12-31 23:59:59'::timestamp without time zone) DESC, start_time DESC, run_id);


--
-- Name: by_temporal_double_01; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX by_temporal_double_01 ON public.executions_visibility USING btree (namespace_id, temporaldouble01, COALESCE(close_time, '9999-12-31 23:59:59'::timestamp without time zone) DESC, start_time DESC, run_id);


--
-- Name: by_temporal_double_02; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX by_temporal_double_02 ON public.executions_visibility USING btree (namespace_id, temporaldouble02, COALESCE(close_time, '9999-12-31 23:59:59'::timestamp without time zone) DESC, start_time DESC, run_id);


--
-- Name: by_temporal_external_payload_count; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX by_temporal_external_payload_count ON public.executions_visibility USING btree (namespace_id, temporalexternalpayloadcount, COALESCE(close_time, '9999-12-31 23:59:59'::timestamp without time zone) DESC, start_time DESC, run_id);


--
-- Name: by_temporal_external_payload_size_bytes; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX by_temporal_external_payload_size_bytes ON public.executions_visibility USING btree (namespace_id, temporalexternalpayloadsizebytes, COALESCE(close_time, '9999-12-31 23:59:59'::timestamp without time zone) DESC, start_time DESC, run_id);


--
-- Name: by_temporal_int_01; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX by_temporal_int_01 ON public.executions_visibility USING btree (namespace_id, temporalint01, COALESCE(close_time, '9999-12-31 23:59:59'::timestamp without time zone) DESC, start_time DESC, run_id);


--
-- Name: by_temporal_int_02; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX by_temporal_int_02 ON public.executions_visibility USING btree (namespace_id, temporalint02, COALESCE(close_time, '9999-12-31 23:59:59'::timestamp without time zone) DESC, start_time DESC, run_id);


--
-- Name: by_temporal_keyword_01; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX by_temporal_keyword_01 ON public.executions_visibility USING btree (namespace_id, temporalkeyword01, COALESCE(close_time, '9999-12-31 23:59:59'::timestamp without time zone) DESC, start_time DESC, run_id);


--
-- Name: by_temporal_keyword_02; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX by_temporal_keyword_02 ON public.executions_visibility USING btree (namespace_id, temporalkeyword02, COALESCE(close_time, '9999-12-31 23:59:59'::timestamp without time zone) DESC, start_time DESC, run_id);


--
-- Name: by_temporal_keyword_03; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX by_temporal_keyword_03 ON public.executions_visibility USING btree (namespace_id, temporalkeyword03, COALESCE(close_time, '9999-12-31 23:59:59'::timestamp without time zone) DESC, start_time DESC, run_id);


--
-- Name: by_temporal_keyword_04; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX by_temporal_keyword_04 ON public.executions_visibility USING btree (namespace_id, temporalkeyword04, COALESCE(close_time, '9999-12-31 23:59:59'::timestamp without time zone) DESC, start_time DESC, run_id);


--
-- Name: by_temporal_keyword_list_01; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX by_temporal_keyword_list_01 ON public.executions_visibility USING gin (namespace_id, temporalkeywordlist01 jsonb_path_ops);


--
-- Name: by_temporal_keyword_list_02; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX by_temporal_keyword_list_02 ON public.executions_visibility USING gin (namespace_id, temporalkeywordlist02 jsonb_path_ops);


--
-- Name: by_temporal_low_cardinality_keyword_01; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX by_temporal_low_cardinality_keyword_01 ON public.executions_visibility USING btree (namespace_id, temporallowcardinalitykeyword01, COALESCE(close_time, '9999-12-31 23:59:59'::timestamp without time zone) DESC, start_time DESC, run_id);


--
-- Name: by_temporal_namespace_division; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX by_temporal_namespace_division ON public.executions_visibility USING btree (namespace_id, temporalnamespacedivision, COALESCE(close_time, '9999-12-31 23:59:59'::timestamp without time zone) DESC, start_time DESC, run_id);


--
-- Name: by_temporal_pause_info; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX by_temporal_pause_info ON public.executions_visibility USING gin (namespace_id, temporalpauseinfo jsonb_path_ops);


--
-- Name: by_temporal_reported_problems; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX by_temporal_reported_problems ON public.executions_visibility USING gin (namespace_id, temporalreportedproblems jsonb_path_ops);


--
-- Name: by_temporal_schedule_paused; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX by_temporal_schedule_paused ON public.executions_visibility USING btree (namespace_id, temporalschedulepaused, COALESCE(close_time, '9999-12-31 23:59:59'::timestamp without time zone) DESC, start_time DESC, run_id);


--
-- Name: by_temporal_scheduled_by_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX by_temporal_scheduled_by_id ON public.executions_visibility USING btree (namespace_id, temporalscheduledbyid, COALESCE(close_time, '9999-12-31 23:59:59'::timestamp without time zone) DESC, start_time DESC, run_id);


--
-- Name: by_temporal_scheduled_start_time; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX by_temporal_scheduled_start_time ON public.executions_visibility USING btree (namespace_id, temporalscheduledstarttime, COALESCE(close_time, '9999-12-31 23:59:59'::timestamp without time zone) DESC, start_time DESC, run_id);


--
-- Name: by_temporal_worker_deployment; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX by_temporal_worker_deployment ON public.executions_visibility USING btree (namespace_id, temporalworkerdeployment, COALESCE(close_time, '9999-12-31 23:59:59'::timestamp without time zone) DESC, start_time DESC, run_id);


--
-- Name: by_temporal_worker_deployment_version; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX by_temporal_worker_deployment_version ON public.executions_visibility USING btree (namespace_id, temporalworkerdeploymentversion, COALESCE(close_time, '9999-12-31 23:59:59'::timestamp without time zone) DESC, start_time DESC, run_id);


--
-- Name: by_temporal_workflow_versioning_behavior; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX by_temporal_workflow_versioning_behavior ON public.executions_visibility USING btree (namespace_id, temporalworkflowversioningbehavior, COALESCE(close_time, '9999-12-31 23:59:59'::timestamp without time zone) DESC, start_time DESC, run_id);


--
-- Name: by_text_01; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX by_text_01 ON public.executions_visibility USING gin (namespace_id, text01);


--
-- Name: by_text_02; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX by_text_02 ON public.executions_visibility USING gin (namespace_id, text02);


--
-- Name: by_text_03; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX by_text_03 ON public.executions_visibility USING gin (namespace_id, text03);


--
-- Name: by_used_deployment_versions; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX by_used_deployment_versions ON public.executions_visibility USING gin (namespace_id, temporalusedworkerdeploymentversions jsonb_path_ops);


--
-- Name: by_workflow_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX by_workflow_id ON public.executions_visibility USING btree (namespace_id, workflow_id, COALESCE(close_time, '9999-12-31 23:59:59'::timestamp without time zone) DESC, start_time DESC, run_id);


--
-- Name: by_workflow_type; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX by_workflow_type ON public.executions_visibility USING btree (namespace_id, workflow_type_name, COALESCE(close_time, '9999-12-31 23:59:59'::timestamp without time zone) DESC, start_time DESC, run_id);


--
-- Name: default_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX default_idx ON public.executions_visibility USING btree (namespace_id, COALESCE(close_time, '9999-12-31 23:59:59'::timestamp without time zone) DESC, start_time DESC, run_id);


--
-- PostgreSQL database dump complete
--

\unrestrict wMQ4pLWiWTW2rIki3rmzFVWfZSKzvSTDcVutc6PqIbwi38MhwatAlRY49iMvvYE

