-- The xmin horizon now: every transaction below it has ended.
SELECT pg_snapshot_xmin(pg_current_snapshot())::text
