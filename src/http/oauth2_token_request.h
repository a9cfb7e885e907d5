#pragma once

#include <variant>

#include "core/shared_access_token.h"
#include "request_credentials.h"

namespace tributary {

/// The OAuth2 client-credentials grant (RFC 6749 §4.4) for `source`'s
/// EnvAuth::oauth2: POSTs `grant_type=client_credentials` (and `scope`) to
/// the token URL with HTTP Basic client authentication (§2.3.1; the id and
/// secret read from the loader's environment, sent as they are) and reads
/// `access_token` and `expires_in` from the JSON answer.
///
/// Failures name the token URL (without query or user info), the HTTP status
/// and the server's OAuth2 `error` code; never the secret, the id or a
/// token. Network, timeouts, 408, 429, 5xx -> transient; 4xx, a token that
/// is not a usable header value or over 8 KiB, an unreadable answer -> failing.
std::variant<IssuedToken, FetchResult> request_oauth2_token(const Source& source, const EnvLookup& env);

}  // namespace tributary
