#pragma once

#include <optional>
#include <string>

#include "paging_strategy.h"

namespace tributary {

/// after-id and after-key with --inclusive, of a page that starts with the
/// cursor's own record: why the style cannot move past it. A page of that
/// record alone which is not the last (a limit of 1) asks the same page
/// again forever.
std::optional<std::string> inclusive_stuck(bool at_end, const PageView& page, int limit);

}  // namespace tributary
