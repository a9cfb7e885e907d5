-- Lanes (issue 28): a consumer group split into shares of its sources, each
-- with its own cursor, read by one consumer at a time.
--
-- A group of N lanes (`group create --lanes N`, N >= 2) puts the events of
-- source s in lane s % N. A group of one lane is a group as before: its
-- cursor stays in its own row, its fresh reads take turns on that row, and it
-- has no rows here.
ALTER TABLE tributary.consumer_groups
    ADD COLUMN IF NOT EXISTS lanes int NOT NULL DEFAULT 1 CHECK (lanes BETWEEN 1 AND 256);

-- One row per lane of a group of lanes: what consumer_groups holds for a
-- group of one lane (the cursor, the cached matches), and who holds the lane.
-- Every event of the lane at or before (cursor_tx, cursor_seq), in (tx_id,
-- seq) order, has been handed out in some batch. holder holds the lane until
-- held_until: only the holder reads it (sql/internal/32_lanes.sql). read_at:
-- when a fresh read last moved the lane's cursor, and backlogged: whether
-- that read filled its batch (both written with the cursor), so a consumer
-- turns first to the lanes with a backlog, then to those read least lately.
CREATE TABLE IF NOT EXISTS tributary.group_lanes (
    group_id    int NOT NULL REFERENCES tributary.consumer_groups (id) ON DELETE CASCADE,
    lane        int NOT NULL CHECK (lane >= 0),
    cursor_tx   xid8 NOT NULL,
    cursor_seq  bigint NOT NULL,
    source_bits bit varying,
    holder      text,
    held_until  timestamptz,
    read_at     timestamptz,
    backlogged  boolean NOT NULL DEFAULT false,
    PRIMARY KEY (group_id, lane)
) WITH (fillfactor = 50,
        autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 200);

-- The consumers of a group of lanes that are alive: each read says so, and
-- how many there are decides each one's share of the lanes.
CREATE TABLE IF NOT EXISTS tributary.group_consumers (
    group_id   int NOT NULL REFERENCES tributary.consumer_groups (id) ON DELETE CASCADE,
    consumer   text NOT NULL,
    seen_until timestamptz NOT NULL,
    PRIMARY KEY (group_id, consumer)
) WITH (fillfactor = 50,
        autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 200);

-- Batches, retries and dead letters gain nothing: their sources say their
-- lane (a batch of a lane holds only the lane's sources).
