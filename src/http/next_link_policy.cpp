#include "next_link_policy.h"

#include <algorithm>
#include <cctype>
#include <memory>
#include <optional>

#include <curl/curl.h>
#include <spdlog/fmt/fmt.h>

namespace tributary {
namespace {

struct UrlFree {
    void operator()(CURLU* url) const noexcept { curl_url_cleanup(url); }
};
using Url = std::unique_ptr<CURLU, UrlFree>;

/// One part of a parsed URL (lowercased for scheme and host), nothing when absent.
std::optional<std::string> part(CURLU* url, CURLUPart which, unsigned flags = 0) {
    char* raw = nullptr;
    if (curl_url_get(url, which, &raw, flags) != CURLUE_OK || raw == nullptr) return std::nullopt;
    std::string value(raw);
    curl_free(raw);
    if (which == CURLUPART_SCHEME || which == CURLUPART_HOST)
        std::transform(value.begin(), value.end(), value.begin(),
                       [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return value;
}

Url parsed(const std::string& text) {
    Url url(curl_url());
    if (!url || curl_url_set(url.get(), CURLUPART_URL, text.c_str(), 0) != CURLUE_OK) return nullptr;
    return url;
}

bool host_allowed(const std::string& host, const std::vector<std::string>& allowed_hosts) {
    return std::any_of(allowed_hosts.begin(), allowed_hosts.end(), [&host](std::string allowed) {
        std::transform(allowed.begin(), allowed.end(), allowed.begin(),
                       [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
        return allowed == host;
    });
}

/// Printable ASCII, short: a host goes into an error stored in PostgreSQL.
std::string shown_host(const std::string& host) {
    std::string out = host.substr(0, 100);
    for (char& c : out)
        if (c < 0x20 || c > 0x7e) c = '?';
    return out;
}

}  // namespace

std::variant<std::string, RefusedLink> resolve_next_link(const std::string& source_url, const std::string& asked,
                                                         const std::string& reference,
                                                         const std::vector<std::string>& allowed_hosts) {
    Url source = parsed(source_url);
    Url next = parsed(asked);
    if (!source || !next) return RefusedLink{"the source URL cannot be parsed"};
    // Setting a relative URL on a parsed one resolves it (RFC 3986 §5.2).
    if (reference.empty() || curl_url_set(next.get(), CURLUPART_URL, reference.c_str(), 0) != CURLUE_OK)
        return RefusedLink{"the next link is not a URI reference"};
    // A fragment is never sent; the server would not see it.
    curl_url_set(next.get(), CURLUPART_FRAGMENT, nullptr, 0);

    const auto scheme = part(next.get(), CURLUPART_SCHEME);
    const auto host = part(next.get(), CURLUPART_HOST);
    if (!scheme || (*scheme != "http" && *scheme != "https") || !host)
        return RefusedLink{fmt::format("the next link's scheme {} is not http or https", scheme.value_or("(none)"))};
    if (part(next.get(), CURLUPART_USER) || part(next.get(), CURLUPART_PASSWORD))
        return RefusedLink{fmt::format("the next link to {} carries user info", shown_host(*host))};

    const bool same_origin =
        scheme == part(source.get(), CURLUPART_SCHEME) && host == part(source.get(), CURLUPART_HOST) &&
        part(next.get(), CURLUPART_PORT, CURLU_DEFAULT_PORT) == part(source.get(), CURLUPART_PORT, CURLU_DEFAULT_PORT);
    if (!same_origin) {
        if (!host_allowed(*host, allowed_hosts))
            return RefusedLink{
                fmt::format("the next link leads to {}://{}, not the source's own scheme, host and port; "
                            "--allow-redirect-host {} would allow it",
                            *scheme, shown_host(*host), shown_host(*host))};
        if (*scheme == "http" && part(source.get(), CURLUPART_SCHEME) == "https")
            return RefusedLink{fmt::format("the next link to {} goes from https to http", shown_host(*host))};
    }
    const auto url = part(next.get(), CURLUPART_URL);
    if (!url) return RefusedLink{"the next link cannot be written back as a URL"};
    return *url;
}

}  // namespace tributary
