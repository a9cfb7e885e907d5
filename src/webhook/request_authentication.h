#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "pushed_source.h"

namespace tributary::webhook {

/// Whether a request proved it comes from the source's sender.
struct AuthVerdict {
    enum class Kind {
        ok,
        refused,    ///< 401: unsigned, badly signed, the wrong token
        no_secret,  ///< 503: the receiver's environment lacks the secret's variable (the operator's to fix)
    };
    Kind kind = Kind::ok;
    /// refused: why, for the 401's body and the log (never the secret, nor
    /// what was expected); no_secret: the variable's name.
    std::string reason;
};

/// A request header's value by name, none when absent (IncomingRequest::header).
using HeaderLookup = std::function<std::optional<std::string>(std::string_view name)>;
/// A variable of the receiver's environment by name (WebhookReceiver::Environment).
using EnvironmentLookup = std::function<std::optional<std::string>(const std::string& name)>;

/// Checks a request against its source's PushAuthentication, before anything
/// of its body is parsed: none passes; a signature is checked over the raw
/// `body` (check_signature, `now` for Stripe's tolerance); a bearer token is
/// "Authorization: Bearer <token>" (the scheme's name in any case), the
/// token compared in constant time. The secret's variable is looked up at
/// each request: an unset or empty one is no_secret, never a secret of ""
/// that anyone could sign with.
AuthVerdict authenticate(const PushAuthentication& auth, const HeaderLookup& header, std::string_view body,
                         const EnvironmentLookup& environment, std::chrono::system_clock::time_point now);

}  // namespace tributary::webhook
