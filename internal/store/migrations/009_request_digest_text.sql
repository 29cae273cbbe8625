-- A request's digest is the hex the gateway computes and the run echoes:
-- one representation from the call to this table. Existing records keep
-- their digest, written in hex.
ALTER TABLE requests ALTER COLUMN digest TYPE text USING encode(digest, 'hex');
