-- One row per partition, oldest first, the default partition last.
SELECT name, from_tx::text, to_tx::text, state, bytes, started_at::text, ended_at::text, sealed_at::text,
       due_at::text, array_to_json(held_by)::text, archive, archived_at::text, archive_failures, archive_error
  FROM tributary.log_partitions()
