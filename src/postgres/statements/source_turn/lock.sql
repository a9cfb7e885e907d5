-- Source $2's lock in namespace $1, taken in this session: on Citus, where the loader's functions
-- run on a worker and cannot hold it (sql/citus/10_delegation.sql).
SELECT pg_try_advisory_lock($1, $2)
