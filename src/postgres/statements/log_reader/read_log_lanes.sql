-- read_log_lanes' rows (Citus): read_log's columns after the lane; a row
-- whose source is NULL only moves its lane's position.
SELECT lane, tx_id::text, seq, source, event_id, event_key, payload::text, loaded_at::text
  FROM tributary.read_log_lanes($1, $2::xid8[], $3::bigint[], $4)
