-- The herald (issue 27): one process at a time announces the log's head to
-- consumers, so that no event writer sends NOTIFY in its own transaction.
-- Its lease is one row of the maintainer's lease's shape (migration 0013:
-- holder, token, expires_at, acquired_at, renewed_at; the same defaults and
-- the one-row key), held by one process at a time
-- (sql/internal/79_leases.sql, 87_herald.sql).
CREATE TABLE IF NOT EXISTS tributary.herald_lease (LIKE tributary.maintainer_lease INCLUDING ALL);
INSERT INTO tributary.herald_lease DEFAULT VALUES ON CONFLICT DO NOTHING;
