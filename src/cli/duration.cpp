#include "duration.h"

#include <cstdint>
#include <limits>

#include "usage_error.h"

namespace tributary::cli {

std::chrono::milliseconds parse_duration(const std::string& text) {
    std::size_t digits = 0;
    while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') ++digits;
    const std::string unit = text.substr(digits);
    std::int64_t scale = 0;
    if (unit.empty() || unit == "s") scale = 1000;
    else if (unit == "ms") scale = 1;
    else if (unit == "m") scale = 60 * 1000;
    else if (unit == "h") scale = 3600 * 1000;
    const auto bad = UsageError("invalid duration '" + text + "': use a positive number with ms, s, m or h, e.g. 55s");
    if (digits == 0 || digits > 12 || scale == 0) throw bad;
    const auto value = std::stoll(text.substr(0, digits));
    // Beyond ten years a deadline means "never" and overflows clocks.
    constexpr std::int64_t kTenYearsMs = std::int64_t{10} * 366 * 24 * 3600 * 1000;
    if (value <= 0 || value > kTenYearsMs / scale) throw bad;
    return std::chrono::milliseconds(value * scale);
}

}  // namespace tributary::cli
