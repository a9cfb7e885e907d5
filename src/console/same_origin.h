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

/// Whether `host` (a host name or address, as in --listen, IPv6 with or
/// without brackets) is this machine's loopback: localhost, 127.0.0.0/8, ::1.
bool is_loopback_host(const std::string& host);

/// Whether a request's `Host` header names the loopback (any port), or is
/// absent. A console listening on the loopback answers only such requests:
/// a page elsewhere whose name is made to resolve to 127.0.0.1 (DNS
/// rebinding) sends its own name as Host, and would otherwise read the
/// console as if it were its own origin.
bool is_loopback_host_header(const std::optional<std::string>& host);

}  // namespace tributary::console
