#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "webhook_signature.h"

namespace tributary::webhook {

/// How a pushed source's requests prove who sent them (`source add --push`'s
/// flags, docs/sources.md "Pushed sources"). The secret itself is never
/// stored: `variable` names the receiver's environment variable holding it.
struct PushAuthentication {
    enum class Method {
        none,       ///< --insecure-no-auth: anyone who can reach the receiver
        signature,  ///< an HMAC-SHA256 of the body (GitHub, Stripe, hmac-hex, hmac-base64)
        bearer,     ///< Authorization: Bearer <the variable's value>
    };
    Method method = Method::none;
    /// Its name in the catalogue and in `source list`: github, stripe,
    /// hmac-hex, hmac-base64, bearer or none.
    std::string name = "none";
    SignatureScheme signature;  ///< method == signature
    std::string variable;       ///< the HMAC secret's or the bearer token's variable
};

/// Requests with bodies larger than this are refused (413) before they are read whole.
inline constexpr std::size_t kDefaultMaxBodyBytes = 1024 * 1024;
inline constexpr std::size_t kLargestMaxBodyBytes = 64 * 1024 * 1024;

/// A source whose events senders POST to `tributary receive`.
struct PushedSource {
    int id = 0;
    std::string name;
    bool enabled = true;
    PushAuthentication auth;
    /// JSON pointers into each event: its key (more than one: a composite
    /// key, stored as the JSON array of the parts, as for pulled sources).
    std::vector<std::string> key{"/id"};
    /// A request header whose value, when the request has it, keys the
    /// request's events instead (one event: the value; several: value#index).
    std::string key_header = "Idempotency-Key";
    std::size_t max_body_bytes = kDefaultMaxBodyBytes;
    /// Why the catalogue's row cannot be used (edited by hand); empty when it
    /// can. Such a source is answered 503 and the reason logged.
    std::string misconfigured;
};

}  // namespace tributary::webhook
