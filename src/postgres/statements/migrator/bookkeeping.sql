-- The migrator's own tables. schema_migrations.checksum (SHA-256 of the
-- migration's text) and schema_definitions.roles (the group roles that
-- existed when the definitions and their grants were applied) came after the
-- first databases: added here, only when missing, so a current database
-- takes no lock on them.
CREATE SCHEMA IF NOT EXISTS tributary;
CREATE TABLE IF NOT EXISTS tributary.schema_migrations (
    version    int PRIMARY KEY,
    name       text NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT now(),
    checksum   text);
CREATE TABLE IF NOT EXISTS tributary.schema_definitions (
    only_row   boolean PRIMARY KEY DEFAULT true CHECK (only_row),
    digest     text NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT now());
DO $$
BEGIN
    IF NOT EXISTS (SELECT FROM pg_attribute
                    WHERE attrelid = 'tributary.schema_migrations'::regclass AND attname = 'checksum'
                      AND NOT attisdropped) THEN
        ALTER TABLE tributary.schema_migrations ADD COLUMN checksum text;
    END IF;
    IF NOT EXISTS (SELECT FROM pg_attribute
                    WHERE attrelid = 'tributary.schema_definitions'::regclass AND attname = 'roles'
                      AND NOT attisdropped) THEN
        ALTER TABLE tributary.schema_definitions ADD COLUMN roles text;
    END IF;
END $$;
