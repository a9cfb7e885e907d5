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

-- Creates and attaches the partition [p_from, p_to), named events_<p_from>,
-- with the indexes every partition has: (tx_id, seq) through the parent,
-- unique seq and unique (source_id, event_id) of its own. Built apart and
-- attached: ATTACH takes only a SHARE UPDATE EXCLUSIVE lock on the log
-- (loaders and consumers go on), and a moment's exclusive lock on the
-- default partition, which it checks holds no row of the new range.
-- Gives up after 2 s waiting for a lock (the maintainer tries again on its
-- next pass, long before the partition is needed). Returns its name.
-- Called by: partitions_ahead; tests.
CREATE OR REPLACE FUNCTION tributary.add_partition(p_from xid8, p_to xid8) RETURNS text
LANGUAGE plpgsql
SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET lock_timeout = '2s' AS $$
DECLARE
    v_name text := 'events_' || p_from::text;
BEGIN
    IF p_to <= p_from THEN
        RAISE EXCEPTION 'add_partition: empty range [%, %)', p_from, p_to USING ERRCODE = '22023';
    END IF;
    EXECUTE format('CREATE TABLE tributary.%I (LIKE tributary.events INCLUDING DEFAULTS INCLUDING CONSTRAINTS)',
                   v_name);
    EXECUTE format('CREATE UNIQUE INDEX %I ON tributary.%I (seq)', v_name || '_seq', v_name);
    EXECUTE format('CREATE UNIQUE INDEX %I ON tributary.%I (source_id, event_id)', v_name || '_source_event_id',
                   v_name);
    EXECUTE format('CREATE INDEX %I ON tributary.%I (tx_id, seq)', v_name || '_tx_seq', v_name);
    EXECUTE format('ALTER TABLE tributary.events ATTACH PARTITION tributary.%I FOR VALUES FROM (%L) TO (%L)',
                   v_name, p_from, p_to);
    INSERT INTO tributary.partitions (name, from_tx, to_tx) VALUES (v_name, p_from, p_to);
    RETURN v_name;
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
-- default partition), the next starts at the counter. Returns the names
-- created. Called by: the maintainer; `migrate`.
CREATE OR REPLACE FUNCTION tributary.partitions_ahead() RETURNS SETOF text
LANGUAGE plpgsql
SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    v_next xid8 := tributary.next_xid();
    v_width numeric := tributary.partition_width();
    v_ahead int := (SELECT s.spans_ahead FROM tributary.log_settings s);
    v_end xid8;
    v_from xid8;
BEGIN
    v_end := (SELECT max(p.to_tx) FROM tributary.partitions p);
    WHILE v_end IS NULL OR tributary.xid_minus(v_end, v_next) < (v_ahead + 1) * v_width LOOP
        v_from := CASE WHEN v_end IS NULL OR v_end < v_next THEN v_next ELSE v_end END;
        v_end := tributary.xid_plus(v_from, v_width);
        RETURN NEXT tributary.add_partition(v_from, v_end);
    END LOOP;
END $$;

-- What the maintainer learns on each pass: the rate transaction ids are
-- used at (a moving average over samples at least 10 s apart), and for
-- each partition when the counter reached its start, passed its end, and
-- when every transaction below its end had ended; then its size and its
-- sources (a skip through its (source_id, event_id) index: one probe per
-- source). Called by: the maintainer.
CREATE OR REPLACE FUNCTION tributary.observe_partitions() RETURNS void
LANGUAGE plpgsql
SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    v_next xid8 := tributary.next_xid();
    v_xmin xid8 := pg_snapshot_xmin(pg_current_snapshot());
    v_settings tributary.log_settings;
    v_rate double precision;
    v_part tributary.partitions;
    v_sources int[];
BEGIN
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
     WHERE p.ended_at IS NULL AND p.to_tx <= v_next;
    FOR v_part IN SELECT * FROM tributary.partitions p WHERE p.sealed_at IS NULL AND p.to_tx <= v_xmin LOOP
        EXECUTE format($q$
            WITH RECURSIVE s AS (
                SELECT min(e.source_id) AS id FROM tributary.%1$I e
                UNION ALL
                SELECT (SELECT min(e.source_id) FROM tributary.%1$I e WHERE e.source_id > s.id) FROM s WHERE s.id IS NOT NULL)
            SELECT coalesce(array_agg(s.id ORDER BY s.id), '{}') FROM s WHERE s.id IS NOT NULL $q$, v_part.name)
            INTO v_sources;
        UPDATE tributary.partitions p
           SET sealed_at = clock_timestamp(), source_ids = v_sources,
               bytes = pg_total_relation_size(format('tributary.%I', p.name)::regclass)
         WHERE p.name = v_part.name;
    END LOOP;
END $$;
