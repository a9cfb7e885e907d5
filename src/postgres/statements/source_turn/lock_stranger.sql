-- The session that holds this source's lock without being a loader in a turn, if any
-- (tributary.foreign_locks, sql/api/70_foreign_locks.sql).
SELECT pid, holder_user, application, to_char(since AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'), reason
  FROM tributary.foreign_locks
 WHERE source_id = $1
 LIMIT 1
