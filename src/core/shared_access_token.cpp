#include "shared_access_token.h"

#include <algorithm>

#include <spdlog/spdlog.h>

namespace tributary {
namespace {

using namespace std::chrono_literals;
using Status = FetchResult::Status;

constexpr std::chrono::seconds kAssumedLifetime = 1h;
constexpr std::chrono::seconds kRenewBefore = 60s;

std::chrono::seconds lease_for(const Source& source, std::chrono::seconds margin) {
    const auto timeout = std::chrono::ceil<std::chrono::seconds>(source.endpoint.timeout);
    return std::max(timeout, 1s) + margin;
}

}  // namespace

SharedAccessToken::SharedAccessToken(AccessTokens& tokens, TokenRequest request, const StopSignal& stop, Timing timing)
    : tokens_(tokens), request_(std::move(request)), stop_(stop), timing_(timing) {}

std::chrono::seconds SharedAccessToken::renew_after(std::chrono::seconds lifetime) {
    return lifetime - std::min(kRenewBefore, lifetime / 2);
}

std::variant<AccessToken, FetchResult> SharedAccessToken::token_for(const Source& source) {
    const auto give_up_at = std::chrono::steady_clock::now() + timing_.wait_at_most;
    for (;;) {
        const std::optional<AccessToken> current = tokens_.current(source.id);
        if (current && !current->renewal_due) return *current;
        const std::int64_t seen = current ? current->generation : 0;
        if (tokens_.try_become_refresher(source.id, seen, lease_for(source, timing_.lease_margin))) {
            auto refreshed = refresh(source);
            // A renewal that failed while the old token is valid: use it; the
            // lease keeps the endpoint from being asked again until it ends.
            if (std::holds_alternative<FetchResult>(refreshed) && current) return *current;
            return refreshed;
        }
        // Someone else refreshes (or just did): the valid token will do meanwhile.
        if (current) return *current;
        if (std::chrono::steady_clock::now() >= give_up_at || stop_.wait_for(timing_.poll_every))
            return FetchResult::failure(
                Status::transient,
                "no OAuth2 token yet: another loader is asking the token endpoint of source " + source.name);
    }
}

std::variant<AccessToken, FetchResult> SharedAccessToken::refresh(const Source& source) {
    auto issued = request_(source);
    if (auto* failure = std::get_if<FetchResult>(&issued)) return std::move(*failure);
    const IssuedToken& token = std::get<IssuedToken>(issued);
    const std::chrono::seconds lifetime = std::max(token.lifetime.value_or(kAssumedLifetime), 1s);
    tokens_.store(source.id, token.value, lifetime, renew_after(lifetime));
    spdlog::info("source {}: new OAuth2 access token, valid for {} s", source.name, lifetime.count());
    // Read back, for its generation: what a 401 will reject.
    if (auto stored = tokens_.current(source.id)) return *stored;
    return FetchResult::failure(Status::transient,
                                "the OAuth2 token of source " + source.name + " expired as soon as it was stored");
}

void SharedAccessToken::rejected(const Source& source, const AccessToken& token) {
    tokens_.reject(source.id, token.generation);
    spdlog::warn("source {}: HTTP 401 with the OAuth2 access token: the next request asks for a new one", source.name);
}

}  // namespace tributary
