-- A write whose answer Temporal remembers as a refusal under its update id
-- (a check that failed, an evaluator that did not answer) is tried again
-- under a new update id: attempt counts them. refused marks a reservation
-- whose call was refused, which another call may take over at once.
ALTER TABLE requests
    ADD COLUMN attempt integer NOT NULL DEFAULT 0,
    ADD COLUMN refused boolean NOT NULL DEFAULT false;
