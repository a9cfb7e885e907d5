-- Back to id $2: ids up to where the cursor was (or an earlier rewind's replay reached) may be
-- stored already, and the loader skips them (internal/52_loader_append.sql, loader_append_replay).
UPDATE tributary.cursors
   SET replay_until = greatest(coalesce(replay_until, 0), last_event_id), last_event_id = $2
 WHERE source_id = $1
