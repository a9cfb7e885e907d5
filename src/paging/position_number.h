#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace tributary {

/// A page number or an offset held as a cursor's position: decimal digits
/// within int64, nothing else (no sign, no spaces). Empty when the text is
/// no such number, e.g. after a rewind by hand to something else.
std::optional<std::int64_t> position_number(std::string_view text);

}  // namespace tributary
