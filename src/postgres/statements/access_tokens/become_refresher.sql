-- Source $1's refresher lease for $3 seconds, when no other lease runs and
-- the token is still generation $2 (what the caller saw; 0: none) or is not
-- usable (none, rejected, expired); a row back when the lease is ours
-- (sql/internal/56_access_tokens.sql).
SELECT s FROM tributary.access_token_claim($1, $2, $3) s
