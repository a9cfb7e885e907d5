-- `source edit` (issue 26): a source's settings change after it stored events.
--
-- revision counts a source's edits. The loader reads it with the source's
-- settings (the schedule) and hands it to its claim, which refuses a turn
-- whose settings are older than the row's: a turn never asks with the old
-- settings at a cursor an edit has rewound for the new ones
-- (sql/internal/50_loader_claim.sql).
ALTER TABLE tributary.sources ADD COLUMN revision bigint NOT NULL DEFAULT 0;

-- Every `source edit`: who changed which settings of a source, from what to
-- what (secrets redacted: header values and a URL's user info and query are
-- never written here), and the rewind it came with, if any.
CREATE TABLE tributary.source_edits (
    id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    source_id    int NOT NULL REFERENCES tributary.sources (id) ON DELETE CASCADE,
    revision     bigint NOT NULL,
    changes      jsonb NOT NULL,
    rewound_from text,
    rewound_to   text,
    edited_by    text NOT NULL DEFAULT session_user,
    edited_at    timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX source_edits_source ON tributary.source_edits (source_id, id);
