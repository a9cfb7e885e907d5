#include "inclusive_cursor.h"

namespace tributary {

std::optional<std::string> inclusive_stuck(bool at_end, const PageView& page, int limit) {
    if (at_end || page.records.size() != 1) return std::nullopt;
    return "the page holds only the cursor's own record (--inclusive) and is not the last (--batch-size " +
           std::to_string(limit) + "): it cannot move past it; raise --batch-size above 1";
}

}  // namespace tributary
