#include "fault_modes.h"

#include <array>
#include <utility>

namespace tributary::source_server {
namespace {

constexpr std::array<std::pair<FaultMode, std::string_view>, 34> kModes{{
    {FaultMode::none, "none"},
    {FaultMode::truncated, "truncated"},
    {FaultMode::malformed, "malformed"},
    {FaultMode::not_json, "not-json"},
    {FaultMode::wrong_content_type, "wrong-content-type"},
    {FaultMode::huge, "huge"},
    {FaultMode::slow_body, "slow-body"},
    {FaultMode::deep_nesting, "deep-nesting"},
    {FaultMode::out_of_order, "out-of-order"},
    {FaultMode::at_or_below_cursor, "at-or-below-cursor"},
    {FaultMode::missing_id, "missing-id"},
    {FaultMode::string_id, "string-id"},
    {FaultMode::float_id, "float-id"},
    {FaultMode::nul_in_payload, "nul-in-payload"},
    {FaultMode::http_500, "http-500"},
    {FaultMode::http_404, "http-404"},
    {FaultMode::http_429, "http-429"},
    {FaultMode::http_429_date, "http-429-date"},
    {FaultMode::http_503, "http-503"},
    {FaultMode::http_503_bare, "http-503-bare"},
    {FaultMode::too_many, "too-many"},
    {FaultMode::token_loop, "token-loop"},
    {FaultMode::link_offsite, "link-offsite"},
    {FaultMode::no_records, "no-records"},
    {FaultMode::no_key, "no-key"},
    {FaultMode::key_bool, "key-bool"},
    {FaultMode::time_backwards, "time-backwards"},
    {FaultMode::page_shrink, "page-shrink"},
    {FaultMode::token_huge, "token-huge"},
    {FaultMode::ratelimit_absurd, "ratelimit-absurd"},
    {FaultMode::ratelimit_ietf, "ratelimit-ietf"},
    {FaultMode::late, "late"},
    {FaultMode::updates, "updates"},
    {FaultMode::limit_ignored, "limit-ignored"},
}};

}  // namespace

bool shapes_events_route(FaultMode mode) { return mode != FaultMode::none && mode <= FaultMode::too_many; }

bool is_http_status_fault(FaultMode mode) { return mode >= FaultMode::http_500 && mode <= FaultMode::http_503_bare; }

std::optional<FaultMode> parse_fault_mode(std::string_view name) {
    for (const auto& [mode, text] : kModes) {
        if (text == name) return mode;
    }
    return std::nullopt;
}

std::string_view fault_mode_name(FaultMode mode) {
    for (const auto& [m, text] : kModes) {
        if (m == mode) return text;
    }
    return "unknown";
}

std::string fault_mode_list() {
    std::string out;
    for (const auto& entry : kModes) {
        if (!out.empty()) out += ", ";
        out += entry.second;
    }
    return out;
}

}  // namespace tributary::source_server
