#pragma once

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "core/fetch_result.h"
#include "core/source.h"

namespace tributary {

/// Reads one environment variable: nullptr when it is not set. getenv in
/// production; tests inject a map.
using EnvLookup = std::function<const char*(const char*)>;

/// What a source's EnvAuth adds to a request once its variables are read.
/// Holds secrets: never log, show or store it.
struct RequestCredentials {
    std::vector<std::string> headers;                        ///< "Name: value" lines
    std::vector<std::pair<std::string, std::string>> query;  ///< parameter, value (not yet URL-encoded)
};

/// The credentials, or a failing FetchResult naming the variable (and its
/// flag) that is not set, empty or holds a line break; never a value.
/// OAuth2 is not read here: its token comes from the shared AccessTokens.
std::variant<RequestCredentials, FetchResult> request_credentials(const EnvAuth& auth, const EnvLookup& env);

/// The value of `variable` (set by `flag`), or a failing FetchResult naming
/// both when it is not set, empty (a forgotten export) or holds CR or LF (a
/// header injection); never the value.
std::variant<std::string, FetchResult> environment_value(const EnvLookup& env, const std::string& variable,
                                                         const char* flag);

/// RFC 4648 base64 with padding (for Authorization: Basic).
std::string base64(const std::string& bytes);

/// Why an EnvAuth cannot be stored (`source add`): a variable name that is
/// not [A-Za-z_][A-Za-z0-9_]*, a header name that is not an HTTP token, a
/// query parameter that is empty, half a Basic pair, an OAuth2 token URL
/// that is not http(s). Nothing when it is fine.
std::optional<std::string> env_auth_problem(const EnvAuth& auth);

}  // namespace tributary
