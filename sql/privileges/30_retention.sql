-- Retention (issue 16): who may set policies, read what retention makes of
-- each partition, and drop. Applied after 20_roles.sql, which starts each
-- role from nothing; a role that does not exist is skipped.
--
--   tributary_admin       `retention set|list|remove`; `status` and
--                         `group list` show what holds retention back.
--   tributary_loader      `status` (run with the loader's role) shows it too.
--   tributary_maintainer  the retention step: reads the partitions' state,
--                         records archives, drops (all fenced by its lease).

DO $$
BEGIN
    IF to_regrole('tributary_admin') IS NOT NULL THEN
        GRANT EXECUTE ON FUNCTION
            tributary.retention_set(text, interval, bigint, boolean, boolean),
            tributary.retention_remove(text),
            tributary.partition_retention()
            TO tributary_admin;
    END IF;
    IF to_regrole('tributary_loader') IS NOT NULL THEN
        GRANT EXECUTE ON FUNCTION tributary.partition_retention() TO tributary_loader;
    END IF;
    IF to_regrole('tributary_maintainer') IS NOT NULL THEN
        GRANT EXECUTE ON FUNCTION
            tributary.partition_retention(),
            tributary.archive_copy_statement(text, text),
            tributary.retention_archived(text, bigint, text),
            tributary.retention_archive_failed(text, bigint, text, text),
            tributary.retention_drop(text, bigint, text)
            TO tributary_maintainer;
        -- The archive command's COPY reads the partition as the maintainer.
        GRANT SELECT ON tributary.events TO tributary_maintainer;
    END IF;
END $$;
