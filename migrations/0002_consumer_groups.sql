-- Consumer groups (issue 6): tables only; the functions and views that use
-- them are in sql/20_consumer_groups.sql. Forward-only, like every migration.
--
-- Shape (PgQ's, not a queue's): a group is one cursor over the log plus a few
-- rows per batch in hand and per failed event. tributary.events stays
-- insert-only; nothing here has a row per event per group, so the tables that
-- churn stay as small as the work in flight.

-- One row per group. The cursor moves on every fresh read: the row is narrow,
-- no index covers the cursor columns and the pages keep room, so those
-- updates are HOT and vacuum has almost nothing to do.
CREATE TABLE tributary.consumer_groups (
    id             int GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    name           text NOT NULL UNIQUE CHECK (name ~ '^[A-Za-z0-9._-]{1,100}$'),
    -- Over source names; checked by group_create (tributary.pattern_matches).
    pattern        text NOT NULL DEFAULT '>',
    max_deliveries int NOT NULL DEFAULT 5 CHECK (max_deliveries >= 1),
    lease          interval NOT NULL DEFAULT '30 seconds' CHECK (lease > interval '0'),
    -- Per-source order: at most one batch per source in flight.
    ordered        boolean NOT NULL DEFAULT false,
    -- Retry backoff: a random time up to retry_base * 2^(deliveries-1), capped (full jitter).
    retry_base     interval NOT NULL DEFAULT '1 second' CHECK (retry_base >= interval '0'),
    retry_cap      interval NOT NULL DEFAULT '5 minutes' CHECK (retry_cap >= interval '0'),
    -- Every event at or before (cursor_tx, cursor_seq) in (tx_id, seq) order
    -- has been handed out in some batch. (tx, 0) means "before every event of
    -- transaction tx": seq values are positive.
    cursor_tx      xid8 NOT NULL,
    cursor_seq     bigint NOT NULL,
    created_at     timestamptz NOT NULL DEFAULT now()
) WITH (fillfactor = 50,
        autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 200);

-- One row per batch handed out and not yet acked: inserted by a read, deleted
-- by its ack. Churns (one insert and one delete per batch), but holds only
-- what is in flight: a handful of rows per consumer. Vacuumed after a fixed
-- number of dead rows rather than a fraction of a tiny table, unthrottled, so
-- dead rows never pile up behind the scale factor's 20 % of "almost nothing".
-- leased_until changes on heartbeat and takeover; it is not indexed (a
-- group's batches are few) so those updates stay HOT.
CREATE TABLE tributary.consumer_batches (
    id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    group_id     int NOT NULL REFERENCES tributary.consumer_groups (id) ON DELETE CASCADE,
    consumer     text NOT NULL,
    -- A new token on every delivery: an ack must name the delivery it closes.
    lease_token  uuid NOT NULL,
    leased_until timestamptz NOT NULL,
    delivery     int NOT NULL CHECK (delivery >= 1),
    -- Exactly the events of the batch, in (tx_id, seq) order, and the source
    -- of each, element by element (for ordered groups and retries).
    seqs         bigint[] NOT NULL CHECK (cardinality(seqs) >= 1),
    source_ids   int[] NOT NULL CHECK (cardinality(source_ids) = cardinality(seqs)),
    created_at   timestamptz NOT NULL DEFAULT now()
) WITH (fillfactor = 80,
        autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 1000,
        autovacuum_vacuum_insert_scale_factor = 0, autovacuum_vacuum_insert_threshold = 1000,
        autovacuum_analyze_scale_factor = 0, autovacuum_analyze_threshold = 1000,
        autovacuum_vacuum_cost_delay = 0);
CREATE INDEX consumer_batches_group ON tributary.consumer_batches (group_id);

-- One row per failed event waiting for its next single delivery. Churns like
-- the batches (a row per failure, deleted when redelivered), tuned the same.
CREATE TABLE tributary.consumer_retries (
    group_id        int NOT NULL REFERENCES tributary.consumer_groups (id) ON DELETE CASCADE,
    seq             bigint NOT NULL,
    -- Deliveries so far; the next one is deliveries + 1.
    deliveries      int NOT NULL CHECK (deliveries >= 0),
    next_attempt_at timestamptz NOT NULL,
    last_error      text,
    source_id       int NOT NULL,
    PRIMARY KEY (group_id, seq)
) WITH (autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 1000,
        autovacuum_vacuum_insert_scale_factor = 0, autovacuum_vacuum_insert_threshold = 1000,
        autovacuum_analyze_scale_factor = 0, autovacuum_analyze_threshold = 1000,
        autovacuum_vacuum_cost_delay = 0);
CREATE INDEX consumer_retries_due ON tributary.consumer_retries (group_id, next_attempt_at);

-- Events that failed max_deliveries times; they no longer block anything.
-- Only replay (or deleting the group) removes them.
CREATE TABLE tributary.consumer_dead_letters (
    group_id   int NOT NULL REFERENCES tributary.consumer_groups (id) ON DELETE CASCADE,
    seq        bigint NOT NULL,
    deliveries int NOT NULL,
    last_error text,
    failed_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (group_id, seq)
);

-- Reads walk the log in (tx_id, seq) order from a group's cursor up to the
-- watermark: this index serves the range and the order, so a read of 1000
-- events touches 1000 index entries and needs no sort. See README "Consumer
-- groups" for its measured insert cost and why not (tx_id) alone.
CREATE INDEX events_tx_seq ON tributary.events (tx_id, seq);
