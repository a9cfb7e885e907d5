#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tributary {

/// The reference tokens of an RFC 6901 JSON pointer, decoded ("~1" is '/',
/// "~0" is '~'): "" is the whole value (no tokens), "/a/0" is {"a", "0"}.
/// Nothing when `pointer` is no JSON pointer (it does not start with '/', or
/// has a '~' not followed by 0 or 1).
std::optional<std::vector<std::string>> json_pointer_tokens(std::string_view pointer);

/// The array index a token names ("0", or digits without a leading zero),
/// or nothing: "-", "01", "x" and indexes past what a size_t holds name no
/// element. In an object the same token names a member.
std::optional<std::size_t> json_pointer_index(std::string_view token);

}  // namespace tributary
