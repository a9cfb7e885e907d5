-- Looking a consumer group up by name.
--
-- Internal (sql/internal/): steps of the public functions and the loader's
-- own functions. Nothing outside tributary should call them.
-- Re-applied as a whole by `migrate` whenever any file under sql/ changes:
-- everything here is CREATE OR REPLACE.

-- The group named p_name, or P0002.
-- Called by: group_reset, consumer_read, dead_letter_replay.
CREATE OR REPLACE FUNCTION tributary.group_by_name(p_name text) RETURNS tributary.consumer_groups
LANGUAGE plpgsql STABLE AS $$
DECLARE
    v_group tributary.consumer_groups;
BEGIN
    SELECT * INTO v_group FROM tributary.consumer_groups g WHERE g.name = p_name;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'no consumer group named ''%''', p_name USING ERRCODE = 'P0002',
            HINT = 'Create it with tributary.group_create(name, pattern) (or `tributary group create`); '
                   'tributary.group_status lists the groups.';
    END IF;
    RETURN v_group;
END $$;
