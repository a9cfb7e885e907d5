#pragma once

// Plain HTTP calls to the control endpoints of the source server and the
// fault proxy (never to the loader: it has none).

#include <string>

namespace tributary::crash {

/// GET base_url + path; throws unless the answer is 200.
std::string http_get(const std::string& base_url, const std::string& path, int timeout_s = 30);

/// POST base_url + path without a body; throws unless the answer is 200.
std::string http_post(const std::string& base_url, const std::string& path);

}  // namespace tributary::crash
