-- State the gateway keeps outside Temporal: idempotency records, uploaded
-- files, and the process registry.

-- One row per requestId that produced a result. A row is inserted before the
-- call runs, inside the caller's transaction, so a concurrent call with the
-- same requestId waits on it; a refused call rolls back and leaves no row.
CREATE TABLE requests (
    org         text        NOT NULL,
    request_id  text        NOT NULL,
    tool        text        NOT NULL,
    -- Digest of tool, arguments and caller identity.
    digest      bytea       NOT NULL,
    -- The tool's result; NULL only inside the transaction that runs it.
    result      jsonb,
    created_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (org, request_id)
);
-- Retention sweeps delete oldest first.
CREATE INDEX requests_created ON requests (created_at);

CREATE TABLE files (
    org           text        NOT NULL,
    file_id       text        NOT NULL,
    name          text        NOT NULL,
    content_type  text        NOT NULL,
    size          bigint      NOT NULL CHECK (size = octet_length(bytes)),
    sha256        bytea       NOT NULL CHECK (octet_length(sha256) = 32),
    bytes         bytea       NOT NULL,
    created_by    text        NOT NULL,
    created_at    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (org, file_id)
);
-- Uploaded bytes are already compressed more often than not.
ALTER TABLE files ALTER COLUMN bytes SET STORAGE EXTERNAL;

-- The registry: a process name, its draft (imported, not yet published),
-- and its published versions, which never change.
CREATE TABLE processes (
    org         text        NOT NULL,
    name        text        NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (org, name)
);

CREATE TABLE process_drafts (
    org          text        NOT NULL,
    name         text        NOT NULL,
    -- PROCESS.md as imported, and its parsed definition.
    source       text        NOT NULL,
    definition   jsonb       NOT NULL,
    hash         text        NOT NULL,
    -- Role name -> group id, filled in before publishing.
    roles        jsonb       NOT NULL DEFAULT '{}',
    imported_by  text        NOT NULL,
    imported_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (org, name),
    FOREIGN KEY (org, name) REFERENCES processes (org, name)
);

CREATE TABLE process_versions (
    org           text        NOT NULL,
    name          text        NOT NULL,
    version       integer     NOT NULL CHECK (version > 0),
    hash          text        NOT NULL,
    source        text        NOT NULL,
    definition    jsonb       NOT NULL,
    roles         jsonb       NOT NULL DEFAULT '{}',
    published_by  text        NOT NULL,
    published_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (org, name, version),
    FOREIGN KEY (org, name) REFERENCES processes (org, name)
);
