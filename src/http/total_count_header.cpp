#include "total_count_header.h"

#include <cstddef>

namespace tributary {

std::optional<std::int64_t> total_count(const std::vector<std::string>& values) {
    if (values.empty()) return std::nullopt;
    const std::string& text = values.front();
    const auto first = text.find_first_not_of(" \t");
    if (first == std::string::npos) return std::nullopt;
    const auto last = text.find_last_not_of(" \t");
    constexpr std::size_t kMostDigits = 18;  // below 10^18: within int64
    if (last - first + 1 > kMostDigits) return std::nullopt;
    std::int64_t total = 0;
    for (std::size_t i = first; i <= last; ++i) {
        if (text[i] < '0' || text[i] > '9') return std::nullopt;
        total = total * 10 + (text[i] - '0');
    }
    return total;
}

}  // namespace tributary
