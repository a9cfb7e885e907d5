-- Source changes reach running loaders at commit (a hint, see control_channel.h).
SELECT pg_notify($1, 'sources')
