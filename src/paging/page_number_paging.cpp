#include "page_number_paging.h"

#include <algorithm>
#include <limits>

#include "cursor_kind.h"
#include "page_end.h"
#include "page_query.h"
#include "position_number.h"
#include "shown_text.h"

namespace tributary {

namespace {

std::string no_page_number(const Cursor& at) {
    return "--paginate page: the cursor " + quoted(at.position()) + " is no page number";
}

}  // namespace

std::optional<std::string> PageNumberPaging::larger_than_asked(std::int64_t number, const PageView& page,
                                                               int limit) const {
    // Whether a page is full is told by its size only if the API serves
    // pages of the limit asked. One that serves more (it ignores the limit
    // parameter) makes a page of limit records look full while it may still
    // grow: moving on would lose what it gains. Without a word from the
    // source (--has-more, --end-of-stream) that cannot be told apart.
    if (page.has_more || page.end_of_stream || page.records.size() <= static_cast<std::size_t>(limit))
        return std::nullopt;
    const std::string ignored =
        paging_.limit_param.empty() ? std::string("its page size") : "the API ignored " + paging_.limit_param;
    return "page " + std::to_string(number) + " holds " + std::to_string(page.records.size()) +
           " records, more than the " + std::to_string(limit) + " asked (" + ignored +
           "): set --batch-size to the API's page size";
}

std::optional<std::int64_t> PageNumberPaging::page_number(const Cursor& at) const {
    if (at.position().empty()) return paging_.first_page;
    return position_number(at.position());
}

PageRequest PageNumberPaging::request(const Cursor& at, int limit) const {
    if (auto wrong = wrong_cursor_kind(at, PagingStyle::page)) return refused_request(*wrong);
    const auto number = page_number(at);
    if (!number) return refused_request(no_page_number(at));
    return page_query(paging_, std::to_string(*number), limit);
}

PageOutcome PageNumberPaging::advance(const Cursor& at, const PageView& page, int limit) const {
    if (auto wrong = wrong_cursor_kind(at, PagingStyle::page)) return refused_page(at, *wrong);
    const auto number = page_number(at);
    if (!number) return refused_page(at, no_page_number(at));
    const auto size = page.records.size();
    const auto taken = static_cast<std::size_t>(std::max<std::int64_t>(at.taken(), 0));
    if (size < taken)
        return refused_page(at, "page " + std::to_string(*number) + " shrank from " + std::to_string(taken) + " to " +
                                    std::to_string(size) + " records (the list is not append-only?)");

    if (auto unsized = larger_than_asked(*number, page, limit)) return refused_page(at, *unsized);

    PageOutcome outcome;
    outcome.first_new = taken;
    if (page_is_last(page, limit)) {
        // The position's text is kept as it is, so that a page with nothing
        // new gives back the very cursor it was asked at.
        outcome.next = Cursor::at(at.position(), static_cast<std::int64_t>(size));
        outcome.at_end = true;
        return outcome;
    }
    if (*number == std::numeric_limits<std::int64_t>::max())
        return refused_page(at, "--paginate page: no page after page " + std::to_string(*number));
    outcome.next = Cursor::at(std::to_string(*number + 1), 0);
    return outcome;
}

}  // namespace tributary
