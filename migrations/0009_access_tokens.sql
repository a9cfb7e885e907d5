-- OAuth2 access tokens (--oauth2-token-url), one row per source, shared by
-- every loader so that the token endpoint is asked once per expiry, not once
-- per worker. Only tributary_loader may read it (sql/privileges/20_roles.sql):
-- `value` is a live credential.
CREATE TABLE tributary.access_tokens (
    source_id        int PRIMARY KEY REFERENCES tributary.sources (id) ON DELETE CASCADE,
    value            text,
    -- Counts the tokens stored: a 401 rejects one generation, a refresher
    -- takes its lease only for the generation it saw.
    generation       bigint NOT NULL DEFAULT 0,
    expires_at       timestamptz,
    renew_at         timestamptz,
    rejected         boolean NOT NULL DEFAULT false,
    -- A loader asking the token endpoint, until then: one refresh at a time.
    refreshing_until timestamptz
);
