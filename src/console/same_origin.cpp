#include "same_origin.h"

#include <algorithm>
#include <cctype>
#include <string_view>

namespace tributary::console {

namespace {

struct HostPort {
    std::string host;  ///< lower case; an IPv6 address keeps its brackets
    std::string port;
};

std::string lower(std::string_view text) {
    std::string out(text);
    std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
    return out;
}

bool all_digits(std::string_view text) {
    return !text.empty() && std::all_of(text.begin(), text.end(), [](unsigned char c) { return std::isdigit(c); });
}

/// "host", "host:port", "[::1]" or "[::1]:port"; the port defaulted.
std::optional<HostPort> split_authority(std::string_view authority, std::string_view default_port) {
    if (authority.empty()) return std::nullopt;
    std::string_view host = authority, port = default_port;
    if (authority.front() == '[') {
        const auto close = authority.find(']');
        if (close == std::string_view::npos) return std::nullopt;
        host = authority.substr(0, close + 1);
        const auto rest = authority.substr(close + 1);
        if (!rest.empty()) {
            if (rest.front() != ':') return std::nullopt;
            port = rest.substr(1);
        }
    } else if (const auto colon = authority.rfind(':'); colon != std::string_view::npos) {
        host = authority.substr(0, colon);
        port = authority.substr(colon + 1);
    }
    if (host.empty() || !all_digits(port)) return std::nullopt;
    return HostPort{lower(host), std::string(port)};
}

/// An Origin is "scheme://authority" with nothing after.
std::optional<HostPort> origin_host_port(std::string_view origin) {
    const auto separator = origin.find("://");
    if (separator == std::string_view::npos) return std::nullopt;
    const auto scheme = lower(origin.substr(0, separator));
    const auto authority = origin.substr(separator + 3);
    if (authority.find_first_of("/?#@") != std::string_view::npos) return std::nullopt;
    if (scheme == "http") return split_authority(authority, "80");
    if (scheme == "https") return split_authority(authority, "443");
    return std::nullopt;
}

}  // namespace

bool is_same_origin(const std::optional<std::string>& origin, const std::optional<std::string>& host,
                    const std::optional<std::string>& sec_fetch_site) {
    if (sec_fetch_site) return lower(*sec_fetch_site) == "same-origin";
    if (!origin || !host) return false;
    const auto from = origin_host_port(*origin);
    if (!from) return false;
    // Host carries no scheme: without a port it means the origin scheme's default.
    const auto to = split_authority(*host, from->port);
    return to && from->host == to->host && from->port == to->port;
}

bool is_loopback_host(const std::string& host) {
    std::string h = lower(host);
    if (h.size() >= 2 && h.front() == '[' && h.back() == ']') h = h.substr(1, h.size() - 2);
    if (h == "localhost" || h == "::1") return true;
    // 127.a.b.c: dotted digits only.
    if (h.rfind("127.", 0) != 0) return false;
    int dots = 0;
    for (const char c : h) {
        if (c == '.') ++dots;
        else if (!std::isdigit(static_cast<unsigned char>(c))) return false;
    }
    return dots == 3;
}

bool is_loopback_host_header(const std::optional<std::string>& host) {
    if (!host) return true;
    const auto parsed = split_authority(*host, "80");
    return parsed && is_loopback_host(parsed->host);
}

}  // namespace tributary::console
