-- Group $1's lease in milliseconds; P0002 when there is no such group.
SELECT (extract(epoch FROM tributary.group_lease($1::text)) * 1000)::bigint
