#include "batch_parser.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <spdlog/fmt/fmt.h>

#include "core/batch_rules.h"
#include "json_spans.h"

namespace tributary {
namespace {

using nlohmann::json;
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

// nlohmann's messages start with a tag such as "[json.exception.parse_error.101] ";
// the rest ("parse error at line 1, column 7: ...") is what a user can act on.
// It quotes the bytes last read, which may be broken UTF-8: the message is
// stored in PostgreSQL, so only printable ASCII is kept.
std::string without_tag(const char* what) {
    std::string_view s(what);
    if (!s.empty() && s.front() == '[') {
        const auto end = s.find("] ");
        if (end != std::string_view::npos) s.remove_prefix(end + 2);
    }
    std::string out(s);
    for (char& c : out)
        if (c < 0x20 || c > 0x7e) c = '?';
    return out;
}

std::string describe(const json& v) {
    switch (v.type()) {
        case json::value_t::null: return "null";
        case json::value_t::object: return "an object";
        case json::value_t::array: return "an array";
        case json::value_t::string: return "a string";
        case json::value_t::boolean: return "a boolean";
        case json::value_t::number_float: return "a floating-point number";
        case json::value_t::number_integer:
        case json::value_t::number_unsigned: return "an integer";
        default: return "an unexpected value";
    }
}

// The events array of either accepted shape, or why the body has neither.
const json* event_list(const json& doc, std::string& why) {
    if (doc.is_array()) return &doc;
    if (!doc.is_object()) {
        why = "top-level JSON is " + describe(doc) + ", expected an object with \"events\" or an array of events";
        return nullptr;
    }
    const auto events = doc.find("events");
    if (events == doc.end()) {
        why = "top-level object has no \"events\" member";
        return nullptr;
    }
    if (!events->is_array()) {
        why = "\"events\" is " + describe(*events) + ", expected an array";
        return nullptr;
    }
    return &*events;
}

std::optional<std::string> id_problem(const json& id, std::int64_t& out) {
    constexpr auto max = std::numeric_limits<std::int64_t>::max();
    if (id.is_number_unsigned()) {
        const auto u = id.get<std::uint64_t>();
        if (u > static_cast<std::uint64_t>(max))
            return fmt::format("id {} is out of the 64-bit signed integer range", u);
        out = static_cast<std::int64_t>(u);
        return std::nullopt;
    }
    if (id.is_number_integer()) {
        out = id.get<std::int64_t>();
        return std::nullopt;
    }
    if (id.is_number_float()) {
        // The parser turns integers too large even for uint64 into doubles;
        // name those as out of range rather than as fractions.
        const double d = id.get<double>();
        if (std::trunc(d) == d && (d >= 0x1p63 || d <= -0x1p63))
            return fmt::format("id {} is out of the 64-bit signed integer range", id.dump());
        return fmt::format("id is a floating-point number ({}), expected an integer", id.dump());
    }
    return "id is " + describe(id) + ", expected an integer";
}

// PostgreSQL's jsonb refuses U+0000 anywhere, in keys as in values. Walks with
// an explicit stack, so the depth of the value does not matter here.
std::optional<std::string> nul_problem(const json& payload) {
    std::vector<const json*> pending{&payload};
    while (!pending.empty()) {
        const json& v = *pending.back();
        pending.pop_back();
        if (v.is_string()) {
            if (v.get_ref<const std::string&>().find('\0') != std::string::npos) return "a string value";
        } else if (v.is_object()) {
            for (auto it = v.begin(); it != v.end(); ++it) {
                if (it.key().find('\0') != std::string::npos) return "a key";
                pending.push_back(&it.value());
            }
        } else if (v.is_array()) {
            for (const auto& element : v) pending.push_back(&element);
        }
    }
    return std::nullopt;
}

// Checks one element of the list and reads its id into `out` (the payload text
// comes later, from fill_payloads), or says why it cannot be stored, naming
// the element's index and, once known, its id.
std::optional<std::string> read_event(const json& element, std::size_t index, Event& out) {
    if (!element.is_object())
        return fmt::format("event #{} is {}, expected an object with \"id\" and \"payload\"", index, describe(element));
    const auto id = element.find("id");
    if (id == element.end()) return fmt::format("event #{}: id is missing", index);
    if (auto why = id_problem(*id, out.id)) return fmt::format("event #{}: {}", index, *why);
    const auto payload = element.find("payload");
    if (payload == element.end()) return fmt::format("event #{} (id {}): payload is missing", index, out.id);
    if (auto where = nul_problem(*payload))
        return fmt::format("event #{} (id {}): payload has U+0000 in {}, which PostgreSQL jsonb cannot store", index,
                           out.id, *where);
    return std::nullopt;
}

// A source may say how far behind we are: "remaining" (events after this
// batch) or "head_id" (its newest id), next to "events". Optional and
// advisory, so a value that makes no sense is ignored rather than failing
// the batch.
std::optional<std::int64_t> reported_backlog(const json& doc, std::int64_t last_id, std::size_t dropped) {
    if (!doc.is_object()) return std::nullopt;
    const auto extra = static_cast<std::int64_t>(dropped);
    if (const auto remaining = doc.find("remaining");
        remaining != doc.end() && remaining->is_number_integer() && remaining->get<std::int64_t>() >= 0)
        return remaining->get<std::int64_t>() + extra;
    if (const auto head = doc.find("head_id"); head != doc.end() && head->is_number_integer())
        return std::max<std::int64_t>(0, head->get<std::int64_t>() - last_id);
    return std::nullopt;
}

// Each payload is the source's own text of its value, byte for byte: dump()
// would send numbers beyond uint64, or with more digits than a double holds,
// through a double, where jsonb keeps them exact (and it costs a
// serialisation). The spans come from a second, lighter scan of the body; if
// it ever disagreed with the parser about the events (it must not), dump() is
// the fallback, so no event is left without a payload.
void fill_payloads(std::string_view body, const json& list, EventBatch& events) {
    const auto spans = payload_spans(body);
    const bool usable = spans && spans->size() == list.size();
    for (std::size_t i = 0; i < events.size(); ++i) {
        if (usable && (*spans)[i].index == i)
            events[i].payload = std::string((*spans)[i].in(body));
        else
            events[i].payload = list[i].at("payload").dump();
    }
}

FetchResult parse_checked(std::string_view body, std::int64_t after_id, int limit, const FetchLimits& limits) {
    if (body.size() > limits.max_body_bytes)
        return transient(fmt::format("response larger than {} bytes", limits.max_body_bytes));
    if (auto why = depth_violation(body, limits.max_depth)) return transient(*why);

    json doc;
    try {
        doc = json::parse(body.begin(), body.end());
    } catch (const json::exception& e) {
        return transient("malformed JSON body: " + without_tag(e.what()));
    }

    std::string why;
    const json* list = event_list(doc, why);
    if (list == nullptr) return transient(why);

    EventBatch events(list->size());
    for (std::size_t i = 0; i < list->size(); ++i) {
        if (auto problem = read_event((*list)[i], i, events[i])) return failing(*problem);
    }
    if (auto violation = batch_violation(events, after_id)) return failing(*violation);

    const auto keep = static_cast<std::size_t>(std::max(limit, 0));
    const std::size_t dropped = events.size() > keep ? events.size() - keep : 0;
    if (dropped) events.resize(keep);
    fill_payloads(body, *list, events);  // only for the events kept
    const auto backlog = reported_backlog(doc, events.empty() ? after_id : events.back().id, dropped);
    auto result = FetchResult::batch(std::move(events));
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
    } catch (const json::exception& e) {
        result = transient("could not read JSON body: " + without_tag(e.what()));
    }
    if (result.status != Status::ok) result.cause = FetchResult::Cause::invalid_batch;
    return result;
}

}  // namespace tributary
