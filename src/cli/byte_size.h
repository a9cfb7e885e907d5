#pragma once

#include <cstdint>
#include <string>

namespace tributary::cli {

/// "500GB", "20 GiB", "1048576": a size in bytes. Decimal units (kB, MB,
/// GB, TB: powers of 1000) and binary ones (KiB, MiB, GiB, TiB: of 1024),
/// as PostgreSQL's pg_size_pretty users expect both. Throws UsageError.
std::int64_t parse_byte_size(const std::string& text);

}  // namespace tributary::cli
