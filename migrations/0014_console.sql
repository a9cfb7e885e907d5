-- The operator's console (issue 17): what its pages read without scanning
-- the log. Per-minute counts of stored events, per source and for the whole
-- log, folded from the log by the maintainer (sql/internal/84_activity.sql),
-- and the recent errors of each pulled source, written by the loader's
-- failed close (sql/internal/51_loader_close.sql).
--
-- New tables only (and a copy of each gate's last error): nothing here
-- scans or locks the log.

-- Events stored per source and minute (date_trunc('minute', loaded_at)),
-- kept 24 h. No foreign key to tributary.sources, as the log has none (its
-- check would lock each source's row on every fold): `source remove` leaves
-- a removed source's rows, which the fold trims within a day (source ids
-- are never reused).
CREATE TABLE IF NOT EXISTS tributary.source_minutes (
    source_id int NOT NULL,
    minute    timestamptz NOT NULL,
    events    bigint NOT NULL,
    PRIMARY KEY (source_id, minute)
);
-- The fold's trim, by age.
CREATE INDEX IF NOT EXISTS source_minutes_minute ON tributary.source_minutes (minute);

-- Events stored in the whole log per minute, kept 24 h.
CREATE TABLE IF NOT EXISTS tributary.log_minutes (
    minute timestamptz PRIMARY KEY,
    events bigint NOT NULL
);

-- The fold's position in the log, one row: every event at or before
-- (tx_id, seq) in (tx_id, seq) order is counted (as a consumer group's
-- cursor: (tx, 0) is before every event of transaction tx). NULL: nothing
-- folded yet. `through`: the time up to which the counts are complete (no
-- transaction that started before it can still store an event), or NULL
-- while unknown. Locked FOR UPDATE by each fold: the compare-and-set that
-- makes two folds count each event once.
CREATE TABLE IF NOT EXISTS tributary.activity_position (
    id        boolean PRIMARY KEY DEFAULT true CHECK (id),
    tx_id     xid8,
    seq       bigint NOT NULL DEFAULT 0,
    through   timestamptz,
    folded_at timestamptz
);
INSERT INTO tributary.activity_position DEFAULT VALUES ON CONFLICT DO NOTHING;

-- A pulled source's recent errors: an episode per run of the same error
-- text (a different text, or a success in between, starts a new one), with
-- when it was first and last seen and how often; the newest 20 kept per
-- source. `source remove` takes them along.
CREATE TABLE IF NOT EXISTS tributary.source_errors (
    source_id int NOT NULL REFERENCES tributary.sources (id) ON DELETE CASCADE,
    id        bigint GENERATED ALWAYS AS IDENTITY,
    first_at  timestamptz NOT NULL,
    last_at   timestamptz NOT NULL,
    count     bigint NOT NULL CHECK (count >= 1),
    error     text NOT NULL,
    -- The newest episodes of a source: a backward range of this index.
    PRIMARY KEY (source_id, id)
);

-- The last error each gate remembers becomes its source's first episode.
INSERT INTO tributary.source_errors (source_id, first_at, last_at, count, error)
SELECT g.source_id, g.last_error_at, g.last_error_at, 1, g.last_error
  FROM tributary.gates g
 WHERE g.last_error IS NOT NULL AND g.last_error_at IS NOT NULL
   AND NOT EXISTS (SELECT FROM tributary.source_errors e WHERE e.source_id = g.source_id);
