-- The migrations of migrations/citus/ applied to this database (a Citus
-- coordinator's), as schema_migrations holds those of migrations/.
CREATE TABLE IF NOT EXISTS tributary.citus_migrations (
    version    int PRIMARY KEY,
    name       text NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT now(),
    checksum   text NOT NULL)
