#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace tributary::source_server {

// "2026-11-24T08:30:00.001Z" (UTC, milliseconds): the generic styles' updated_at.
std::string iso_ms(std::int64_t unix_ms);
// "2026-11-24T08:30:00Z" (UTC, whole seconds): GitHub's and Zendesk's timestamps.
std::string iso_seconds(std::int64_t unix_s);
// "2026-11-24T08:30:00+00:00": Shopify's.
std::string iso_seconds_offset(std::int64_t unix_s);

// A time query parameter as Unix milliseconds: Unix seconds (digits, optionally with a
// fraction) or ISO 8601 "YYYY-MM-DDTHH:MM:SS[.fff][Z|+HH:MM|-HH:MM]". A '+' that a query
// decoder turned into a space is read as '+'.
std::optional<std::int64_t> parse_time_param(std::string_view text);

}  // namespace tributary::source_server
