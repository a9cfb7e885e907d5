-- The log and its bookkeeping. Forward-only: never edit a migration that has
-- shipped; add the next number instead.

CREATE SCHEMA IF NOT EXISTS tributary;

CREATE TABLE tributary.sources (
    id          int GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    name        text NOT NULL UNIQUE CHECK (name ~ '^[A-Za-z0-9._-]{1,100}$'),
    kind        text NOT NULL DEFAULT 'http' CHECK (kind = 'http'),
    url         text NOT NULL,
    -- "Name: value" request headers; may hold credentials.
    headers     text[] NOT NULL DEFAULT '{}',
    interval_ms int NOT NULL DEFAULT 200 CHECK (interval_ms BETWEEN 1 AND 86400000),
    batch_size  int NOT NULL DEFAULT 1000 CHECK (batch_size BETWEEN 1 AND 10000),
    timeout_ms  int NOT NULL DEFAULT 10000 CHECK (timeout_ms BETWEEN 1 AND 3600000),
    enabled     boolean NOT NULL DEFAULT true,
    created_at  timestamptz NOT NULL DEFAULT now()
);

-- The cursor: id of the last stored event. Moved only by a compare-and-set in
-- the transaction that stores the batch.
CREATE TABLE tributary.cursors (
    source_id      int PRIMARY KEY REFERENCES tributary.sources (id) ON DELETE CASCADE,
    last_event_id  bigint NOT NULL,
    events_stored  bigint NOT NULL DEFAULT 0,
    last_stored_at timestamptz
) WITH (fillfactor = 50);

-- The gate: when a source may next be asked, shared by every loader. Updated
-- on every request, so it is narrow, has no index on the updated columns and
-- leaves room in its pages: the updates stay HOT.
CREATE TABLE tributary.gates (
    source_id       int PRIMARY KEY REFERENCES tributary.sources (id) ON DELETE CASCADE,
    next_allowed_at timestamptz NOT NULL DEFAULT '-infinity',
    last_request    timestamptz,
    last_success_at timestamptz,
    failures        int NOT NULL DEFAULT 0,
    -- Counts reservations; closing a slot names the one it closes, so a
    -- stalled loader's late update cannot shorten another's lease.
    lease           bigint NOT NULL DEFAULT 0,
    -- The last completed request found nothing new (for `run --until-idle`).
    drained         boolean NOT NULL DEFAULT false,
    -- Events the source said it still holds after the last batch, if it says.
    backlog         bigint,
    state           text NOT NULL DEFAULT 'ok' CHECK (state IN ('ok', 'transient', 'throttled', 'failing')),
    last_error      text,
    last_error_at   timestamptz
) WITH (fillfactor = 30);

-- The log. Insert-only.
CREATE TABLE tributary.events (
    seq       bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    source_id int NOT NULL REFERENCES tributary.sources (id),
    event_id  bigint NOT NULL,
    payload   jsonb NOT NULL,
    loaded_at timestamptz NOT NULL DEFAULT now(),
    -- Commit-order watermark for readers: see DESIGN.md §4.
    tx_id     xid8 NOT NULL DEFAULT pg_current_xact_id(),
    UNIQUE (source_id, event_id)
);
