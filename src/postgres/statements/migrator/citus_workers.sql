-- The workers the log's shards are spread over.
SELECT count(*) FROM pg_catalog.citus_get_active_worker_nodes()
