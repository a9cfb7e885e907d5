-- Source $1's refresher lease for $3 seconds, when no other lease runs and
-- the token is still generation $2 (what the caller saw; 0: none) or is not
-- usable (none, rejected, expired); a row back when the lease is ours.
INSERT INTO tributary.access_tokens AS t (source_id, refreshing_until)
VALUES ($1, now() + make_interval(secs => $3))
ON CONFLICT (source_id) DO UPDATE SET refreshing_until = excluded.refreshing_until
    WHERE (t.refreshing_until IS NULL OR t.refreshing_until <= now())
      AND (t.generation = $2 OR t.value IS NULL OR t.rejected OR t.expires_at <= now())
RETURNING source_id
