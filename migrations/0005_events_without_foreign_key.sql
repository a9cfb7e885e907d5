-- The foreign key events.source_id -> sources made every stored event lock
-- its source's row (FOR KEY SHARE, one lookup per row): about half of what
-- PostgreSQL spent on a batch (bench/run: COPY into tributary.events reached
-- 0.46 of a plain COPY). What it protected is kept by a trigger that runs
-- once per deleted source instead of once per stored event: a source with
-- events cannot be deleted (tributary never deletes events).
ALTER TABLE tributary.events DROP CONSTRAINT events_source_id_fkey;

CREATE FUNCTION tributary.refuse_deleting_a_source_with_events() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    -- Wait for a batch being stored right now: it moves the cursor row
    -- first, in its own transaction; once it is done, its events are seen.
    PERFORM 1 FROM tributary.cursors WHERE source_id = OLD.id FOR UPDATE;
    IF EXISTS (SELECT 1 FROM tributary.events WHERE source_id = OLD.id) THEN
        RAISE EXCEPTION 'source "%" has stored events, and tributary never deletes events', OLD.name
            USING ERRCODE = '23503', HINT = 'Pause it instead: tributary source pause ' || OLD.name;
    END IF;
    RETURN OLD;
END $$;

CREATE TRIGGER sources_keep_events BEFORE DELETE ON tributary.sources
    FOR EACH ROW EXECUTE FUNCTION tributary.refuse_deleting_a_source_with_events();
