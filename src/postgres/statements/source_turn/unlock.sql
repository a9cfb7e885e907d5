-- Source $2's lock in namespace $1, let go by this session once its turn's last statement is done
-- (on Citus: lock.sql).
SELECT pg_advisory_unlock($1, $2)
