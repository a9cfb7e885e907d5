-- Source $1's refresher lease for $3 seconds, when the token is still
-- generation $2 (0: none yet) and no other lease runs; a row back when it is
-- ours.
INSERT INTO tributary.access_tokens AS t (source_id, refreshing_until)
VALUES ($1, now() + make_interval(secs => $3))
ON CONFLICT (source_id) DO UPDATE SET refreshing_until = excluded.refreshing_until
    WHERE t.generation = $2 AND (t.refreshing_until IS NULL OR t.refreshing_until <= now())
RETURNING source_id
