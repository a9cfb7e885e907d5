-- The live tail's events on Citus: read_log_lanes' rows, each event as
-- read_events.sql makes its JSON line; a row without an event (json NULL)
-- only moves its lane's position.
SELECT lane, tx_id::text, seq,
       CASE WHEN source IS NOT NULL THEN
           json_build_object('seq', seq, 'source', source, 'event_id', event_id, 'event_key', event_key,
                             'loaded_at', to_char(loaded_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
                             'payload', payload)::text
       END
  FROM tributary.read_log_lanes($1, $2::xid8[], $3::bigint[], $4)
