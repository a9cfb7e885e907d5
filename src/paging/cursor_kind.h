#pragma once

#include <optional>
#include <string>

#include "core/cursor.h"
#include "core/reading.h"

namespace tributary {

/// Why `at` cannot be this style's cursor: an event id for a style that
/// keeps a position, or the other way round. A loader hands strategies the
/// cursor it claimed, so this is a catalogue out of step with its style
/// (changed by hand), reported rather than thrown.
std::optional<std::string> wrong_cursor_kind(const Cursor& at, PagingStyle style);

}  // namespace tributary
