-- Migrations 0001 and 0006 were edited after databases had applied them
-- (before tributary recorded checksums). This puts such a database where the
-- final texts leave a new one, and changes nothing in any other:
-- - 0001 gained gates.drained, gates.backlog and gates.lease in three edits;
-- - 0006's first text had loader_append(int, bigint, bigint[], jsonb), which
--   later texts replaced by an overload with more arguments. The loader's
--   functions themselves are re-created from sql/ by every `migrate` whose
--   definitions differ.
-- Only when a column is missing does this alter the table: a current
-- database takes no lock on tributary.gates.
DO $$
BEGIN
    IF NOT EXISTS (SELECT FROM pg_attribute WHERE attrelid = 'tributary.gates'::regclass
                      AND attname = 'drained' AND NOT attisdropped) THEN
        ALTER TABLE tributary.gates ADD COLUMN drained boolean NOT NULL DEFAULT false;
    END IF;
    IF NOT EXISTS (SELECT FROM pg_attribute WHERE attrelid = 'tributary.gates'::regclass
                      AND attname = 'backlog' AND NOT attisdropped) THEN
        ALTER TABLE tributary.gates ADD COLUMN backlog bigint;
    END IF;
    IF NOT EXISTS (SELECT FROM pg_attribute WHERE attrelid = 'tributary.gates'::regclass
                      AND attname = 'lease' AND NOT attisdropped) THEN
        ALTER TABLE tributary.gates ADD COLUMN lease bigint NOT NULL DEFAULT 0;
    END IF;
END $$;

DROP FUNCTION IF EXISTS tributary.loader_append(int, bigint, bigint[], jsonb);
