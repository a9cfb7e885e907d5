#pragma once

// The sender's side of a GitHub-style signature, written with OpenSSL
// directly: the harness shares no code with the receiver it checks.

#include <string>

namespace tributary::crash {

/// "sha256=" + the lowercase hex HMAC-SHA256 of `body` under `secret`: the
/// X-Hub-Signature-256 header's value.
std::string github_signature(const std::string& secret, const std::string& body);

}  // namespace tributary::crash
