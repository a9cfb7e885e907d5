-- On Citus, each worker's oldest open transaction, oldest prepared
-- transaction and xmin horizon's lag (sql/internal/83_log_status.sql).
-- No row on one PostgreSQL.
SELECT node, pid, usename, application, state, age_seconds, prepared_gid, prepared_age_seconds,
       xmin_lag_xids::float8
  FROM tributary.worker_transactions()
