SELECT to_regclass('tributary.schema_migrations') IS NOT NULL,
       to_regclass('tributary.schema_definitions') IS NOT NULL
