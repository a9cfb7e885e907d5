-- Whether the log is distributed over Citus: the herald's default beat is
-- slower there (docs/citus.md, wake-ups).
SELECT tributary.log_is_distributed()
