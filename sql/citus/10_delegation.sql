-- A loader's turn on one worker (docs/citus.md): each of the loader's
-- functions runs on the worker that holds its source's shard, where the
-- gate, the cursor, the keys and the events of that source are. Citus
-- sends the whole call there (a "delegated" call, by the p_source argument,
-- co-located with the events), so the function's statements run on that
-- worker as one local transaction: one commit, never a two-phase one, and
-- the events carry that worker's transaction ids, which its consumers read
-- by.
--
-- Citus delegates a call only outside a transaction block: the loader sends
-- each of them as a statement of its own. The source's advisory lock is not
-- taken inside (a delegated call runs on a connection Citus pools, where a
-- session lock would outlive the loader's session): the loader takes it on
-- the coordinator, in its own session, around the turn, and passes NULL as
-- p_lock_namespace.
--
-- A delegated call runs in a session Citus opened on the worker, which has
-- none of the loader's settings (session/setup.sql): each function carries
-- the loader's lock_timeout itself, so that a lock held on the worker (a
-- stranger's, or a prepared transaction waiting for Citus' recovery) fails
-- the turn after 5 s, as on one PostgreSQL, and the loader asks its other
-- sources; without it the call would wait until the coordinator's
-- statement_timeout. Citus propagates the ALTER to the workers.
--
-- Citus only (sql/citus/): a no-op where the log is not distributed.
-- Re-applied as a whole by `migrate` whenever any file under sql/ changes.
DO $$
DECLARE
    v_function text;
BEGIN
    IF NOT tributary.log_is_distributed() THEN
        RETURN;
    END IF;
    FOREACH v_function IN ARRAY ARRAY[
        'tributary.loader_claim(int, int, bigint, bigint)',
        'tributary.loader_append(int, bigint, bigint[], jsonb, int, bigint, bigint, bigint)',
        'tributary.loader_append_keyed(int, text, bigint, text, bigint, jsonb, jsonb, int, bigint, bigint, boolean, '
            'bigint, bigint)',
        'tributary.loader_append_replay(int, bigint, bigint[], jsonb, int, bigint, bigint, bigint)',
        'tributary.loader_close_succeeded(int, int, bigint, bigint, bigint, boolean, bigint)',
        'tributary.loader_close_failed(int, int, bigint, bigint, text, text)',
        'tributary.loader_close_released(int, int, bigint, bigint)'
    ] LOOP
        PERFORM create_distributed_function(v_function::regprocedure, 'p_source', colocate_with => 'tributary.events');
        EXECUTE format('ALTER FUNCTION %s SET lock_timeout = %L', v_function::regprocedure, '5s');
    END LOOP;
END $$;
