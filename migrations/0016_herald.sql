-- The herald (issue 27): one process at a time announces the log's head to
-- consumers, so that no event writer sends NOTIFY in its own transaction.
-- Its lease is one row, as the maintainer's (migration 0013), held by one
-- process at a time (sql/internal/87_herald.sql says how it is used).
CREATE TABLE IF NOT EXISTS tributary.herald_lease (
    id          boolean PRIMARY KEY DEFAULT true CHECK (id),
    holder      text,
    -- Grows by one with every new holder: each announcement names the token
    -- it holds, so a stalled herald that lost the lease announces no more.
    token       bigint NOT NULL DEFAULT 0,
    expires_at  timestamptz NOT NULL DEFAULT '-infinity',
    acquired_at timestamptz,
    renewed_at  timestamptz
);
INSERT INTO tributary.herald_lease DEFAULT VALUES ON CONFLICT DO NOTHING;
