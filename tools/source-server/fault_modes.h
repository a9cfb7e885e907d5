#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace tributary::source_server {

// What a source answers on GET /sources/NAME/events while the mode is set.
// The hostile responses themselves are built in fault_responses.cpp.
enum class FaultMode : std::uint8_t {
  None,
  Truncated,
  Malformed,
  NotJson,
  WrongContentType,
  Huge,
  SlowBody,
  DeepNesting,
  OutOfOrder,
  AtOrBelowCursor,
  MissingId,
  StringId,
  FloatId,
  NulInPayload,
  Http500,
  Http404,
  Http429,
  Http429Date,
  Http503,
  Http503Bare,
  TooMany,
};

std::optional<FaultMode> parse_fault_mode(std::string_view name);
std::string_view fault_mode_name(FaultMode mode);
// "none, truncated, ..." for messages and --help.
std::string fault_mode_list();

}  // namespace tributary::source_server
