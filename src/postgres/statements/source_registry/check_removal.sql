-- Refuses (23503) removing source $1 (named $2) when it has stored events, having waited for
-- whoever is storing to it (sql/internal/60_source_triggers.sql; on one PostgreSQL a trigger
-- repeats it).
SELECT tributary.refuse_removing($1, $2)
