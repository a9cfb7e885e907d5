#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

namespace tributary {

/// An OAuth2 access token as every loader shares it. Holds a secret: never
/// log, show, store outside AccessTokens or put it in a metric.
struct AccessToken {
    std::string value;
    /// Counts the tokens stored for the source: which one a 401 rejected, and
    /// which one a would-be refresher saw.
    std::int64_t generation = 0;
    /// Its renewal time has passed (it is still valid until it expires).
    bool renewal_due = false;
};

/// The OAuth2 tokens of sources, shared by every loader of every process
/// (the database: postgres/postgres_access_tokens.h). Times are the store's
/// own clock, so that hosts whose clocks differ agree on expiry.
class AccessTokens {
public:
    virtual ~AccessTokens() = default;

    /// The source's current token: stored, not rejected, not expired.
    virtual std::optional<AccessToken> current(int source_id) = 0;

    /// Makes the caller the source's one refresher for `lease`, provided
    /// nobody else's lease runs and the token stored is still generation
    /// `seen` (0: none) or is not usable (none, rejected, expired): false
    /// when another loader refreshes, or already did.
    virtual bool try_become_refresher(int source_id, std::int64_t seen, std::chrono::seconds lease) = 0;

    /// Stores a new token (the next generation) and ends the refresher's
    /// lease: it expires after `lifetime`, its renewal is due after `renew_after`.
    virtual void store(int source_id, const std::string& value, std::chrono::seconds lifetime,
                       std::chrono::seconds renew_after) = 0;

    /// The source answered 401 to token `generation`: no one uses it again
    /// (a newer one stays).
    virtual void reject(int source_id, std::int64_t generation) = 0;
};

}  // namespace tributary
