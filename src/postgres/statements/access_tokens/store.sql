-- A new token for source $1: value $2, expiring after $3 s, renewal due after
-- $4 s; ends the refresher's lease.
UPDATE tributary.access_tokens
SET value = $2, generation = generation + 1, expires_at = now() + make_interval(secs => $3),
    renew_at = now() + make_interval(secs => $4), rejected = false, refreshing_until = NULL
WHERE source_id = $1
