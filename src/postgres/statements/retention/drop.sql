-- NULL events: the partition may not leave (any more).
SELECT events, keys, bytes, from_tx::text, to_tx::text, lock_wait_ms, lock_held_ms, unconsumed::text
  FROM tributary.retention_drop($1, $2, $3)
