#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace tributary::source_server {

// Opaque page tokens as real APIs hand them out: base64url of "TAG:ID" (e.g. "p:101",
// the first id of the page a cursor names). Clients must not read them; tests may.
std::string page_token(std::string_view tag, std::int64_t id);
// The id of a token made by page_token(tag, ...); empty for anything else.
std::optional<std::int64_t> read_page_token(std::string_view token, std::string_view tag);

}  // namespace tributary::source_server
