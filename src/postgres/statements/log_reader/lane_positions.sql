-- The position per lane that $1 names on Citus; no row on one PostgreSQL
-- (position.sql then).
SELECT lane, tx_id::text, seq FROM tributary.log_lane_positions($1)
