-- `source edit` (sql/api/86_source_edit.sql): source $1's settings become $3..$8 (the lock namespace
-- $2; headers $4 newline-separated, as add_source.sql takes them), with a rewind to $9 unless NULL.
SELECT array_to_string(changed, E'\n'), rewound_from, revision
  FROM tributary.source_edit($1, $2, $3, string_to_array($4, E'\n'), $5, $6, $7, $8::jsonb, $9)
