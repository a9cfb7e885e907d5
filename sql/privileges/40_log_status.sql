-- The log's status (sql/internal/83_log_status.sql): `status` runs as the
-- loader or the admin, `log` as the admin, and the metrics of `run --listen`
-- (the loader) and `maintain --metrics-listen` (the maintainer). Applied
-- after 20_roles.sql, which starts each role from nothing; a role that does
-- not exist is skipped.

DO $$
DECLARE
    v_role text;
BEGIN
    FOREACH v_role IN ARRAY ARRAY['tributary_admin', 'tributary_loader', 'tributary_maintainer'] LOOP
        IF to_regrole(v_role) IS NOT NULL THEN
            EXECUTE format('GRANT EXECUTE ON FUNCTION tributary.log_status(), tributary.log_partitions() TO %I',
                           v_role);
        END IF;
    END LOOP;
END $$;
