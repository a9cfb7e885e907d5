-- The archive's own connection: its COPY streams a whole partition and may
-- take longer than any limit the other sessions have (session/setup.sql).
SELECT set_config('statement_timeout', '0', false)
