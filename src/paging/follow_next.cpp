#include "follow_next.h"

#include <algorithm>

#include "page_query.h"
#include "shown_text.h"

namespace tributary {

namespace {

std::string shown(const std::string& value, const FollowedNext& next) {
    return next.urls ? quoted_url(value) : quoted(value);
}

std::string page_named(const std::string& position, const FollowedNext& next) {
    return position.empty() ? std::string("the first page") : "the page at " + shown(position, next);
}

}  // namespace

PageOutcome follow_next(const Cursor& at, const PageView& page, const FollowedNext& next) {
    const auto& position = at.position();
    const auto size = page.records.size();
    const auto taken = static_cast<std::size_t>(std::max<std::int64_t>(at.taken(), 0));
    // Fewer records than already stored from it: the page at this position
    // is not what it was, and whatever it holds now cannot be placed.
    if (size < taken)
        return refused_page(at, page_named(position, next) + " shrank from " + std::to_string(taken) + " to " +
                                    std::to_string(size) + " records: a " + next.what +
                                    " served again must give the same page");

    PageOutcome outcome;
    outcome.first_new = taken;
    if (!next.value || next.value->empty()) {
        outcome.next = Cursor::at(position, static_cast<std::int64_t>(size));
        outcome.at_end = true;
        return outcome;
    }
    const auto& value = *next.value;
    if (value == position)
        return refused_page(
            at, "the " + next.what + " repeats the current one " + shown(value, next) + ": the API would loop");
    if (value.size() > kMaxCursorBytes)
        return refused_page(
            at, "the " + next.what + " is over " + std::to_string(kMaxCursorBytes) + " bytes: " + shown(value, next));
    outcome.next = Cursor::at(value, 0);
    return outcome;
}

}  // namespace tributary
