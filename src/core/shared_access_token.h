#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <variant>

#include "access_tokens.h"
#include "fetch_result.h"
#include "source.h"
#include "stop_signal.h"

namespace tributary {

/// A token as the token endpoint issued it (RFC 6749 §5.1).
struct IssuedToken {
    std::string value;
    std::optional<std::chrono::seconds> lifetime;  ///< expires_in, when given
};

/// Asks the source's token endpoint for a new token (http/oauth2_token_request.h),
/// or says why it could not, without a secret in the words.
using TokenRequest = std::function<std::variant<IssuedToken, FetchResult>(const Source&)>;

/// The OAuth2 token of a source, fetched once and shared through
/// AccessTokens by every loader of every process: whoever finds no usable
/// token, or one whose renewal is due, tries to become the one refresher; the
/// others use the token still valid, or wait for the refresher's.
///
/// Renewal is due 60 s before expiry (half the lifetime for tokens that live
/// under two minutes), so a token in use does not expire between the
/// moment it is read and the request; a token without expires_in is taken
/// to live an hour. A 401 rejects the token sent, so the next request asks
/// for a new one.
class SharedAccessToken {
public:
    struct Timing {
        /// How long a refresher holds the endpoint for itself: its request's
        /// timeout plus this (so a refresher that died frees it).
        std::chrono::seconds lease_margin{5};
        /// How often, and for how long at most, a loader without a valid
        /// token polls for the refresher's.
        std::chrono::milliseconds poll_every{100};
        std::chrono::milliseconds wait_at_most{15000};
    };

    SharedAccessToken(AccessTokens& tokens, TokenRequest request, const StopSignal& stop)
        : SharedAccessToken(tokens, std::move(request), stop, Timing{}) {}
    SharedAccessToken(AccessTokens& tokens, TokenRequest request, const StopSignal& stop, Timing timing);

    /// The token to send for `source` (which has EnvAuth::oauth2), or why
    /// there is none: the endpoint failed, or another loader's refresh took
    /// too long (transient).
    std::variant<AccessToken, FetchResult> token_for(const Source& source);

    /// `source` answered 401 to `token`.
    void rejected(const Source& source, const AccessToken& token);

    /// When a token issued with `lifetime` is to be renewed.
    static std::chrono::seconds renew_after(std::chrono::seconds lifetime);

private:
    /// Asks the endpoint as the refresher and stores the answer.
    std::variant<AccessToken, FetchResult> refresh(const Source& source);

    AccessTokens& tokens_;
    TokenRequest request_;
    const StopSignal& stop_;
    Timing timing_;
};

}  // namespace tributary
