#pragma once

// The pushed sources of a run (issue 15): each added with `source add NAME
// --push` and an authentication the sender can satisfy, and the environment
// the receivers need for it (the secret's or the token's variable).

#include <string>
#include <vector>

namespace tributary::crash {

struct PushedSourceSpec {
    std::string name;        ///< crash.push-N
    std::string auth;        ///< "github" (X-Hub-Signature-256 over the body) or "bearer"
    std::string variable;    ///< the receiver's environment variable holding the secret
    std::string secret;      ///< its value, known to the sender
    std::string key_header;  ///< the header whose value keys a request's events
};

/// `count` sources: crash.push-0 signed the GitHub way, crash.push-1 with a
/// bearer token, and so on alternately. Secrets are fixed per run by `seed`.
std::vector<PushedSourceSpec> pushed_sources(int count, unsigned long long seed);

/// `source add` arguments for one of them (after the binary and --db).
std::vector<std::string> source_add_args(const PushedSourceSpec& source);

/// VAR=value for each source's variable: the receivers' extra environment.
std::vector<std::string> receiver_environment(const std::vector<PushedSourceSpec>& sources);

}  // namespace tributary::crash
