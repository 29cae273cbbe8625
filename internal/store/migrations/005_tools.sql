-- The tool registration of the baton-tools-1 profile (docs/profile-tools.md
-- §1): the downstream MCP servers agents may call through Baton, in the
-- order the registration file lists them, and each registered tool's
-- policy. Loading a registration file replaces an organization's rows.
CREATE TABLE tool_servers (
    org          text        NOT NULL,
    name         text        NOT NULL,
    position     integer     NOT NULL,
    url          text        NOT NULL,
    test_url     text,
    -- A reference, never a secret: {"env": "CRM_TOKEN"} or
    -- {"file": "/etc/baton/crm.token"}, with "header" and "scheme".
    -- NULL when the server takes no credentials.
    credentials  jsonb       CHECK (credentials IS NULL OR jsonb_typeof(credentials) = 'object'),
    timeout_ms   integer     NOT NULL CHECK (timeout_ms > 0),
    -- The server's last tools/list answer, [{name, description,
    -- inputSchema}]; NULL until it answered one. Kept across loads while
    -- the url stays the same.
    listing      jsonb       CHECK (listing IS NULL OR jsonb_typeof(listing) = 'array'),
    listed_at    timestamptz,
    updated_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (org, name)
);

CREATE TABLE tool_policies (
    org                   text     NOT NULL,
    server                text     NOT NULL,
    tool                  text     NOT NULL,
    position              integer  NOT NULL,
    policy                text     NOT NULL CHECK (policy IN ('read', 'write', 'approval_required')),
    idempotency           text     NOT NULL CHECK (idempotency IN ('key', 'none')),
    -- Group ids.
    approvers             text[]   NOT NULL DEFAULT '{}',
    approval_sla_seconds  bigint   CHECK (approval_sla_seconds > 0),
    PRIMARY KEY (org, server, tool),
    FOREIGN KEY (org, server) REFERENCES tool_servers (org, name) ON DELETE CASCADE,
    CHECK (policy = 'approval_required' OR (approvers = '{}' AND approval_sla_seconds IS NULL))
);
