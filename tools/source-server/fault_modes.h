#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace tributary::source_server {

// What a source answers while the mode is set. The modes up to too_many shape GET
// /sources/NAME/events (built in fault_responses.cpp); the HTTP-status ones also replace
// style and fixture answers. The modes after too_many shape the style routes
// (style_routes.cpp), the rate-limit headers, production (late) and Zendesk (updates).
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
    token_loop,
    link_offsite,
    no_records,
    no_key,
    key_bool,
    time_backwards,
    page_shrink,
    token_huge,
    ratelimit_absurd,
    ratelimit_ietf,
    late,
    updates,
    limit_ignored,
};

// True for the modes that replace GET /sources/NAME/events answers (none .. too_many).
bool shapes_events_route(FaultMode mode);
// True for http-500, http-404, http-429, http-429-date, http-503, http-503-bare: they replace
// every answer of the source, style and fixture routes included.
bool is_http_status_fault(FaultMode mode);

std::optional<FaultMode> parse_fault_mode(std::string_view name);
std::string_view fault_mode_name(FaultMode mode);
// "none, truncated, ..." for messages and --help.
std::string fault_mode_list();

}  // namespace tributary::source_server
