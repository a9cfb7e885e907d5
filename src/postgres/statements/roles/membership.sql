-- The GRANT (or, $3 true, REVOKE) of membership in group role $1 for role
-- $2, identifiers quoted by PostgreSQL; the caller executes it.
SELECT format(CASE WHEN $3 THEN 'REVOKE %I FROM %I' ELSE 'GRANT %I TO %I' END, $1::text, $2::text)
