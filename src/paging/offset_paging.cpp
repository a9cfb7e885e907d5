#include "offset_paging.h"

#include <cstdint>
#include <limits>
#include <optional>

#include "counted_page.h"
#include "cursor_kind.h"
#include "page_end.h"
#include "page_query.h"
#include "position_number.h"
#include "shown_text.h"

namespace tributary {

namespace {

std::optional<std::int64_t> offset_of(const Cursor& at) {
    if (at.position().empty()) return 0;
    return position_number(at.position());
}

std::string no_offset(const Cursor& at) {
    return "--paginate offset: the cursor " + quoted(at.position()) + " is no offset";
}

}  // namespace

PageRequest OffsetPaging::request(const Cursor& at, int limit) const {
    if (auto wrong = wrong_cursor_kind(at, PagingStyle::offset)) return refused_request(*wrong);
    const auto offset = offset_of(at);
    if (!offset) return refused_request(no_offset(at));
    return page_query(paging_, std::to_string(*offset), limit);
}

PageOutcome OffsetPaging::advance(const Cursor& at, const PageView& page, int limit) const {
    if (auto wrong = wrong_cursor_kind(at, PagingStyle::offset)) return refused_page(at, *wrong);
    const auto offset = offset_of(at);
    if (!offset) return refused_page(at, no_offset(at));
    const auto size = static_cast<std::int64_t>(page.records.size());
    if (*offset > std::numeric_limits<std::int64_t>::max() - size)
        return refused_page(at, "--paginate offset: the offset overflows after " + std::to_string(*offset));

    // The offset after a page is only right if the API served the page at
    // the offset sent, of no more than the limit asked.
    const CountedPage counted{"the page at offset " + std::to_string(*offset), *offset + size};
    if (auto unsized = counted_page_problem(counted, page, limit, paging_)) return refused_page(at, *unsized);

    PageOutcome outcome;
    // An empty page keeps the position's text as it is: the very cursor it
    // was asked at, so that it reads as nothing new.
    outcome.next = size == 0 ? at : Cursor::at(std::to_string(*offset + size));
    outcome.at_end = page_is_last(page, limit);
    return outcome;
}

}  // namespace tributary
