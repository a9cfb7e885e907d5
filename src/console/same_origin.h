#pragma once

#include <optional>
#include <string>

namespace tributary::console {

/// Whether an action (POST) comes from the console's own page, so that no
/// other site can make a browser act for it (CSRF): `Sec-Fetch-Site:
/// same-origin` (sent by every current browser, it decides when present), or
/// else an `Origin` whose host and port are the request's `Host` (default
/// ports by scheme; hosts compared ignoring case). No Origin, `Origin: null`
/// or no Host: refused. Scripts send `Origin: http://HOST:PORT` themselves.
bool is_same_origin(const std::optional<std::string>& origin, const std::optional<std::string>& host,
                    const std::optional<std::string>& sec_fetch_site);

}  // namespace tributary::console
