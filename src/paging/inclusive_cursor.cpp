#include "inclusive_cursor.h"

namespace tributary {

std::optional<std::string> inclusive_stuck(const PageView& page, int limit) {
    if (limit > 1 || page.records.size() != 1) return std::nullopt;
    return "a page of --batch-size " + std::to_string(limit) +
           " holds only the cursor's own record (--inclusive): it cannot move past it; raise --batch-size above 1";
}

bool inclusive_page_is_last(bool at_end, const PageView& page) { return at_end || page.records.size() == 1; }

}  // namespace tributary
