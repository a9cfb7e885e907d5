-- Every policy, the global one ('>') first.
SELECT pattern, (extract(epoch FROM keep) * 1000)::bigint, max_bytes, drop_unconsumed, archive
  FROM tributary.retention_policies
 ORDER BY pattern <> '>', pattern
