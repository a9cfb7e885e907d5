#include "jsonb_number.h"

#include <cstddef>
#include <cstdint>

namespace tributary::webhook {
namespace {

// numeric's limits (PostgreSQL's numeric.c): NUMERIC_WEIGHT_MAX base-10000
// digits before the point, NUMERIC_DSCALE_MAX decimal digits after it, and
// an exponent refused outright from INT_MAX / 2.
constexpr std::int64_t kMaxDecimalWeight = 4 * 32768 - 1;
constexpr std::int64_t kMaxDisplayScale = 16383;
constexpr std::int64_t kMaxExponent = 1073741823;

bool is_digit(char c) { return c >= '0' && c <= '9'; }

}  // namespace

bool jsonb_takes_number(std::string_view text) {
    std::size_t pos = 0;
    if (pos < text.size() && text[pos] == '-') ++pos;
    const std::size_t integer_begin = pos;
    while (pos < text.size() && is_digit(text[pos])) ++pos;
    const std::size_t integer_digits = pos - integer_begin;
    const bool integer_zero = integer_digits == 1 && text[integer_begin] == '0';

    std::size_t fraction_digits = 0;
    std::size_t leading_fraction_zeros = 0;
    bool fraction_zero = true;
    if (pos < text.size() && text[pos] == '.') {
        ++pos;
        for (; pos < text.size() && is_digit(text[pos]); ++pos, ++fraction_digits) {
            if (fraction_zero && text[pos] == '0') ++leading_fraction_zeros;
            else fraction_zero = false;
        }
    }

    std::int64_t exponent = 0;
    if (pos < text.size() && (text[pos] == 'e' || text[pos] == 'E')) {
        ++pos;
        const bool negative = pos < text.size() && text[pos] == '-';
        if (pos < text.size() && (text[pos] == '+' || text[pos] == '-')) ++pos;
        for (; pos < text.size(); ++pos) {
            exponent = exponent * 10 + (text[pos] - '0');
            if (exponent >= kMaxExponent) return false;
        }
        if (negative) exponent = -exponent;
    }

    const std::int64_t scale = static_cast<std::int64_t>(fraction_digits) - exponent;
    if (scale > kMaxDisplayScale) return false;
    if (integer_zero && fraction_zero) return true;  // zero has no weight
    // Where the first significant digit lies: 0 is the units.
    const std::int64_t weight = integer_zero ? -static_cast<std::int64_t>(leading_fraction_zeros) - 1 + exponent
                                             : static_cast<std::int64_t>(integer_digits) - 1 + exponent;
    return weight <= kMaxDecimalWeight;
}

}  // namespace tributary::webhook
