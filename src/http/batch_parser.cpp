#include "batch_parser.h"

#include <algorithm>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <spdlog/fmt/fmt.h>

#include "batch_outline.h"
#include "core/batch_rules.h"
#include "json_error_text.h"
#include "json_kind.h"
#include "json_spans.h"

namespace tributary {
namespace {

using Status = FetchResult::Status;

FetchResult transient(std::string why) { return FetchResult::failure(Status::transient, std::move(why)); }
FetchResult failing(std::string why) { return FetchResult::failure(Status::failing, std::move(why)); }

// Runs before the parser so that depth costs one pass over the text, with no
// recursion and no allocation, however deep a hostile body goes. Brackets
// inside strings do not count; any other malformation is the parser's to find.
std::optional<std::string> depth_violation(std::string_view text, int max_depth) {
    int depth = 0;
    bool in_string = false;
    bool escaped = false;
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (in_string) {
            if (escaped)
                escaped = false;
            else if (c == '\\')
                escaped = true;
            else if (c == '"')
                in_string = false;
            continue;
        }
        if (c == '"') {
            in_string = true;
        } else if (c == '[' || c == '{') {
            if (++depth > max_depth) return fmt::format("JSON nested deeper than {} levels (at byte {})", max_depth, i);
        } else if ((c == ']' || c == '}') && depth > 0) {
            --depth;
        }
    }
    return std::nullopt;
}

// The envelope: `{"events": [...]}` or a bare array.
std::optional<std::string> shape_problem(const BatchOutline& outline) {
    if (outline.top == JsonKind::array) return std::nullopt;
    if (outline.top != JsonKind::object)
        return fmt::format("top-level JSON is {}, expected an object with \"events\" or an array of events",
                           describe(outline.top));
    if (!outline.events) return "top-level object has no \"events\" member";
    if (*outline.events != JsonKind::array)
        return fmt::format("\"events\" is {}, expected an array", describe(*outline.events));
    return std::nullopt;
}

// batch_violation() holds the rules for ids and words the message, but it
// takes whole events (40 bytes each) where the outline keeps bare ids (8):
// about 100 MB for a 64 MiB body of tiny events. So it is given the ids only
// up to the first that breaks the rules, and none at all when every id
// keeps them; a body whose last id is the bad one still costs that much.
std::optional<std::string> id_violation(const std::vector<std::int64_t>& ids, std::int64_t after_id) {
    std::size_t good = 0;
    for (std::int64_t floor = after_id; good < ids.size() && ids[good] > floor; ++good) floor = ids[good];
    if (good == ids.size()) return std::nullopt;
    EventBatch up_to_it(good + 1);
    for (std::size_t i = 0; i <= good; ++i) up_to_it[i].id = ids[i];
    return batch_violation(up_to_it, after_id);
}

// Each payload is the source's own text of its value, byte for byte: a
// parser would send numbers beyond uint64, or with more digits than a double
// holds, through a double, where jsonb keeps them exact. The spans come from
// a second, lighter scan of the body; should it ever disagree with the
// parser about the events (it must not), there is no payload to give, so
// nothing is returned.
std::optional<EventBatch> kept_events(std::string_view body, const std::vector<std::int64_t>& ids, std::size_t keep) {
    const std::size_t count = std::min(ids.size(), keep);
    const auto spans = payload_spans(body, count);
    if (!spans || spans->size() != count) return std::nullopt;
    EventBatch events(count);
    for (std::size_t i = 0; i < count; ++i) {
        if ((*spans)[i].index != i) return std::nullopt;
        events[i].id = ids[i];
        events[i].payload = std::string((*spans)[i].in(body));
    }
    return events;
}

// The ids after `last_id` up to `head`, or the most an int64 holds when a
// hostile head_id makes that more.
std::int64_t ids_after(std::int64_t last_id, std::int64_t head) {
    constexpr auto max = std::numeric_limits<std::int64_t>::max();
    if (head <= last_id) return 0;
    if (last_id < 0 && head > max + last_id) return max;
    return head - last_id;
}

// A source may say how far behind we are: "remaining" (events after this
// batch) or "head_id" (its newest id), next to "events". Optional and
// advisory, so a value that makes no sense is ignored rather than failing
// the batch, and one too large to add to saturates rather than overflows.
std::optional<std::int64_t> reported_backlog(const BatchOutline& outline, std::int64_t last_id, std::size_t dropped) {
    constexpr auto max = std::numeric_limits<std::int64_t>::max();
    if (outline.remaining && *outline.remaining >= 0) {
        const auto extra = static_cast<std::int64_t>(dropped);  // at most the body's size
        return *outline.remaining > max - extra ? max : *outline.remaining + extra;
    }
    if (outline.head_id) return ids_after(last_id, *outline.head_id);
    return std::nullopt;
}

FetchResult parse_checked(std::string_view body, std::int64_t after_id, int limit, const FetchLimits& limits) {
    if (body.size() > limits.max_body_bytes)
        return transient(fmt::format("response larger than {} bytes", limits.max_body_bytes));
    if (auto why = depth_violation(body, limits.max_depth)) return transient(*why);

    const BatchOutline outline = outline_batch(body);
    if (outline.unreadable) return FetchResult::failure(outline.unreadable->status, outline.unreadable->why);
    if (auto why = shape_problem(outline)) return transient(*why);
    if (outline.event_problem) return failing(*outline.event_problem);
    if (auto violation = id_violation(outline.ids, after_id)) return failing(*violation);

    const auto keep = static_cast<std::size_t>(std::max(limit, 0));
    const std::size_t dropped = outline.ids.size() > keep ? outline.ids.size() - keep : 0;
    auto events = kept_events(body, outline.ids, keep);
    if (!events) return failing("internal error: could not find the payloads of a valid body");
    const auto backlog = reported_backlog(outline, events->empty() ? after_id : events->back().id, dropped);
    auto result = FetchResult::batch(std::move(*events));
    result.backlog = backlog;
    return result;
}

}  // namespace

FetchResult parse_batch(std::string_view body, std::int64_t after_id, int limit, const FetchLimits& limits) {
    // Every check above returns a value; this only keeps the "never throws"
    // promise should a library call surprise us.
    FetchResult result;
    try {
        result = parse_checked(body, after_id, limit, limits);
    } catch (const nlohmann::json::exception& e) {
        result = transient("could not read JSON body: " + readable_json_error(e.what()));
    }
    if (result.status != Status::ok) result.cause = FetchResult::Cause::invalid_batch;
    return result;
}

}  // namespace tributary
