-- A small batch and the close of its slot, in one statement.
--
-- Internal (sql/internal/): the loader's own functions (docs/design.md §5): a
-- turn at a source is loader_claim, the fetch, then loader_append or one of
-- the loader_close_* (src/postgres/postgres_source_turn.cpp calls them).
-- Nothing else should call them: only tributary_loader may execute them
-- (sql/privileges/20_roles.sql). They run with the caller's rights; the
-- loader holds the table privileges they use anyway (it COPYs into events).
-- Re-applied as a whole by `migrate` whenever any file under sql/ changes:
-- everything here is CREATE OR REPLACE. They were created by migration
-- 0006 until they moved here; 0006 stays as history.


