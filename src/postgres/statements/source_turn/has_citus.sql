-- Whether this database has the Citus extension: only then is log_is_distributed.sql asked (a
-- database migrated by an older tributary lacks that function, and its loaders must run on).
SELECT EXISTS (SELECT FROM pg_extension WHERE extname = 'citus')
