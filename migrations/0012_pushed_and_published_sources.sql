-- Sources that are not asked (issue 15): a source is now one of three kinds.
--
--   http       pulled: a loader asks its URL (every source until now)
--   push       pushed: senders POST webhooks to `tributary receive`
--   published  published: applications call tributary.publish() in their
--              own transactions (sql/api/80_publish.sql)
--
-- Only pulled sources have a URL, a cursor and a gate: nobody asks the other
-- two, so loaders never see them (their schedule reads the gates). Their
-- events are keyed by text, like every pulled style but after-id, and the
-- unique index events_source_key is what keeps a retried webhook or a
-- repeated publish from being stored twice.
--
-- Catalogue changes only: nothing here scans the log.
ALTER TABLE tributary.sources DROP CONSTRAINT sources_kind_check;
ALTER TABLE tributary.sources ADD CONSTRAINT sources_kind_check CHECK (kind IN ('http', 'push', 'published'));
ALTER TABLE tributary.sources ALTER COLUMN url DROP NOT NULL;
ALTER TABLE tributary.sources ADD CONSTRAINT sources_url_when_pulled CHECK ((kind = 'http') = (url IS NOT NULL));

-- How a pushed source's requests are authenticated and keyed, as `source
-- add --push`'s flags say (docs/sources.md "Pushed sources"): the scheme,
-- its header, and the name of the environment variable that holds the
-- secret in the receiver's environment, never the secret itself. '{}' for
-- the other kinds.
ALTER TABLE tributary.sources
    ADD COLUMN receiving jsonb NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(receiving) = 'object');

-- The roles whose members may publish to a published source (checked by
-- tributary.publish against the session's login role).
ALTER TABLE tributary.sources ADD COLUMN publishers text[] NOT NULL DEFAULT '{}';
