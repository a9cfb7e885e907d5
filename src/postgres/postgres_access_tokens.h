#pragma once

#include "core/access_tokens.h"
#include "postgres_session.h"

namespace tributary::postgres {

/// AccessTokens on the table tributary.access_tokens (migration 0009), one
/// statement each, autocommitted: the row is the only shared state, and the
/// refresher's lease an update of it conditional on what the caller saw.
/// Times are the database's clock. Statements bind the token as a parameter:
/// it never appears in a statement's text (nor so in the server's log of
/// statements, short of log_parameter_max_length).
class PostgresAccessTokens : public AccessTokens {
public:
    explicit PostgresAccessTokens(PostgresSession& session);

    std::optional<AccessToken> current(int source_id) override;
    bool try_become_refresher(int source_id, std::int64_t seen, std::chrono::seconds lease) override;
    void store(int source_id, const std::string& value, std::chrono::seconds lifetime,
               std::chrono::seconds renew_after) override;
    void reject(int source_id, std::int64_t generation) override;

private:
    PostgresSession& session_;
};

}  // namespace tributary::postgres
