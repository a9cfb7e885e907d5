-- The live tail's events (console): read_log's rows as the event id
-- "<tx>:<seq>" and one JSON line each, members in the documented order,
-- loaded_at as ISO-8601 UTC with milliseconds whatever the session's TimeZone.
-- json (not jsonb) keeps the order; the payload is embedded as stored.
SELECT tx_id::text || ':' || seq,
       json_build_object('seq', seq, 'source', source, 'event_id', event_id, 'event_key', event_key,
                         'loaded_at', to_char(loaded_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
                         'payload', payload)::text
  FROM tributary.read_log($1, $2::xid8, $3, $4)
