-- The loader's functions (sql/internal/5*_loader_*.sql) that this database
-- lacks, with the signatures this binary calls. `run` checks these rather
-- than the definitions' digest: a change to any other definition must never
-- stop loaders.
SELECT f.signature
  FROM unnest(ARRAY[
           'tributary.loader_claim(int, int, bigint, bigint)',
           'tributary.loader_gate_succeeded(int, int, bigint, bigint, bigint, boolean, bigint)',
           'tributary.loader_close_succeeded(int, int, bigint, bigint, bigint, boolean, bigint)',
           'tributary.loader_close_failed(int, int, bigint, bigint, text, text)',
           'tributary.loader_close_released(int, int, bigint, bigint)',
           'tributary.loader_append(int, bigint, bigint[], jsonb, int, bigint, bigint, bigint)',
           'tributary.access_token_claim(int, bigint, double precision)']) AS f(signature)
 WHERE to_regprocedure(f.signature) IS NULL
