#include "page_parser.h"

#include <algorithm>
#include <limits>
#include <utility>

#include <spdlog/fmt/fmt.h>

#include "json_kind.h"
#include "page_paths.h"
#include "page_scan.h"

namespace tributary {
namespace {

using Status = FetchResult::Status;

FetchResult transient(std::string why) { return FetchResult::failure(Status::transient, std::move(why)); }
FetchResult failing(std::string why) { return FetchResult::failure(Status::failing, std::move(why)); }

ParsedPage failed(FetchResult result) {
    ParsedPage page;
    page.batch = std::move(result);
    return page;
}

// Where reading stopped, as an editor counts: lines from 1, bytes within
// the line from 1.
std::string position(std::string_view body, std::size_t at) {
    at = std::min(at, body.size());
    const std::string_view before = body.substr(0, at);
    const auto line = 1 + std::count(before.begin(), before.end(), '\n');
    const auto newline = before.rfind('\n');
    const std::size_t column = newline == std::string_view::npos ? at + 1 : at - newline;
    return fmt::format("line {}, column {} (byte {})", line, column, at);
}

FetchResult syntax_failure(std::string_view body, const JsonSyntaxError& error) {
    if (error.too_deep) return transient(error.what);
    return transient(fmt::format("malformed JSON body: {} at {}", error.what, position(body, error.at)));
}

// Today's protocol: `{"events":[...]}` or a bare array. A body of another
// shape may be an error page a proxy put in the way: transient, as ever.
std::optional<FetchResult> standard_shape_problem(const ScannedPage& scan) {
    if (scan.records_at_top) return std::nullopt;
    if (scan.top != JsonKind::object)
        return transient(fmt::format("top-level JSON is {}, expected an object with \"events\" or an array of events",
                                     describe(scan.top)));
    if (!scan.records) return transient("top-level object has no \"events\" member");
    if (*scan.records != JsonKind::array)
        return transient(fmt::format("\"events\" is {}, expected an array", describe(*scan.records)));
    return std::nullopt;
}

// A configured layout: the source said where its records are.
std::optional<FetchResult> records_problem(const ScannedPage& scan, const PagePaths& paths) {
    if (!scan.records) return failing("no records array at " + paths.records_pointer);
    if (*scan.records == JsonKind::array) return std::nullopt;
    if (scan.records_at_top)
        return failing(
            fmt::format("the body is {}, expected an array of records (--records \"\")", describe(*scan.records)));
    return failing(
        fmt::format("records at {} is {}, expected an array", paths.records_pointer, describe(*scan.records)));
}

// The value at --next: a token, a URL or a time, as text.
std::optional<FetchResult> read_next(std::string_view body, const ScannedPage& scan, const Paging& paging,
                                     ParsedPage& page) {
    if (!scan.next) return std::nullopt;
    const auto& found = *scan.next;
    switch (found.kind) {
        case JsonKind::null: return std::nullopt;
        case JsonKind::integer:
        case JsonKind::floating: page.next = std::string(body.substr(found.begin, found.end - found.begin)); break;
        case JsonKind::string:
            if (found.string.has_nul) return failing(fmt::format("--next {} holds U+0000", paging.next));
            page.next = decoded_json_string(found.string, std::numeric_limits<std::size_t>::max());
            break;
        default:
            return failing(
                fmt::format("--next {} is {}, expected a string, a number or null", paging.next, describe(found.kind)));
    }
    return std::nullopt;
}

std::optional<FetchResult> read_flag(std::string_view body, const std::optional<ScannedPage::Found>& found,
                                     const char* flag, const std::string& pointer, std::optional<bool>& out) {
    if (!found || found->kind == JsonKind::null) return std::nullopt;
    if (found->kind != JsonKind::boolean)
        return failing(fmt::format("{} {} is {}, expected a boolean or null", flag, pointer, describe(found->kind)));
    out = body[found->begin] == 't';
    return std::nullopt;
}

// The ids after `last_id` up to `head`, or the most an int64 holds when a
// hostile head_id makes that more.
std::int64_t ids_after(std::int64_t last_id, std::int64_t head) {
    constexpr auto kMax = std::numeric_limits<std::int64_t>::max();
    if (head <= last_id) return 0;
    if (last_id < 0 && head > kMax + last_id) return kMax;
    return head - last_id;
}

// Today's protocol may say how far behind we are: "remaining" (records
// after this batch) or "head_id" (its newest id; keyed by id only), next to
// "events". Optional and advisory, so a value that makes no sense is ignored
// rather than failing the batch, and one too large to add to saturates
// rather than overflows.
std::optional<std::int64_t> reported_backlog(const ScannedPage& scan, bool keyed_by_id, std::int64_t last_id,
                                             std::size_t dropped) {
    constexpr auto kMax = std::numeric_limits<std::int64_t>::max();
    if (scan.remaining && *scan.remaining >= 0) {
        const auto extra = static_cast<std::int64_t>(dropped);  // at most the body's size
        return *scan.remaining > kMax - extra ? kMax : *scan.remaining + extra;
    }
    if (scan.head_id && keyed_by_id) return ids_after(last_id, *scan.head_id);
    return std::nullopt;
}

/// The kept records to return: all, or keyed by id the first `limit` of
/// the page oldest first (the last ones of a page that comes newest first).
struct Span {
    std::size_t first = 0;
    std::size_t last = 0;
};

Span returned(const ScannedPage& scan, const PagePaths& paths, std::size_t limit) {
    const std::size_t size = scan.kept.size();
    if (!paths.keyed_by_id || size <= limit) return {0, size};
    return paths.newest_first ? Span{size - limit, size} : Span{0, limit};
}

// The kept payloads, as the source wrote them. With the body ours, a
// payload of at least half of it is cut out of it in place (the others are
// copied first): one 60 MB record then costs its 60 MB once, not twice.
EventBatch kept_events(ScannedPage& scan, Span span, std::string_view body, std::string* owned) {
    auto& kept = scan.kept;
    std::size_t carved = span.last;
    if (owned != nullptr) {
        for (std::size_t i = span.first; i < span.last; ++i)
            if ((kept[i].end - kept[i].begin) * 2 >= body.size()) carved = i;
    }
    EventBatch events(span.last - span.first);
    for (std::size_t i = span.first; i < span.last; ++i) {
        Event& event = events[i - span.first];
        event.id = kept[i].id;
        if (!scan.keys.empty()) event.key = std::move(scan.keys[i]);
        if (i != carved) event.payload.assign(body.data() + kept[i].begin, kept[i].end - kept[i].begin);
    }
    if (carved < span.last) {
        owned->resize(kept[carved].end);
        owned->erase(0, kept[carved].begin);
        events[carved - span.first].payload = std::move(*owned);
    }
    return events;
}

// The first problem of a page that scanned as JSON, in the order the
// contract (page_parser.h) gives.
std::optional<FetchResult> page_problem(std::string_view body, const ScannedPage& scan, const PagePaths& paths,
                                        const Paging& paging, ParsedPage& page) {
    if (scan.document_problem) return failing(*scan.document_problem);
    if (auto why = paths.standard ? standard_shape_problem(scan) : records_problem(scan, paths)) return why;
    if (auto why = read_next(body, scan, paging, page)) return why;
    if (auto why = read_flag(body, scan.has_more, "--has-more", paging.has_more, page.has_more)) return why;
    if (auto why = read_flag(body, scan.end_of_stream, "--end-of-stream", paging.end_of_stream, page.end_of_stream))
        return why;
    if (scan.record_problem) return failing(*scan.record_problem);
    if (scan.order_problem) return failing(*scan.order_problem);
    return std::nullopt;
}

/// A page kept whole may hold this many times the limit, or this many
/// records, whichever is more.
constexpr std::size_t kMostRecordsPerLimit = 10;
constexpr std::size_t kMostRecordsAlways = 10000;

ParsedPage parse_checked(std::string_view body, std::string* owned, const Source& source, const Cursor& cursor,
                         int limit, const FetchLimits& limits) {
    if (body.size() > limits.max_body_bytes)
        return failed(transient(fmt::format("response larger than {} bytes", limits.max_body_bytes)));
    PagePaths paths;
    if (auto why = compile_page_paths(source, paths)) return failed(failing(*why));
    if (paths.keyed_by_id && !cursor.is_id())
        return failed(failing("--paginate after-id: the cursor is a position, not an event id"));
    const std::int64_t after_id = paths.keyed_by_id ? cursor.id() : 0;
    const auto cut = static_cast<std::size_t>(std::max(limit, 0));
    // Only an after-id page read oldest first can be cut to the limit as it
    // is read; any other is kept whole, up to a bound: an API may page by a
    // size of its own, but a page of far more records than asked for is
    // hostile (64 MiB of tiny records would be millions of events in memory).
    const std::size_t most = std::max(cut * kMostRecordsPerLimit, kMostRecordsAlways);
    const bool cut_early = paths.keyed_by_id && !paths.newest_first;
    // An inclusive cursor's page may start with the record stored last,
    // which is not new: one more keeps `limit` new ones.
    const std::size_t id_cut = paths.sent_cursor.inclusive ? cut + 1 : cut;
    const std::size_t keep = cut_early ? id_cut : most;

    ScannedPage scan = scan_page(body, paths, after_id, keep, limits.max_depth);
    if (scan.syntax) return failed(syntax_failure(body, *scan.syntax));
    if (!cut_early && scan.count > most)
        return failed(
            failing(fmt::format("the page has {} records, more than {} ({} times --batch-size {}): the API "
                                "ignores the limit? raise --batch-size to its page size",
                                scan.count, most, kMostRecordsPerLimit, cut)));
    ParsedPage page;
    if (auto why = page_problem(body, scan, paths, source.paging, page)) return failed(std::move(*why));

    const Span span = returned(scan, paths, id_cut);
    EventBatch events = kept_events(scan, span, body, owned);
    if (paths.newest_first) {
        std::reverse(events.begin(), events.end());
        std::reverse(scan.times.begin(), scan.times.end());
    }
    const std::size_t dropped = scan.count - events.size();
    const std::int64_t last_id = events.empty() ? after_id : events.back().id;
    page.batch = FetchResult::batch(std::move(events));
    if (paths.standard) page.batch.backlog = reported_backlog(scan, paths.keyed_by_id, last_id, dropped);
    page.times = std::move(scan.times);
    return page;
}

ParsedPage parsed(std::string_view body, std::string* owned, const Source& source, const Cursor& cursor, int limit,
                  const FetchLimits& limits) {
    ParsedPage page = parse_checked(body, owned, source, cursor, limit, limits);
    if (page.batch.status != Status::ok) page.batch.cause = FetchResult::Cause::invalid_batch;
    return page;
}

}  // namespace

ParsedPage parse_page(std::string&& body, const Source& source, const Cursor& cursor, int limit,
                      const FetchLimits& limits) {
    return parsed(body, &body, source, cursor, limit, limits);
}

ParsedPage parse_borrowed_page(std::string_view body, const Source& source, const Cursor& cursor, int limit,
                               const FetchLimits& limits) {
    return parsed(body, nullptr, source, cursor, limit, limits);
}

}  // namespace tributary
