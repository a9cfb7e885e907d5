#pragma once

#include <chrono>
#include <string>

namespace tributary::cli {

/// Parses "55s", "500ms", "10m", "2h" or a bare number of seconds. Throws
/// UsageError naming the value when it is not one of these, or not positive.
std::chrono::milliseconds parse_duration(const std::string& text);

}  // namespace tributary::cli
