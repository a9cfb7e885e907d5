#pragma once

#include <optional>
#include <string>
#include <vector>

namespace tributary {

/// The URI-reference of the first link whose relation types (RFC 8288 §3.3:
/// a space-separated list, quoted or not, case-insensitive) include "next",
/// across every Link header of a response (in their order) and every link in
/// each. Unresolved: resolve it against the URL asked (next_link_policy.h).
/// Nothing when no link is "next" or a header cannot be parsed up to it.
std::optional<std::string> next_link(const std::vector<std::string>& link_headers);

}  // namespace tributary
