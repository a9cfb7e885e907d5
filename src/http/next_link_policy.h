#pragma once

#include <string>
#include <variant>
#include <vector>

namespace tributary {

/// Why a next link is not followed; names the link's host, never its query
/// (which may hold tokens).
struct RefusedLink {
    std::string why;
};

/// Where a next link (from a Link header or a body) may lead: `reference`
/// resolved against `asked` (the URL of the request that returned it, RFC
/// 3986 §5), accepted only when it is http(s) without user info and either
/// its scheme, host and port are the source URL's, or its host is one of
/// `allowed_hosts` (--allow-redirect-host, any port) and it does not go from
/// https to http. Returns the absolute URL to ask next.
std::variant<std::string, RefusedLink> resolve_next_link(const std::string& source_url, const std::string& asked,
                                                         const std::string& reference,
                                                         const std::vector<std::string>& allowed_hosts);

}  // namespace tributary
