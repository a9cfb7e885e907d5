-- Every hint of a batch ($2, a text[] literal) on channel $1, in one statement.
SELECT pg_notify($1, p) FROM unnest($2::text[]) p
