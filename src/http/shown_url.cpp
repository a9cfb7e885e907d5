#include "shown_url.h"

namespace tributary {

std::string shown_url(const std::string& url) {
    std::string shown = url.substr(0, url.find_first_of("?#"));
    const auto scheme = shown.find("://");
    const auto host = scheme == std::string::npos ? 0 : scheme + 3;
    const auto at = shown.find('@', host);
    const auto slash = shown.find('/', host);
    if (at != std::string::npos && (slash == std::string::npos || at < slash)) shown.erase(host, at + 1 - host);
    return shown;
}

}  // namespace tributary
