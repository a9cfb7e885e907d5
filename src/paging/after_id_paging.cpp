#include "after_id_paging.h"

#include "cursor_kind.h"
#include "inclusive_cursor.h"
#include "page_end.h"
#include "page_query.h"

namespace tributary {

PageRequest AfterIdPaging::request(const Cursor& at, int limit) const {
    if (auto wrong = wrong_cursor_kind(at, PagingStyle::after_id)) return refused_request(*wrong);
    // Sent from the start too (after_id=0): today's protocol always was.
    return page_query(paging_, std::to_string(at.id()), limit);
}

PageOutcome AfterIdPaging::advance(const Cursor& at, const PageView& page, int limit) const {
    if (auto wrong = wrong_cursor_kind(at, PagingStyle::after_id)) return refused_page(at, *wrong);
    // Ids increasing and above the cursor are the batch rules' to check
    // (core/batch_rules.h): the parser refuses a page that breaks them, and
    // lets an inclusive parameter's page start at the cursor.
    PageOutcome outcome;
    outcome.next = page.records.empty() ? at : Cursor::at_id(page.records.back().id);
    outcome.at_end = keyed_page_is_last(page, limit);
    if (paging_.inclusive && !page.records.empty() && page.records.front().id == at.id()) {
        if (auto stuck = inclusive_stuck(page, limit)) return refused_page(at, *stuck);
        outcome.first_new = 1;  // the last record stored, served again
        outcome.at_end = inclusive_page_is_last(outcome.at_end, page);
    }
    return outcome;
}

}  // namespace tributary
