-- The columns to_record() reads; headers and publishers newline-separated.
SELECT id, name, coalesce(url, ''), array_to_string(headers, E'\n'), interval_ms, batch_size, timeout_ms, enabled,
       reading::text, kind, receiving::text, array_to_string(publishers, E'\n')
  FROM tributary.sources
 ORDER BY name
