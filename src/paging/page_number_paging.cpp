#include "page_number_paging.h"

#include <algorithm>
#include <limits>

#include "counted_page.h"
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

CountedPage PageNumberPaging::counted(std::int64_t number, const PageView& page, int limit) const {
    CountedPage counted{"page " + std::to_string(number), std::nullopt};
    // Records before this page's end, if every page before it held the
    // limit asked: what the style assumes unless the body says where the
    // end is (an API paging by its own size).
    if (page.has_more || page.end_of_stream || number < paging_.first_page || limit <= 0) return counted;
    const std::int64_t before = number - paging_.first_page;
    const auto size = static_cast<std::int64_t>(page.records.size());
    constexpr auto kMax = std::numeric_limits<std::int64_t>::max();
    if (before > (kMax - size) / limit) return counted;
    counted.through = before * limit + size;
    return counted;
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

    // A page number is only a place in the list when pages hold the limit
    // asked: a page of another size (the API ignores the limit) would make
    // a page look full that may still grow, or the last page one that never
    // ends, and the page after it lose or repeat records.
    if (auto unsized = counted_page_problem(counted(*number, page, limit), page, limit, paging_))
        return refused_page(at, *unsized);

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
