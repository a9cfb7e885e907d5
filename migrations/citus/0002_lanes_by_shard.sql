-- A consumer group's lanes on Citus (issue 29; docs/citus.md): one lane per
-- shard of the log. A lane's read runs on the worker that holds its shard,
-- after that worker's watermark, so lane and shard must be one: this table
-- says which lane each shard of tributary.events is (in the order of their
-- hash ranges), and gives each an anchor, a source id that hashes into it,
-- by which a statement is sent to the shard's worker even before any source
-- of the lane exists (sql/internal/05_distribution.sql, lane_watermark).
-- On the coordinator, with the consumer groups.
--
-- One DO block, as 0001 says why.
DO $$
DECLARE
    v_shard record;
    v_anchor int;
BEGIN
    CREATE TABLE tributary.citus_lanes (
        lane     int PRIMARY KEY,
        shard_id bigint NOT NULL UNIQUE,
        anchor   int NOT NULL);
    FOR v_shard IN SELECT row_number() OVER (ORDER BY s.shardminvalue::bigint) - 1 AS lane, s.shardid
                     FROM pg_dist_shard s WHERE s.logicalrelid = 'tributary.events'::regclass LOOP
        v_anchor := 1;
        WHILE get_shard_id_for_distribution_column('tributary.events', v_anchor) <> v_shard.shardid LOOP
            v_anchor := v_anchor + 1;
        END LOOP;
        INSERT INTO tributary.citus_lanes (lane, shard_id, anchor) VALUES (v_shard.lane, v_shard.shardid, v_anchor);
    END LOOP;
END $$;
