#pragma once

#include <algorithm>
#include <string_view>

namespace tributary {

/// Whether `name` may name a source or a consumer group: 1 to 100 of
/// A-Z a-z 0-9 . _ -, the rule the schema's CHECK constraints hold (so it
/// is also safe in a URL path and a log line).
inline bool is_valid_name(std::string_view name) {
    return !name.empty() && name.size() <= 100 && std::all_of(name.begin(), name.end(), [](char c) {
        return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
               c == '-';
    });
}

}  // namespace tributary
