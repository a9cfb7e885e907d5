#pragma once

#include <string>
#include <string_view>

namespace tributary::webhook {

/// HMAC-SHA256 of `data` with `key`: the 32 raw bytes.
std::string hmac_sha256(std::string_view key, std::string_view data);

/// `bytes` as lowercase hex.
std::string to_hex(std::string_view bytes);

/// `bytes` as standard base64, padded (what Shopify and others send).
std::string to_base64(std::string_view bytes);

/// Whether `a` and `b` are equal, in a time that depends only on their
/// lengths (a length is no secret: every signature of a scheme has one).
bool equal_in_constant_time(std::string_view a, std::string_view b);

}  // namespace tributary::webhook
