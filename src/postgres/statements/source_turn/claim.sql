-- Lock, gate and cursor of source $1 (internal/50_loader_claim.sql), provided its settings are still
-- revision $4 (`source edit` counts them up): else decision 'changed'.
SELECT decision, failures, drained, lease, empty_streak, cursor, cursor_position, cursor_taken, replay_until
  FROM tributary.loader_claim($1, $2, $3, $4)
