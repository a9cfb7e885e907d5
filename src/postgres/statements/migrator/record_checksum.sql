-- First sight of a migration applied by a binary that recorded no checksum.
UPDATE tributary.schema_migrations SET checksum = $2 WHERE version = $1 AND checksum IS NULL
