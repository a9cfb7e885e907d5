#include "token_paging.h"

#include "cursor_kind.h"
#include "follow_next.h"
#include "page_query.h"

namespace tributary {

PageRequest TokenPaging::request(const Cursor& at, int limit) const {
    if (auto wrong = wrong_cursor_kind(at, PagingStyle::cursor)) return refused_request(*wrong);
    const auto& token = at.position();
    return page_query(paging_, token.empty() ? std::nullopt : std::optional<std::string>(token), limit);
}

PageOutcome TokenPaging::advance(const Cursor& at, const PageView& page, int /*limit*/) const {
    if (auto wrong = wrong_cursor_kind(at, PagingStyle::cursor)) return refused_page(at, *wrong);
    // has-more false outranks a token: some APIs send one on the last page.
    const bool none = page.has_more == false;
    return follow_next(at, page, {"next token", none ? std::nullopt : page.next});
}

}  // namespace tributary
