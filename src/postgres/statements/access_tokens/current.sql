-- The usable token of source $1, and whether its renewal is due.
SELECT value, generation, now() >= renew_at AS renewal_due
FROM tributary.access_tokens
WHERE source_id = $1 AND value IS NOT NULL AND NOT rejected AND expires_at > now()
