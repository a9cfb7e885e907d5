#include "time_paging.h"

#include "cursor_kind.h"
#include "page_end.h"
#include "page_query.h"
#include "shown_text.h"

namespace tributary {

namespace {

std::string no_watermark(const Cursor& at) {
    return "--paginate time: the cursor " + quoted(at.position()) + " is no timestamp";
}

std::string lookback_words(std::chrono::seconds lookback) {
    return "the --lookback of " + std::to_string(lookback.count()) + " s";
}

}  // namespace

PageRequest TimePaging::request(const Cursor& at, int limit) const {
    if (auto wrong = wrong_cursor_kind(at, PagingStyle::time)) return refused_request(*wrong);
    const auto& watermark = at.position();
    if (watermark.empty()) return page_query(paging_, std::nullopt, limit);
    const auto time = parse_timestamp(watermark);
    if (!time) return refused_request(no_watermark(at));
    // Without a lookback the watermark goes back exactly as the API wrote it.
    if (paging_.lookback.count() == 0) return page_query(paging_, watermark, limit);
    return page_query(paging_, format_timestamp(time->minus(paging_.lookback)), limit);
}

TimePaging::Found TimePaging::latest_of(const PageView& page, bool at_end) const {
    const bool next_given = page.next && !page.next->empty();
    // The watermark moves to the page's latest time: on a page the limit cut
    // that skips whatever the API holds before it and has not sent yet,
    // unless the page comes oldest first. The body's own next start time
    // (--next) is the API's word instead.
    const bool must_be_ordered = !at_end && !next_given;
    // Zendesk-style answers may come without --time-field: --next is enough.
    if (page.times.size() != page.records.size() && !(next_given && page.times.empty()))
        return {std::nullopt, "--time-field " + paging_.time_field + ": " + std::to_string(page.times.size()) +
                                  " times for " + std::to_string(page.records.size()) + " records"};
    std::optional<Mark> latest;
    for (std::size_t i = 0; i < page.times.size(); ++i) {
        const auto time = parse_timestamp(page.times[i]);
        if (!time)
            return {std::nullopt, "--time-field " + paging_.time_field + " of record #" + std::to_string(i) + " (key " +
                                      quoted(page.records[i].key) + ") is no timestamp: " + quoted(page.times[i])};
        if (must_be_ordered && latest && time->micros < latest->time.micros)
            return {std::nullopt, "records are not oldest first by --time-field " + paging_.time_field + ": record #" +
                                      std::to_string(i) + " (key " + quoted(page.records[i].key) + ") has " +
                                      quoted(page.times[i]) + " after " + quoted(latest->text)};
        if (!latest || time->micros > latest->time.micros) latest = Mark{page.times[i], *time};
    }
    if (!next_given) return {latest, std::nullopt};
    const auto next = parse_timestamp(*page.next);
    if (!next) return {std::nullopt, "--next " + paging_.next + " is no timestamp: " + quoted(*page.next)};
    return {Mark{*page.next, *next}, std::nullopt};
}

PageOutcome TimePaging::advance(const Cursor& at, const PageView& page, int limit) const {
    if (auto wrong = wrong_cursor_kind(at, PagingStyle::time)) return refused_page(at, *wrong);
    std::optional<Mark> old;
    if (!at.position().empty()) {
        const auto time = parse_timestamp(at.position());
        if (!time) return refused_page(at, no_watermark(at));
        old = Mark{at.position(), *time};
    }
    const bool at_end = page_is_last(page, limit);
    const auto found = latest_of(page, at_end);
    if (found.problem) return refused_page(at, *found.problem);
    return moved(at, old, found, at_end, limit);
}

PageOutcome TimePaging::moved(const Cursor& at, const std::optional<Mark>& old, const Found& found, bool at_end,
                              int limit) const {
    PageOutcome outcome;
    outcome.next = at;
    outcome.at_end = at_end;
    if (!found.mark) return outcome;
    const auto& mark = *found.mark;
    if (!old) {
        outcome.next = Cursor::at(mark.text);
        return outcome;
    }
    const auto since = old->time.minus(paging_.lookback);
    if (mark.time.micros < since.micros)
        return refused_page(at, "watermark went back from " + quoted(old->text) + " to " + quoted(mark.text) +
                                    ", beyond " + lookback_words(paging_.lookback));
    if (mark.time.micros > old->time.micros) {
        outcome.next = Cursor::at(mark.text);
        return outcome;
    }
    // Not later than the old watermark: the next request would be this one
    // again, and answer the same page. Unless the source is at its end, that
    // is a loop: more records than a page holds within what is re-asked.
    if (!at_end) {
        if (paging_.lookback.count() == 0)
            return refused_page(at, "more than " + std::to_string(limit) + " records at one timestamp " +
                                        quoted(old->text) + ": raise --batch-size");
        return refused_page(at, "more than " + std::to_string(limit) + " records from " +
                                    quoted(format_timestamp(since)) + " to " + quoted(old->text) + " (" +
                                    lookback_words(paging_.lookback) + "): raise --batch-size or lower --lookback");
    }
    // Within the lookback: the watermark never goes back, the old one stays.
    return outcome;
}

}  // namespace tributary
