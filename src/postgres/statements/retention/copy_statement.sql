-- The COPY that streams partition $1 in format $2 (csv or text).
SELECT tributary.archive_copy_statement($1, $2)
