-- Held until the session ends: concurrent migrate runs queue here.
SELECT pg_advisory_lock($1, $2)
