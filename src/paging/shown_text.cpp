#include "shown_text.h"

namespace tributary {

std::string quoted(std::string_view text) {
    constexpr std::size_t kShown = 40;
    std::string out = "\"";
    for (const char ch : text.substr(0, kShown)) {
        const auto byte = static_cast<unsigned char>(ch);
        out += (byte >= 0x20 && byte < 0x7f) ? ch : '?';
    }
    out += '"';
    if (text.size() > kShown) out += "... (" + std::to_string(text.size()) + " characters)";
    return out;
}

std::string quoted_url(std::string_view url) {
    const auto end = url.find_first_of("?#");
    std::string shown(url.substr(0, end));
    const auto scheme = shown.find("://");
    const auto host = scheme == std::string::npos ? 0 : scheme + 3;
    const auto at = shown.find('@', host);
    const auto slash = shown.find('/', host);
    if (at != std::string::npos && (slash == std::string::npos || at < slash)) shown.erase(host, at + 1 - host);
    if (end != std::string_view::npos) shown += "?...";
    return quoted(shown);
}

}  // namespace tributary
