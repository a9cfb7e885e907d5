-- Sources read the way real APIs page (issue 13): records found by JSON
-- pointers, keyed by text, and a cursor that is a position (a key, a token, a
-- URL, a watermark, a page or an offset) rather than the last event id.
--
-- Every change here is to the catalogue alone, or takes no scan of the log:
-- columns added without a default, a constraint NOT VALID (rows stored before
-- it all have an event_id), and one partial index. That index is built here,
-- in the migration's transaction: on a large log it holds off loaders (a
-- SHARE lock on tributary.events) for as long as one scan of the table takes.

-- How the source is read and paged, and the environment variables its
-- credentials come from (names only, never values): `source add`'s flags, as
-- docs/sources.md lists them. '{}' is tributary's own protocol.
ALTER TABLE tributary.sources
    ADD COLUMN reading jsonb NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(reading) = 'object');

-- An event's key within its source: event_id for sources keyed by integer
-- ids that only grow (after-id), event_key for every other (the key's text,
-- or the JSON array of a composite key's parts). Exactly one is set.
ALTER TABLE tributary.events ALTER COLUMN event_id DROP NOT NULL;
ALTER TABLE tributary.events ADD COLUMN event_key text;
ALTER TABLE tributary.events
    ADD CONSTRAINT events_one_key CHECK ((event_id IS NULL) <> (event_key IS NULL)) NOT VALID;
-- Partial: rows keyed by id have no entry, so loading them costs what it did.
CREATE UNIQUE INDEX events_source_key ON tributary.events (source_id, event_key) WHERE event_key IS NOT NULL;

-- The cursor of a source keyed by text: its position ('' before the first
-- request) and how many records of the page there are already stored. NULL
-- for sources keyed by id, whose cursor stays last_event_id. Moved only by a
-- compare-and-set in the transaction that stores the batch, as last_event_id.
ALTER TABLE tributary.cursors ADD COLUMN position text;
ALTER TABLE tributary.cursors ADD COLUMN taken bigint NOT NULL DEFAULT 0;
-- After `source rewind` of a source keyed by id: ids up to here may be
-- stored already, and are skipped rather than refused, until the cursor
-- passes it again (then NULL).
ALTER TABLE tributary.cursors ADD COLUMN replay_until bigint;

-- Every `source rewind`: who moved which cursor back, from where, when.
CREATE TABLE tributary.cursor_rewinds (
    id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    source_id   int NOT NULL REFERENCES tributary.sources (id) ON DELETE CASCADE,
    from_cursor text NOT NULL,
    to_cursor   text NOT NULL,
    rewound_by  text NOT NULL DEFAULT session_user,
    rewound_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX cursor_rewinds_source ON tributary.cursor_rewinds (source_id, id);
