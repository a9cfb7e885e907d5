#include "json_pointer.h"

#include <limits>

namespace tributary {

std::optional<std::vector<std::string>> json_pointer_tokens(std::string_view pointer) {
    std::vector<std::string> tokens;
    if (pointer.empty()) return tokens;
    if (pointer.front() != '/') return std::nullopt;
    for (std::size_t i = 0; i < pointer.size(); ++i) {
        const char c = pointer[i];
        if (c == '/') {
            tokens.emplace_back();
        } else if (c != '~') {
            tokens.back() += c;
        } else {
            const char escaped = i + 1 < pointer.size() ? pointer[++i] : '\0';
            if (escaped != '0' && escaped != '1') return std::nullopt;
            tokens.back() += escaped == '0' ? '~' : '/';
        }
    }
    return tokens;
}

std::optional<std::size_t> json_pointer_index(std::string_view token) {
    if (token.empty() || (token.size() > 1 && token.front() == '0')) return std::nullopt;
    constexpr auto kMax = std::numeric_limits<std::size_t>::max();
    std::size_t index = 0;
    for (const char c : token) {
        if (c < '0' || c > '9') return std::nullopt;
        const auto digit = static_cast<std::size_t>(c - '0');
        if (index > (kMax - digit) / 10) return std::nullopt;
        index = index * 10 + digit;
    }
    return index;
}

}  // namespace tributary
