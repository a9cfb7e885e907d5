-- Back to position $2, none of its page taken: records stored already are skipped by key.
UPDATE tributary.cursors SET position = $2, taken = 0 WHERE source_id = $1
