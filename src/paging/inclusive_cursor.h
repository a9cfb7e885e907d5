#pragma once

#include <optional>
#include <string>

#include "paging_strategy.h"

namespace tributary {

/// after-id and after-key with --inclusive, of a page that starts with the
/// cursor's own record: why the style cannot move past it. With a limit of
/// 1 every page is that record alone, asked again forever.
std::optional<std::string> inclusive_stuck(const PageView& page, int limit);

/// Whether such a page is the end of the stream: one of the cursor's own
/// record alone has nothing new, whatever else the answer says (a Link
/// rel="next" or a "more" would ask the same page again at once).
bool inclusive_page_is_last(bool at_end, const PageView& page);

}  // namespace tributary
