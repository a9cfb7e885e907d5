SELECT tx_id::text, seq, source, event_id, event_key, payload::text, loaded_at::text
  FROM tributary.read_log($1, $2::xid8, $3, $4)
