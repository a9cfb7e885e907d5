-- A nudge (sql/internal/62_source_nudge.sql says what it does): the
-- source's id, or no row when no pulled source has that name.
SELECT s.id FROM tributary.nudge_gate($1) s(id)
