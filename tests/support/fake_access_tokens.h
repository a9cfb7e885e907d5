#pragma once

#include <map>

#include "core/access_tokens.h"
#include "core/clock.h"

namespace tributary::fakes {

/// AccessTokens in memory, on a test's clock, shared by the workers of a test
/// as the table is: the same rules as the SQL (migration 0009).
class FakeAccessTokens : public AccessTokens {
public:
    explicit FakeAccessTokens(const Clock& clock) : clock_(clock) {}

    std::optional<AccessToken> current(int source_id) override;
    bool try_become_refresher(int source_id, std::int64_t seen, std::chrono::seconds lease) override;
    void store(int source_id, const std::string& value, std::chrono::seconds lifetime,
               std::chrono::seconds renew_after) override;
    void reject(int source_id, std::int64_t generation) override;

private:
    struct Row {
        std::optional<std::string> value;
        std::int64_t generation = 0;
        Clock::time_point expires_at{};
        Clock::time_point renew_at{};
        bool rejected = false;
        std::optional<Clock::time_point> refreshing_until;
    };
    const Clock& clock_;
    std::map<int, Row> rows_;
};

}  // namespace tributary::fakes
