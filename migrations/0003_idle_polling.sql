-- Idle polling: a source that keeps answering with nothing is asked again
-- after a growing pause (DESIGN.md §5, README "Polling policy"). The streak of
-- empty answers lives on the gate row, so every loader of every process
-- follows the same schedule. A constant default: no table rewrite.
ALTER TABLE tributary.gates ADD COLUMN empty_streak int NOT NULL DEFAULT 0;
