-- The log at a glance (sql/internal/83_log_status.sql).
SELECT partitions, bytes, key_bytes, default_events, oldest_event_at::text, oldest_event_age_seconds,
       ahead_to_tx::text, ahead_xids::float8, xids_per_second, ahead_seconds::float8,
       next_drop_partition, next_drop_state, next_drop_at::text, next_drop_seconds,
       archive_failing, archive_failing_partition, archive_error, held::text,
       oldest_xact_pid, oldest_xact_user, oldest_xact_application, oldest_xact_state, oldest_xact_age_seconds,
       xmin_lag_xids::float8, maintainer_holder, maintainer_token, maintainer_expires_in_seconds,
       herald_holder, herald_token, herald_expires_in_seconds
  FROM tributary.log_status()
