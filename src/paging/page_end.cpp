#include "page_end.h"

namespace tributary {

bool page_is_last(const PageView& page, int limit) {
    if (page.end_of_stream == true || page.has_more == false) return true;
    if (page.has_more == true || page.end_of_stream == false) return false;
    return page.records.size() < static_cast<std::size_t>(limit);
}

bool keyed_page_is_last(const PageView& page, int limit) {
    const bool body_says = page.end_of_stream || page.has_more;
    if (!body_says && page.link_header_next && !page.records.empty()) return false;
    return page_is_last(page, limit);
}

}  // namespace tributary
