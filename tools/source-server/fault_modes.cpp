#include "fault_modes.h"

#include <array>
#include <utility>

namespace tributary::source_server {
namespace {

constexpr std::array<std::pair<FaultMode, std::string_view>, 21> kModes{{
    {FaultMode::None, "none"},
    {FaultMode::Truncated, "truncated"},
    {FaultMode::Malformed, "malformed"},
    {FaultMode::NotJson, "not-json"},
    {FaultMode::WrongContentType, "wrong-content-type"},
    {FaultMode::Huge, "huge"},
    {FaultMode::SlowBody, "slow-body"},
    {FaultMode::DeepNesting, "deep-nesting"},
    {FaultMode::OutOfOrder, "out-of-order"},
    {FaultMode::AtOrBelowCursor, "at-or-below-cursor"},
    {FaultMode::MissingId, "missing-id"},
    {FaultMode::StringId, "string-id"},
    {FaultMode::FloatId, "float-id"},
    {FaultMode::NulInPayload, "nul-in-payload"},
    {FaultMode::Http500, "http-500"},
    {FaultMode::Http404, "http-404"},
    {FaultMode::Http429, "http-429"},
    {FaultMode::Http429Date, "http-429-date"},
    {FaultMode::Http503, "http-503"},
    {FaultMode::Http503Bare, "http-503-bare"},
    {FaultMode::TooMany, "too-many"},
}};

}  // namespace

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
