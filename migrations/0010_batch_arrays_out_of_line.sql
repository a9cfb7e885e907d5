-- A batch's seqs and source_ids (12 bytes per event: 12 kB for a batch of
-- 1000) never fit in the row, and compressing them with pglz on every fresh
-- read and reading them back cost about 8 % of consumer_next's server CPU
-- (bench/consume, issue 14). They are stored out of line as they are. Only
-- the columns' storage setting changes: no rewrite, a moment's lock on
-- consumer_batches; rows already there stay as they were.
ALTER TABLE tributary.consumer_batches ALTER COLUMN seqs SET STORAGE EXTERNAL,
                                       ALTER COLUMN source_ids SET STORAGE EXTERNAL;
