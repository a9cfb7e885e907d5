-- Only a lock this session holds: unlocking one it does not earns a warning.
SELECT pg_advisory_unlock($1, $2) FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid()
   AND granted AND classid = $1::oid AND objid = $2::oid AND objsubid = 2
