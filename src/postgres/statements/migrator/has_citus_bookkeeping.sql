SELECT to_regclass('tributary.citus_migrations') IS NOT NULL
