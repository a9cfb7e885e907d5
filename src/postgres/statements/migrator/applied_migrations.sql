-- Through to_jsonb, so that it also reads a table from before the checksum
-- column (a database only ever migrated by older binaries): NULL there.
SELECT m.version, m.name, to_jsonb(m) ->> 'checksum'
  FROM tributary.schema_migrations m
 ORDER BY m.version
