-- The herald's functions (sql/internal/87_herald.sql) that this database
-- lacks, with the signatures this binary calls. `run` and `consume` check
-- these rather than the definitions' digest (`receive` and `maintain` check
-- the digest, which covers them).
SELECT f.signature
  FROM unnest(ARRAY[
           'tributary.herald_acquire(text, interval)',
           'tributary.herald_release(text, bigint)',
           'tributary.herald_announce_nodes(text, bigint, xid8[])']) AS f(signature)
 WHERE to_regprocedure(f.signature) IS NULL
