-- The group roles of sql/privileges/20_roles.sql, NOLOGIN, created when
-- missing and the migrating role may create roles (CREATEROLE or superuser);
-- otherwise nothing happens and the migrator says which are missing. Roles
-- belong to the cluster: another database's migrate may create one at the
-- same moment.
DO $$
DECLARE
    v_role text;
BEGIN
    IF NOT (SELECT r.rolcreaterole OR r.rolsuper FROM pg_roles r WHERE r.rolname = current_user) THEN
        RETURN;
    END IF;
    FOREACH v_role IN ARRAY ARRAY['tributary_loader', 'tributary_consumer', 'tributary_admin', 'tributary_receiver',
                                'tributary_publisher', 'tributary_maintainer', 'tributary_console'] LOOP
        IF to_regrole(v_role) IS NULL THEN
            BEGIN
                EXECUTE format('CREATE ROLE %I NOLOGIN', v_role);
            EXCEPTION WHEN duplicate_object OR unique_violation THEN
                NULL;
            END;
        END IF;
    END LOOP;
END $$
