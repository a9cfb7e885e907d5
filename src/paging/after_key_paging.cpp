#include "after_key_paging.h"

#include "cursor_kind.h"
#include "inclusive_cursor.h"
#include "page_end.h"
#include "page_query.h"
#include "shown_text.h"

namespace tributary {

PageRequest AfterKeyPaging::request(const Cursor& at, int limit) const {
    if (auto wrong = wrong_cursor_kind(at, PagingStyle::after_key)) return refused_request(*wrong);
    const auto& key = at.position();
    return page_query(paging_, key.empty() ? std::nullopt : std::optional<std::string>(key), limit);
}

PageOutcome AfterKeyPaging::advance(const Cursor& at, const PageView& page, int limit) const {
    if (auto wrong = wrong_cursor_kind(at, PagingStyle::after_key)) return refused_page(at, *wrong);
    const auto& position = at.position();
    PageOutcome outcome;
    outcome.next = at;
    outcome.at_end = keyed_page_is_last(page, limit);
    if (page.records.empty()) return outcome;

    const auto& last = page.records.back().key;
    // An inclusive parameter's page starts with the last record stored; a
    // page of it alone is the end of the stream.
    if (paging_.inclusive && !position.empty() && page.records.front().key == position) {
        if (auto stuck = inclusive_stuck(page, limit)) return refused_page(at, *stuck);
        outcome.first_new = 1;
        outcome.at_end = inclusive_page_is_last(outcome.at_end, page);
        if (page.records.size() == 1) return outcome;
    }
    // An API that does not know the parameter answers the first page again
    // and again: its last key is then the one asked after, forever.
    if (!position.empty() && last == position)
        return refused_page(at, "the API ignored " + paging_.cursor_param + ": the page after " + quoted(position) +
                                    " ends with " + quoted(last));
    // An empty key would send the next request back to the start.
    if (last.empty()) return refused_page(at, "--key of the page's last record is empty: it cannot be a cursor");
    if (last.size() > kMaxCursorBytes)
        return refused_page(at, "--key of the page's last record is over " + std::to_string(kMaxCursorBytes) +
                                    " bytes: " + quoted(last));
    outcome.next = Cursor::at(last);
    return outcome;
}

}  // namespace tributary
