-- The partitions of the log: creating them ahead of need, and learning what
-- each holds once nothing more can arrive in it (migrations/0013 says why
-- the log is partitioned by tx_id; docs/design.md "The partitioned log").
--
-- Internal (sql/internal/): called by the maintainer (`tributary maintain`,
-- or the `run` process that holds the maintainer's lease) and by `migrate`.
-- They run as their owner (SECURITY DEFINER; search_path pinned): creating
-- a partition needs the log's owner, the maintainer only EXECUTE.
-- Re-applied as a whole by `migrate` whenever any file under sql/ changes:
-- everything here is CREATE OR REPLACE.

-- Locks the log for attaching a partition, so that no insert can race the
-- attach (docs/design.md "Attaching a partition while writers run"): SHARE
-- ROW EXCLUSIVE on tributary.events, which waits for every transaction that
-- inserted into the log to end and holds new inserts back (readers go on),
-- then ACCESS EXCLUSIVE on the default partition, which ATTACH needs. The
-- latter is only tried (NOWAIT): waiting for it while holding the former
-- could close a deadlock with a transaction that read the log and then
-- writes to it, and PostgreSQL might then abort the writer, not us. What is
-- not had at once is let go and tried again (up to 20 times, 0.5 s each for
-- the first lock, short sleeps between), so writers wait at most one try;
-- then 55P03 (the maintainer tries again on its next pass).
-- The locks last until the caller's transaction ends.
-- Called by: add_partition, partitions_ahead.
CREATE OR REPLACE FUNCTION tributary.lock_log_for_attach() RETURNS void
LANGUAGE plpgsql
SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET lock_timeout = '500ms' AS $$
BEGIN
    FOR v_try IN 1..20 LOOP
        BEGIN
            LOCK TABLE ONLY tributary.events IN SHARE ROW EXCLUSIVE MODE;
            LOCK TABLE tributary.events_default IN ACCESS EXCLUSIVE MODE NOWAIT;
            RETURN;  -- the block's subtransaction commits: its locks are the transaction's
        EXCEPTION WHEN lock_not_available THEN
            -- Rolled back: both locks let go, the writers held back go on.
            PERFORM pg_sleep(0.01 * least(v_try, 10));
        END;
    END LOOP;
    RAISE EXCEPTION 'the log is busy: no moment free of long writers and of readers of the default partition '
                    'in 20 tries' USING ERRCODE = '55P03';
END $$;

-- Creates and attaches the partition [p_from, p_to), named events_<p_from>,
-- with the indexes every partition has: (tx_id, seq) through the parent,
-- unique seq (not on Citus) and unique (source_id, event_id) of its own. The caller holds
-- lock_log_for_attach's locks (and chose p_from under them). Built, then
-- attached: ATTACH checks that the default partition holds no row of the
-- new range (a scan of the default partition; under the locks, the only
-- time writers wait). Returns its name.
-- Called by: add_partition, partitions_ahead.
CREATE OR REPLACE FUNCTION tributary.attach_new_partition(p_from xid8, p_to xid8) RETURNS text
LANGUAGE plpgsql
SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    v_name text := 'events_' || p_from::text;
BEGIN
    IF p_to <= p_from THEN
        RAISE EXCEPTION 'add_partition: empty range [%, %)', p_from, p_to USING ERRCODE = '22023';
    END IF;
    EXECUTE format('CREATE TABLE tributary.%I (LIKE tributary.events INCLUDING DEFAULTS INCLUDING CONSTRAINTS)',
                   v_name);
    -- Not on Citus, where a unique index must hold the distribution column
    -- (migrations/citus/0001; seq stays unique by its identity there).
    IF NOT tributary.log_is_distributed() THEN
        EXECUTE format('CREATE UNIQUE INDEX %I ON tributary.%I (seq)', v_name || '_seq', v_name);
    END IF;
    EXECUTE format('CREATE UNIQUE INDEX %I ON tributary.%I (source_id, event_id)', v_name || '_source_event_id',
                   v_name);
    EXECUTE format('CREATE INDEX %I ON tributary.%I (tx_id, seq)', v_name || '_tx_seq', v_name);
    EXECUTE format('ALTER TABLE tributary.events ATTACH PARTITION tributary.%I FOR VALUES FROM (%L) TO (%L)',
                   v_name, p_from, p_to);
    INSERT INTO tributary.partitions (name, from_tx, to_tx) VALUES (v_name, p_from, p_to);
    RETURN v_name;
END $$;

-- Creates and attaches the partition [p_from, p_to) (attach_new_partition,
-- under lock_log_for_attach's locks). Returns its name.
-- Called by: tests and benchmarks that cut the log themselves.
CREATE OR REPLACE FUNCTION tributary.add_partition(p_from xid8, p_to xid8) RETURNS text
LANGUAGE plpgsql
SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    PERFORM tributary.lock_log_for_attach();
    RETURN tributary.attach_new_partition(p_from, p_to);
END $$;

-- How many transaction ids one partition should span: the ids the cluster
-- uses in log_settings.partition_span at its measured rate, at least 1 000
-- (before any rate is known: 10 000, so that a new database soon has a
-- partition sized by its measured rate).
-- Called by: partitions_ahead.
CREATE OR REPLACE FUNCTION tributary.partition_width() RETURNS numeric
LANGUAGE sql STABLE AS $$
SELECT greatest(1000, round(coalesce(s.xids_per_second * extract(epoch FROM s.partition_span), 10000)))
  FROM tributary.log_settings s $$;

-- Creates the partitions that the next spans_ahead spans will need beyond
-- the current one, each following the last; when the counter already ran
-- past the last (no maintainer for that long: those events went to the
-- default partition), the next starts at the counter. The counter is read
-- under lock_log_for_attach's locks: then no transaction at or past it can
-- have stored an event yet, nor store one before this commits, so the
-- attach finds no row of its range in the default partition and no insert
-- is routed by a view of the partitions without it (docs/design.md
-- "Attaching a partition while writers run"). Nothing is locked when
-- nothing is needed. Returns the names created.
-- On Citus the counter is the fastest worker's (log_next_xid), read on the
-- workers after the locks are had: Citus takes them on every node (the
-- workers' writers go through their own copy of tributary.events), and
-- the attach runs on every shard. When a gap was left (the counter had run
-- past the last partition), the slower workers' counters are moved past it
-- before the locks go (advance_worker_counters), so that their events do
-- not fill it in the default partition either.
-- Called by: the maintainer; `migrate`.
CREATE OR REPLACE FUNCTION tributary.partitions_ahead() RETURNS SETOF text
LANGUAGE plpgsql
SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    v_width numeric := tributary.partition_width();
    v_ahead int := (SELECT s.spans_ahead FROM tributary.log_settings s);
    v_end xid8 := (SELECT max(p.to_tx) FROM tributary.partitions p);
    v_next xid8 := tributary.log_next_xid();
    v_from xid8;
    v_gap boolean := false;
BEGIN
    IF v_end IS NOT NULL AND tributary.xid_minus(v_end, v_next) >= (v_ahead + 1) * v_width THEN
        RETURN;
    END IF;
    PERFORM tributary.lock_log_for_attach();
    v_next := tributary.log_next_xid();
    v_end := (SELECT max(p.to_tx) FROM tributary.partitions p);
    WHILE v_end IS NULL OR tributary.xid_minus(v_end, v_next) < (v_ahead + 1) * v_width LOOP
        v_from := CASE WHEN v_end IS NULL OR v_end < v_next THEN v_next ELSE v_end END;
        v_gap := v_gap OR v_from = v_next;
        v_end := tributary.xid_plus(v_from, v_width);
        RETURN NEXT tributary.attach_new_partition(v_from, v_end);
    END LOOP;
    -- Citus, after a gap (the fastest worker ran past the last partition): the other workers are
    -- moved past it while their writers still wait for the locks, so that none stores in it.
    IF v_gap AND tributary.log_is_distributed() THEN
        PERFORM tributary.advance_worker_counters(v_next, 200000);
    END IF;
END $$;

-- What the maintainer learns on each pass: the rate transaction ids are
-- used at (a moving average over samples at least 10 s apart), and for
-- each partition when the counter reached its start, passed its end, and
-- when every transaction below its end had ended; then its size and its
-- sources (partition_bytes, partition_sources). On Citus
-- (16_log_counters.sql): the rate and the start are the fastest worker's,
-- the end and the seal every worker's; and a worker whose counter is below
-- the partition the fastest is in is first moved on to its start (at most
-- 200 000 ids a pass), so that the partitions below can be sealed.
-- Called by: the maintainer.
CREATE OR REPLACE FUNCTION tributary.observe_partitions() RETURNS void
LANGUAGE plpgsql
SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    v_counters record := tributary.log_counters();
    v_next xid8 := v_counters.next_high;
    v_current xid8;
    v_settings tributary.log_settings;
    v_rate double precision;
    v_part tributary.partitions;
BEGIN
    IF tributary.log_is_distributed() THEN
        v_current := (SELECT max(p.from_tx) FROM tributary.partitions p WHERE p.from_tx <= v_next);
        IF v_counters.next_low < v_current THEN
            PERFORM tributary.advance_worker_counters(v_current, 200000);
            v_counters := tributary.log_counters();
        END IF;
    END IF;
    SELECT * INTO v_settings FROM tributary.log_settings FOR NO KEY UPDATE;
    IF v_settings.sampled_at IS NULL THEN
        UPDATE tributary.log_settings SET sampled_at = clock_timestamp(), sampled_xid = v_next;
    ELSIF clock_timestamp() - v_settings.sampled_at >= interval '10 seconds' THEN
        v_rate := tributary.xid_minus(v_next, v_settings.sampled_xid)
                  / extract(epoch FROM clock_timestamp() - v_settings.sampled_at);
        UPDATE tributary.log_settings
           SET xids_per_second = CASE WHEN xids_per_second IS NULL THEN v_rate
                                      ELSE 0.8 * xids_per_second + 0.2 * v_rate END,
               sampled_at = clock_timestamp(), sampled_xid = v_next;
    END IF;
    UPDATE tributary.partitions p SET started_at = clock_timestamp()
     WHERE p.started_at IS NULL AND p.from_tx <= v_next;
    UPDATE tributary.partitions p SET ended_at = clock_timestamp()
     WHERE p.ended_at IS NULL AND p.to_tx <= v_counters.next_low;
    FOR v_part IN SELECT * FROM tributary.partitions p
                   WHERE p.sealed_at IS NULL AND p.to_tx <= v_counters.xmin_low LOOP
        UPDATE tributary.partitions p
           SET sealed_at = clock_timestamp(), source_ids = tributary.partition_sources(p.name),
               bytes = tributary.partition_bytes(p.name)
         WHERE p.name = v_part.name;
    END LOOP;
END $$;
