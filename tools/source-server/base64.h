#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace tributary::source_server {

// base64url without padding (RFC 4648 §5): safe in a query string as it is.
std::string base64url_encode(std::string_view bytes);
// Decodes either alphabet, padding optional. Empty when `text` is not base64.
std::optional<std::string> base64_decode(std::string_view text);

}  // namespace tributary::source_server
