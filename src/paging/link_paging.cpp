#include "link_paging.h"

#include "cursor_kind.h"
#include "follow_next.h"
#include "page_query.h"

namespace tributary {

PageRequest LinkPaging::request(const Cursor& at, int limit) const {
    if (auto wrong = wrong_cursor_kind(at, PagingStyle::link)) return refused_request(*wrong);
    const auto& url = at.position();
    if (url.empty()) return page_query(paging_, std::nullopt, limit);
    // A next link carries its own query (its limit and cursor included).
    PageRequest request;
    request.url = url;
    return request;
}

PageOutcome LinkPaging::advance(const Cursor& at, const PageView& page, int /*limit*/) const {
    if (auto wrong = wrong_cursor_kind(at, PagingStyle::link)) return refused_page(at, *wrong);
    const bool none = page.has_more == false;
    return follow_next(at, page, {"next link", none ? std::nullopt : page.link_next, true});
}

}  // namespace tributary
