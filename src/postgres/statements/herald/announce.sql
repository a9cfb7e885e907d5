-- One beat of herald $1 holding token $2, the watermarks of its last beat $3
-- (one per node of the log, separated by commas; NULL: unknown): the
-- watermarks now, so separated, and whether it announced; NULL watermarks:
-- the lease is no longer its.
SELECT array_to_string(a.watermarks, ','), a.announced
  FROM tributary.herald_announce_nodes($1, $2, string_to_array($3, ',')::xid8[]) a
