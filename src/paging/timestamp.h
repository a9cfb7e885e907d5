#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace tributary {

/// An instant an API wrote, and how it wrote it, so that a watermark moved
/// back by the lookback is sent in the API's own format.
struct Timestamp {
    enum class Format {
        unix_seconds,  ///< decimal seconds since the epoch: 1700000000, 1700000000.25
        iso8601,       ///< 2024-02-29T23:59:59.5+01:00 and the like
    };
    std::int64_t micros = 0;  ///< since 1970-01-01T00:00:00Z; finer digits cut (floored)
    Format format = Format::iso8601;
    int fraction_digits = 0;  ///< iso8601: digits after the seconds, at most 6 kept (0: none)

    /// The same format, `by` earlier.
    Timestamp minus(std::chrono::seconds by) const;
};

/// Reads ISO 8601 / RFC 3339 as APIs write it,
/// "YYYY-MM-DD(T|t| )HH:MM:SS[.fraction](Z|z|+HH:MM|-HH:MM|+HHMM|-HHMM)",
/// years 0000 to 9999 and a zone required (a time without one names no
/// instant), or Unix seconds, an integer or a decimal, up to the end of
/// year 9999 (so milliseconds since the epoch are refused, not read as
/// seconds 30 000 years from now). At most 64 characters. Anything else:
/// empty.
std::optional<Timestamp> parse_timestamp(std::string_view text);

/// Writes `t` in its format: Unix seconds as whole seconds (rounded down:
/// asking from a little earlier only reads again what is already stored);
/// ISO 8601 in UTC, "YYYY-MM-DDTHH:MM:SSZ", with the fraction's digits the
/// text had. Instants before 0000-01-01 (Unix: before the epoch) are
/// written as that limit.
std::string format_timestamp(const Timestamp& t);

}  // namespace tributary
