-- One row per delivery of a run's event to one channel of its
-- organization (docs/notifications.md): what operators see in
-- `baton notify log` and the inbox, and how a retried delivery learns the
-- channel already has the event. Rows older than 30 days are deleted as
-- new ones are written.
CREATE TABLE notify_deliveries (
    org           text        NOT NULL,
    event_id      text        NOT NULL,
    channel       text        NOT NULL,
    event_type    text        NOT NULL,
    run_id        text        NOT NULL,
    work_item_id  text        NOT NULL DEFAULT '',
    state         text        NOT NULL CHECK (state IN ('delivered', 'retrying', 'failed')),
    attempts      integer     NOT NULL DEFAULT 0,
    last_error    text        NOT NULL DEFAULT '',
    created_at    timestamptz NOT NULL DEFAULT now(),
    updated_at    timestamptz NOT NULL DEFAULT now(),
    delivered_at  timestamptz,
    PRIMARY KEY (org, event_id, channel)
);

CREATE INDEX notify_deliveries_recent ON notify_deliveries (org, updated_at DESC);
