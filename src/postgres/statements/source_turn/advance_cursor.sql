-- The cursor's compare-and-set, in the transaction that stores the batch.
UPDATE tributary.cursors
   SET last_event_id = $3, events_stored = events_stored + $4, last_stored_at = now()
 WHERE source_id = $1 AND last_event_id = $2
