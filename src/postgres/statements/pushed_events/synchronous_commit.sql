-- An answer means stored: the receiver's commits wait for the WAL flush even
-- where the server or the role turned synchronous_commit off.
SET synchronous_commit = on
