#include "batch_parser.h"

#include <algorithm>
#include <limits>
#include <optional>
#include <string>

#include <spdlog/fmt/fmt.h>

#include "batch_scan.h"
#include "json_kind.h"

namespace tributary {
namespace {

using Status = FetchResult::Status;

FetchResult transient(std::string why) { return FetchResult::failure(Status::transient, std::move(why)); }
FetchResult failing(std::string why) { return FetchResult::failure(Status::failing, std::move(why)); }

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

// The envelope: `{"events":[...]}` or a bare array.
std::optional<std::string> shape_problem(const ScannedBatch& scan) {
    if (scan.top == JsonKind::array) return std::nullopt;
    if (scan.top != JsonKind::object)
        return fmt::format("top-level JSON is {}, expected an object with \"events\" or an array of events",
                           describe(scan.top));
    if (!scan.records) return "top-level object has no \"events\" member";
    if (*scan.records != JsonKind::array)
        return fmt::format("\"events\" is {}, expected an array", describe(*scan.records));
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

// A source may say how far behind we are: "remaining" (events after this
// batch) or "head_id" (its newest id), next to "events". Optional and
// advisory, so a value that makes no sense is ignored rather than failing
// the batch, and one too large to add to saturates rather than overflows.
std::optional<std::int64_t> reported_backlog(const ScannedBatch& scan, std::int64_t last_id, std::size_t dropped) {
    constexpr auto kMax = std::numeric_limits<std::int64_t>::max();
    if (scan.remaining && *scan.remaining >= 0) {
        const auto extra = static_cast<std::int64_t>(dropped);  // at most the body's size
        return *scan.remaining > kMax - extra ? kMax : *scan.remaining + extra;
    }
    if (scan.head_id) return ids_after(last_id, *scan.head_id);
    return std::nullopt;
}

// The kept payloads, as the source wrote them. With the body ours, a
// payload of at least half of it is cut out of it in place (the others are
// copied first): one 60 MB event then costs its 60 MB once, not twice.
EventBatch kept_events(const ScannedBatch& scan, std::string_view body, std::string* owned) {
    const auto& kept = scan.kept;
    std::size_t carved = kept.size();
    if (owned != nullptr) {
        for (std::size_t i = 0; i < kept.size(); ++i)
            if ((kept[i].end - kept[i].begin) * 2 >= body.size()) carved = i;
    }
    EventBatch events(kept.size());
    for (std::size_t i = 0; i < kept.size(); ++i) {
        events[i].id = kept[i].id;
        if (i != carved) events[i].payload.assign(body.data() + kept[i].begin, kept[i].end - kept[i].begin);
    }
    if (carved < kept.size()) {
        owned->resize(kept[carved].end);
        owned->erase(0, kept[carved].begin);
        events[carved].payload = std::move(*owned);
    }
    return events;
}

FetchResult parse_checked(std::string_view body, std::string* owned, std::int64_t after_id, int limit,
                          const FetchLimits& limits) {
    if (body.size() > limits.max_body_bytes)
        return transient(fmt::format("response larger than {} bytes", limits.max_body_bytes));
    const auto keep = static_cast<std::size_t>(std::max(limit, 0));
    const ScannedBatch scan = scan_batch(body, after_id, keep, limits.max_depth);
    if (scan.syntax) return syntax_failure(body, *scan.syntax);
    if (scan.envelope_problem) return failing(*scan.envelope_problem);
    if (auto why = shape_problem(scan)) return transient(*why);
    if (scan.event_problem) return failing(*scan.event_problem);
    if (scan.order_problem) return failing(*scan.order_problem);

    const std::size_t dropped = scan.count - scan.kept.size();
    const std::int64_t last_id = scan.kept.empty() ? after_id : scan.kept.back().id;
    auto result = FetchResult::batch(kept_events(scan, body, owned));
    result.backlog = reported_backlog(scan, last_id, dropped);
    return result;
}

FetchResult parsed(std::string_view body, std::string* owned, std::int64_t after_id, int limit,
                   const FetchLimits& limits) {
    FetchResult result = parse_checked(body, owned, after_id, limit, limits);
    if (result.status != Status::ok) result.cause = FetchResult::Cause::invalid_batch;
    return result;
}

}  // namespace

FetchResult parse_batch(std::string_view body, std::int64_t after_id, int limit, const FetchLimits& limits) {
    return parsed(body, nullptr, after_id, limit, limits);
}

FetchResult parse_owned_batch(std::string&& body, std::int64_t after_id, int limit, const FetchLimits& limits) {
    return parsed(body, &body, after_id, limit, limits);
}

}  // namespace tributary
