#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace tributary::source_server {

// What a source answers on GET /sources/NAME/events while the mode is set.
// The hostile responses themselves are built in fault_responses.cpp.
enum class FaultMode : std::uint8_t {
    none,
    truncated,
    malformed,
    not_json,
    wrong_content_type,
    huge,
    slow_body,
    deep_nesting,
    out_of_order,
    at_or_below_cursor,
    missing_id,
    string_id,
    float_id,
    nul_in_payload,
    http_500,
    http_404,
    http_429,
    http_429_date,
    http_503,
    http_503_bare,
    too_many,
};

std::optional<FaultMode> parse_fault_mode(std::string_view name);
std::string_view fault_mode_name(FaultMode mode);
// "none, truncated, ..." for messages and --help.
std::string fault_mode_list();

}  // namespace tributary::source_server
