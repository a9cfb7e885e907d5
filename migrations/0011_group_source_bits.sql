-- A group's pattern was matched against every source's name on every read
-- (1.5 ms a read with 5 000 sources: more than reading 1000 events), and
-- each event then looked up in the list of matches, one by one. A read now
-- keeps the matches with its group, one bit per source id (checked per event
-- in constant time), and any change to tributary.sources clears them in
-- every group, in the same transaction as the change, so the next read of
-- each group matches again (sql/internal/31_fresh_reads.sql: lease_fresh).
-- NULL: not known yet. Adding the column rewrites nothing.
ALTER TABLE tributary.consumer_groups ADD COLUMN source_bits bit varying;

-- The function's body is in sql/internal/60_source_triggers.sql (applied
-- after the migrations); this stub only lets the trigger be created here.
CREATE FUNCTION tributary.forget_group_sources() RETURNS trigger
LANGUAGE plpgsql AS $$ BEGIN RETURN NULL; END $$;

CREATE TRIGGER sources_forget_group_sources
    AFTER INSERT OR DELETE OR TRUNCATE OR UPDATE OF name ON tributary.sources
    FOR EACH STATEMENT EXECUTE FUNCTION tributary.forget_group_sources();
