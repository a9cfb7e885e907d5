-- A log that runs for years (issue 16): tributary.events becomes a table
-- partitioned by RANGE of tx_id, so that old events leave by dropping whole
-- partitions (milliseconds, no dead rows) instead of a DELETE, and a group's
-- read stays one index range in the partition at its cursor. docs/design.md
-- "The partitioned log" says why tx_id and how keys stay unique.
--
-- Done online, in three transactions (the lines "-- migrate: commit" end
-- each one), with this release's sql/ definitions applied between steps 2
-- and 3 (the line "-- migrate: definitions"): they work on the table before
-- and after the switch, and a writer waiting for the switch's lock must not
-- be running a function of the old set, whose ON CONFLICT needs the old
-- table's unique index. Each step can run again after an interruption. On a populated log the only long work
-- (a scan to prove every existing row lies below a bound, and copying the
-- keys of sources keyed by text) holds no lock that stops loaders or
-- consumers; the switch itself holds the log for as long as the new
-- definitions take (a fraction of a second).
--
-- 1. Catalogue, and a bound for the existing rows: every row of the table
--    as it is has tx_id below X, a transaction id a little ahead of the
--    current one (CHECK ... NOT VALID: new rows are checked from now on).
--    The table becomes the partition [MINVALUE, X); events of transactions
--    from X on go to new partitions. If the log's transactions reach X
--    before step 3 (a very long step 2), their inserts fail until step 3
--    (a loader's turn is retried; nothing is stored partially).
-- 2. The scan proving the bound (VALIDATE: loaders keep loading), and the
--    keys of the events keyed by text copied into tributary.event_keys (a
--    trigger installed in step 1 copies those of rows stored meanwhile).
-- 3. The switch: the table is renamed events_0, a partitioned
--    tributary.events takes its name and attaches it (the validated bound
--    spares the scan), with a default partition that catches events of
--    transactions no partition covers yet (the maintainer creates
--    partitions ahead, so it stays empty; see sql/internal/80_partitions.sql).

-- Every partition of the log: its range of transaction ids [from_tx, to_tx)
-- and what the maintainer learnt of it. Partitions of the log are created
-- and dropped only through tributary's functions, which keep this table.
CREATE TABLE IF NOT EXISTS tributary.partitions (
    name        text PRIMARY KEY,
    from_tx     xid8 NOT NULL UNIQUE,
    to_tx       xid8 NOT NULL CHECK (to_tx > from_tx),
    created_at  timestamptz NOT NULL DEFAULT now(),
    -- When the maintainer first saw the transaction counter at or past
    -- from_tx; at or past to_tx (every event in it was loaded before then:
    -- loaded_at is its transaction's start); and every transaction below
    -- to_tx ended (sealed: nothing more can be stored in it).
    started_at  timestamptz,
    ended_at    timestamptz,
    sealed_at   timestamptz,
    -- Learnt once sealed: its size and the sources with events in it.
    bytes       bigint,
    source_ids  int[],
    -- The archive command took it (exit status 0); or how often it failed,
    -- with its last error (a partition to archive leaves only once archived).
    archived_at        timestamptz,
    archive_failures   int NOT NULL DEFAULT 0,
    archive_error      text,
    archive_failed_at  timestamptz
);

-- The keys of events keyed by text, one row per (source, key) stored: the
-- one index that keeps a key from being stored twice whatever partition its
-- first copy is in (PostgreSQL requires the partition key in a partitioned
-- table's unique indexes). Writers insert the keys first (ON CONFLICT DO
-- NOTHING) and store the events of the keys that were new. A key leaves
-- with its event's partition. Events keyed by id need no such table: their
-- ids only grow past the compare-and-set cursor.
CREATE TABLE IF NOT EXISTS tributary.event_keys (
    source_id int NOT NULL,
    event_key text NOT NULL,
    PRIMARY KEY (source_id, event_key)
);

-- How the log is cut and kept. One row.
CREATE TABLE IF NOT EXISTS tributary.log_settings (
    id             boolean PRIMARY KEY DEFAULT true CHECK (id),
    -- Each partition is sized to take about this long to fill, from the
    -- rate transaction ids were used at while the last one filled.
    partition_span interval NOT NULL DEFAULT '1 day' CHECK (partition_span >= interval '1 second'),
    -- How many spans of partitions are kept ready ahead of the current one.
    spans_ahead    int NOT NULL DEFAULT 2 CHECK (spans_ahead BETWEEN 1 AND 100),
    -- How fast the cluster uses transaction ids (a moving average the
    -- maintainer keeps), and its last sample: what a span is in ids.
    xids_per_second double precision,
    sampled_at      timestamptz,
    sampled_xid     xid8
);
INSERT INTO tributary.log_settings DEFAULT VALUES ON CONFLICT DO NOTHING;

-- Retention: how long the events of the sources a pattern matches are kept
-- (the pattern '>' is the global policy). A partition leaves once every
-- source with events in it is past its policy; by default not while a
-- consumer group still needs an event in it (drop_unconsumed: anyway).
CREATE TABLE IF NOT EXISTS tributary.retention_policies (
    pattern         text PRIMARY KEY,
    keep            interval CHECK (keep > interval '0'),
    max_bytes       bigint CHECK (max_bytes > 0),
    drop_unconsumed boolean NOT NULL DEFAULT false,
    -- Partitions leave only through a maintainer run with --archive-command.
    archive         boolean NOT NULL DEFAULT false,
    created_at      timestamptz NOT NULL DEFAULT now(),
    CHECK (keep IS NOT NULL OR max_bytes IS NOT NULL)
);

-- The maintainer's lease: one row, held by one process at a time
-- (sql/internal/81_maintainer.sql).
CREATE TABLE IF NOT EXISTS tributary.maintainer_lease (
    id          boolean PRIMARY KEY DEFAULT true CHECK (id),
    holder      text,
    -- Grows by one with every new holder: a maintainer's every action names
    -- the token it holds, so a stalled one that lost the lease acts no more.
    token       bigint NOT NULL DEFAULT 0,
    expires_at  timestamptz NOT NULL DEFAULT '-infinity',
    acquired_at timestamptz,
    renewed_at  timestamptz
);
INSERT INTO tributary.maintainer_lease DEFAULT VALUES ON CONFLICT DO NOTHING;

-- The transactions a consumer's batch, retry or dead letter spans in the
-- log (both ends included): finding its events by seq then looks only in
-- the partitions of that range. NULL in rows from before this migration.
ALTER TABLE tributary.consumer_batches ADD COLUMN IF NOT EXISTS tx_from xid8, ADD COLUMN IF NOT EXISTS tx_to xid8;
ALTER TABLE tributary.consumer_retries ADD COLUMN IF NOT EXISTS tx_from xid8, ADD COLUMN IF NOT EXISTS tx_to xid8;
ALTER TABLE tributary.consumer_dead_letters ADD COLUMN IF NOT EXISTS tx_from xid8, ADD COLUMN IF NOT EXISTS tx_to xid8;

-- While the table is converted: the keys of events keyed by text stored by
-- the functions in place until step 3, copied as they are stored.
CREATE OR REPLACE FUNCTION tributary.copy_new_event_keys() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO tributary.event_keys (source_id, event_key)
    SELECT s.source_id, s.event_key FROM stored s WHERE s.event_key IS NOT NULL
    ON CONFLICT DO NOTHING;
    RETURN NULL;
END $$;

-- The log locked exclusively, patiently: every writer and reader of the log
-- queues behind a waiting exclusive lock, so wait 1 s at most, then let
-- them through for a second, 30 times (steps 1 and 3; dropped at the end).
CREATE OR REPLACE FUNCTION tributary.lock_log_for_0013() RETURNS void
LANGUAGE plpgsql SET lock_timeout = '1s' AS $$
BEGIN
    FOR attempt IN 1..30 LOOP
        BEGIN
            LOCK TABLE tributary.events IN ACCESS EXCLUSIVE MODE;
            RETURN;
        EXCEPTION WHEN lock_not_available THEN
            IF attempt = 30 THEN
                RAISE;
            END IF;
            PERFORM pg_sleep(1);
        END;
    END LOOP;
END $$;

DO $$
DECLARE
    v_margin bigint;
    v_bound xid8;
    v_current text;
BEGIN
    IF (SELECT c.relkind FROM pg_class c WHERE c.oid = 'tributary.events'::regclass) <> 'r' THEN
        RETURN;    -- partitioned already
    END IF;
    PERFORM tributary.lock_log_for_0013();
    IF NOT EXISTS (SELECT FROM pg_trigger WHERE tgrelid = 'tributary.events'::regclass
                                            AND tgname = 'events_copy_keys') THEN
        CREATE TRIGGER events_copy_keys AFTER INSERT ON tributary.events
            REFERENCING NEW TABLE AS stored FOR EACH STATEMENT EXECUTE FUNCTION tributary.copy_new_event_keys();
    END IF;
    -- Room for the transactions of steps 2 and 3: a tenth of a transaction
    -- per existing row (validating scans far faster than anything uses
    -- transaction ids), at least 100 000; 1 000 for an empty log.
    v_margin := CASE WHEN EXISTS (SELECT FROM tributary.events) THEN
                     greatest(100000, (SELECT c.reltuples FROM pg_class c
                                        WHERE c.oid = 'tributary.events'::regclass)::bigint / 10)
                     ELSE 1000 END;
    SELECT substring(pg_get_constraintdef(c.oid) FROM '''(\d+)''') INTO v_current
      FROM pg_constraint c
     WHERE c.conrelid = 'tributary.events'::regclass AND c.conname = 'events_before_partitions';
    IF v_current IS NOT NULL THEN
        -- A run interrupted after step 1: its bound stands while it is
        -- still ahead by half the margin.
        IF v_current::numeric - pg_snapshot_xmax(pg_current_snapshot())::text::numeric > v_margin / 2 THEN
            RETURN;
        END IF;
        ALTER TABLE tributary.events DROP CONSTRAINT events_before_partitions;
    END IF;
    v_bound := (pg_snapshot_xmax(pg_current_snapshot())::text::numeric + v_margin)::text::xid8;
    EXECUTE format('ALTER TABLE tributary.events ADD CONSTRAINT events_before_partitions CHECK (tx_id < %L::xid8) NOT VALID',
                   v_bound);
END $$;

-- migrate: commit

DO $$
BEGIN
    IF (SELECT c.relkind FROM pg_class c WHERE c.oid = 'tributary.events'::regclass) <> 'r'
       OR (SELECT c.convalidated FROM pg_constraint c
            WHERE c.conrelid = 'tributary.events'::regclass AND c.conname = 'events_before_partitions') THEN
        RETURN;    -- partitioned already, or this step done (in the same transaction as the keys)
    END IF;
    ALTER TABLE tributary.events VALIDATE CONSTRAINT events_before_partitions;
    INSERT INTO tributary.event_keys (source_id, event_key)
    SELECT e.source_id, e.event_key FROM tributary.events e WHERE e.event_key IS NOT NULL
    ON CONFLICT DO NOTHING;
END $$;

-- migrate: commit
-- migrate: definitions

DO $$
DECLARE
    v_bound xid8;
    v_next_seq bigint;
BEGIN
    IF (SELECT c.relkind FROM pg_class c WHERE c.oid = 'tributary.events'::regclass) <> 'r' THEN
        RETURN;
    END IF;
    PERFORM tributary.lock_log_for_0013();
    SELECT substring(pg_get_constraintdef(c.oid) FROM '''(\d+)''')::xid8 INTO v_bound
      FROM pg_constraint c
     WHERE c.conrelid = 'tributary.events'::regclass AND c.conname = 'events_before_partitions';
    -- The next seq the table's own sequence would have handed out.
    EXECUTE format('SELECT CASE WHEN is_called THEN last_value + 1 ELSE last_value END FROM %s',
                   pg_get_serial_sequence('tributary.events', 'seq')) INTO v_next_seq;
    DROP TRIGGER events_copy_keys ON tributary.events;
    ALTER TABLE tributary.events RENAME TO events_0;
    ALTER INDEX tributary.events_pkey RENAME TO events_0_seq;
    ALTER INDEX tributary.events_source_id_event_id_key RENAME TO events_0_source_event_id;
    ALTER INDEX tributary.events_source_key RENAME TO events_0_source_key;
    ALTER INDEX tributary.events_tx_seq RENAME TO events_0_tx_seq;
    EXECUTE format($f$
        CREATE TABLE tributary.events (
            seq       bigint GENERATED ALWAYS AS IDENTITY (START WITH %s),
            source_id int NOT NULL,
            event_id  bigint,
            payload   jsonb NOT NULL,
            loaded_at timestamptz NOT NULL DEFAULT now(),
            tx_id     xid8 NOT NULL DEFAULT pg_current_xact_id(),
            event_key text
        ) PARTITION BY RANGE (tx_id) $f$, v_next_seq);
    ALTER TABLE tributary.events
        ADD CONSTRAINT events_one_key CHECK ((event_id IS NULL) <> (event_key IS NULL)) NOT VALID;
    -- The one index every partition has through its parent: the readers'
    -- (tx_id, seq) order. Each partition also has unique indexes on seq and
    -- on (source_id, event_id) of its own (tributary.add_partition).
    CREATE INDEX events_tx_seq ON tributary.events (tx_id, seq);
    EXECUTE format('ALTER TABLE tributary.events ATTACH PARTITION tributary.events_0 FOR VALUES FROM (MINVALUE) TO (%L)',
                   v_bound);
    ALTER TABLE tributary.events_0 DROP CONSTRAINT events_before_partitions;
    CREATE TABLE tributary.events_default PARTITION OF tributary.events DEFAULT;
    CREATE UNIQUE INDEX events_default_seq ON tributary.events_default (seq);
    CREATE UNIQUE INDEX events_default_source_event_id ON tributary.events_default (source_id, event_id);
    INSERT INTO tributary.partitions (name, from_tx, to_tx) VALUES ('events_0', '0', v_bound);
END $$;
DROP FUNCTION IF EXISTS tributary.copy_new_event_keys();
DROP FUNCTION IF EXISTS tributary.lock_log_for_0013();
