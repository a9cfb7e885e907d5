-- The columns to_record() reads; headers newline-separated.
SELECT id, name, url, array_to_string(headers, E'\n'), interval_ms, batch_size, timeout_ms, enabled, reading::text
  FROM tributary.sources
 ORDER BY name
