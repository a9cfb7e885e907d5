#pragma once

#include <cstddef>

namespace tributary::cli {

/// This process's resident set size in bytes (0 when /proc cannot tell).
std::size_t resident_bytes();

}  // namespace tributary::cli
