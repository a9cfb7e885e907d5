-- Transaction ids as the partitioned log uses them (migrations/0013): its
-- partitions are ranges of tx_id, and a consumer's batch, retry or dead
-- letter remembers the range of tx_id its events lie in.
--
-- Internal (sql/internal/): steps of the public functions and the
-- maintainer's. Nothing outside tributary should call them.
-- Re-applied as a whole by `migrate` whenever any file under sql/ changes:
-- everything here is CREATE OR REPLACE.

-- The next transaction id the cluster will hand out (asking uses none).
CREATE OR REPLACE FUNCTION tributary.next_xid() RETURNS xid8
LANGUAGE sql VOLATILE AS $$ SELECT pg_snapshot_xmax(pg_current_snapshot()) $$;

-- xid8 has no arithmetic: through numeric, which holds every 64-bit id.
CREATE OR REPLACE FUNCTION tributary.xid_plus(p_xid xid8, p_delta numeric) RETURNS xid8
LANGUAGE sql IMMUTABLE AS $$ SELECT (p_xid::text::numeric + p_delta)::text::xid8 $$;

CREATE OR REPLACE FUNCTION tributary.xid_minus(p_a xid8, p_b xid8) RETURNS numeric
LANGUAGE sql IMMUTABLE AS $$ SELECT p_a::text::numeric - p_b::text::numeric $$;

-- The ends of a remembered range, for a lookup by seq that prunes the
-- partitions outside it; rows from before migration 0013 have none (the
-- lookup then asks every partition). Inlined into their callers.
CREATE OR REPLACE FUNCTION tributary.tx_from(p_from xid8) RETURNS xid8
LANGUAGE sql IMMUTABLE AS $$ SELECT coalesce(p_from, '0'::xid8) $$;

CREATE OR REPLACE FUNCTION tributary.tx_to(p_to xid8) RETURNS xid8
LANGUAGE sql IMMUTABLE AS $$ SELECT coalesce(p_to, '18446744073709551615'::xid8) $$;

-- The end (to_tx) of the partition of the log that holds transaction p_tx,
-- or NULL when none in tributary.partitions does (the default partition's).
-- A scan from p_tx stops there: one partition at a time.
-- Called by: partition_end(xid8, int), activity_fold.
CREATE OR REPLACE FUNCTION tributary.partition_end(p_tx xid8) RETURNS xid8
LANGUAGE sql STABLE AS $$
SELECT p.to_tx FROM tributary.partitions p
 WHERE p.from_tx <= p_tx AND p.to_tx > p_tx
 ORDER BY p.from_tx DESC LIMIT 1 $$;

-- The end of p_count partitions of the log from the one that holds
-- transaction p_tx on (of all there are, if fewer), or NULL when none in
-- tributary.partitions holds p_tx. A consumer's read from p_tx stops there.
-- Called by: lease_fresh.
CREATE OR REPLACE FUNCTION tributary.partition_end(p_tx xid8, p_count int) RETURNS xid8
LANGUAGE sql STABLE AS $$
SELECT CASE WHEN tributary.partition_end(p_tx) IS NOT NULL THEN
           (SELECT max(p.to_tx) FROM (SELECT p.to_tx FROM tributary.partitions p
                                       WHERE p.to_tx > p_tx ORDER BY p.to_tx LIMIT p_count) p)
       END $$;
