#include "style_routes.h"

#include <algorithm>
#include <limits>

#include "iso_time.h"
#include "page_token.h"
#include "query_params.h"
#include "style_records.h"
#include "style_request.h"

namespace tributary::source_server {
namespace {

constexpr const char* kJson = "application/json";
constexpr std::int64_t kDefaultLimit = 1000;
constexpr std::int64_t kMaxLimit = 10000;
constexpr std::int64_t kMaxId = std::int64_t{1} << 62;
constexpr std::int64_t kOneDayMs = 86400000;
constexpr std::size_t kHugeTokenBytes = 9000;  // over the loader's 8 KB cap
constexpr const char* kCursorTag = "p";        // a cursor token names the first id of its page

// A page as a style found it, before the hostile modes touch it.
struct Page {
    std::vector<EventRef> records;
    std::int64_t first_id = 1;  // where the page starts (for made-up records when it is empty)
};

// no-key / key-bool need a record #1: an empty page gets one made up at first_id.
KeyDamage first_record_damage(StyleCall& call, Page& page) {
    if (call.fault != FaultMode::no_key && call.fault != FaultMode::key_bool) return KeyDamage::none;
    if (page.records.empty()) page.records = call.source.events_from(page.first_id, 1, call.now_us);
    return call.fault == FaultMode::no_key ? KeyDamage::missing : KeyDamage::boolean;
}

// page-shrink: the last page (the one not full) is served one record short.
void shrink_last_page(StyleCall& call, Page& page, std::int64_t limit) {
    if (call.fault == FaultMode::page_shrink && !page.records.empty() &&
        static_cast<std::int64_t>(page.records.size()) < limit) {
        page.records.pop_back();
    }
}

// {"MEMBER":[...]...}: the records member, left out in mode no-records; `rest` follows it.
std::string object_body(StyleCall& call, Page& page, const char* member, const std::string& rest) {
    KeyDamage damage = first_record_damage(call, page);
    std::string out = "{";
    if (call.fault != FaultMode::no_records) {
        out += '"';
        out += member;
        out += "\":";
        out += style_records_array(call.generator, call.source.identity(), page.records, damage);
    }
    if (!rest.empty()) {
        if (out.size() > 1) out += ',';
        out += rest;
    }
    out += '}';
    return out;
}

// The page-size parameter, or a 400.
std::optional<std::int64_t> limit_or_400(StyleCall& call) {
    auto limit = page_size_param(call.req, "limit", kDefaultLimit, kMaxLimit);
    if (!limit) json_error(call.res, 400, "limit must be an integer >= 1");
    return limit;
}

// Events first_id .. first_id + limit - 1 that exist.
Page page_from(const Source& source, std::int64_t first_id, std::int64_t limit) {
    return Page{source.events_after(first_id - 1, limit), first_id};
}

bool is_full(const Page& page, std::int64_t limit) { return static_cast<std::int64_t>(page.records.size()) >= limit; }

std::int64_t serve_after_key(StyleCall& call) {
    auto limit = limit_or_400(call);
    if (!limit) return 0;
    std::int64_t after = 0;
    if (call.req.has_param("starting_after")) {
        auto id = parse_style_key(call.req.get_param_value("starting_after"));
        if (!id || *id > kMaxId) {
            json_error(call.res, 400, "starting_after must be a key like evt-0000000001");
            return 0;
        }
        after = *id;
    }
    Page page = page_from(call.source, after + 1, *limit);
    const bool has_more = !page.records.empty() && page.records.back().id < call.source.produced();
    std::string body = object_body(call, page, "data", has_more ? "\"has_more\":true" : "\"has_more\":false");
    call.res.set_content(body, kJson);
    return static_cast<std::int64_t>(page.records.size());
}

std::int64_t serve_cursor(StyleCall& call) {
    auto limit = limit_or_400(call);
    if (!limit) return 0;
    std::int64_t first = 1;
    std::string asked = page_token(kCursorTag, 1);
    if (call.req.has_param("cursor")) {
        asked = call.req.get_param_value("cursor");
        auto id = read_page_token(asked, kCursorTag);
        if (!id || *id < 1 || *id > kMaxId) {
            json_error(call.res, 400, "unknown cursor");
            return 0;
        }
        first = *id;
    }
    Page page = page_from(call.source, first, *limit);
    std::optional<std::string> next;
    if (is_full(page, *limit)) next = page_token(kCursorTag, first + *limit);
    shrink_last_page(call, page, *limit);
    if (call.fault == FaultMode::token_loop) next = asked;
    if (call.fault == FaultMode::token_huge) {
        next = page_token(kCursorTag, first + *limit);
        while (next->size() < kHugeTokenBytes) *next += 'A';
    }
    std::string rest = "\"next_cursor\":" + (next ? json_string(*next) : std::string("null"));
    call.res.set_content(object_body(call, page, "data", rest), kJson);
    return static_cast<std::int64_t>(page.records.size());
}

std::int64_t serve_link(StyleCall& call) {
    auto limit = limit_or_400(call);
    if (!limit) return 0;
    IntParam start = int_param(call.req, "page_start", 1, 1, kMaxId);
    if (!start.valid) {
        json_error(call.res, 400, "page_start must be an integer >= 1");
        return 0;
    }
    Page page = page_from(call.source, start.value, *limit);
    const std::string path = "/styles/link/" + call.source.name() +
                             "?page_start=" + std::to_string(start.value + *limit) + "&limit=" + std::to_string(*limit);
    std::optional<std::string> next;
    if (is_full(page, *limit)) next = origin_of(call.req) + path;
    if (call.fault == FaultMode::token_loop) next = origin_of(call.req) + call.req.target;
    if (call.fault == FaultMode::link_offsite) next = "http://attacker.invalid" + path;
    if (next) call.res.set_header("Link", "<" + *next + ">; rel=\"next\"");

    KeyDamage damage = first_record_damage(call, page);
    std::string body = call.fault == FaultMode::no_records
                           ? std::string("{}")
                           : style_records_array(call.generator, call.source.identity(), page.records, damage);
    call.res.set_content(body, kJson);
    return static_cast<std::int64_t>(page.records.size());
}

std::int64_t serve_time(StyleCall& call) {
    auto limit = limit_or_400(call);
    if (!limit) return 0;
    std::int64_t since_ms = std::numeric_limits<std::int32_t>::min();  // absent: from the beginning
    if (call.req.has_param("since")) {
        auto parsed = parse_time_param(call.req.get_param_value("since"));
        if (!parsed) {
            json_error(call.res, 400, "since must be ISO 8601 with a zone or Unix seconds");
            return 0;
        }
        since_ms = *parsed;
    }
    Page page{call.source.events_updated_since(since_ms, *limit), call.source.produced() + 1};
    if (call.fault == FaultMode::time_backwards) {
        if (page.records.empty()) page.records = call.source.events_from(page.first_id, 1, call.now_us);
        page.records.back().updated_ms = since_ms - kOneDayMs;
    }
    call.res.set_content(object_body(call, page, "data", ""), kJson);
    return static_cast<std::int64_t>(page.records.size());
}

// limit-ignored, as json-server does with the `limit` it does not know: pages of its own size,
// or the whole list from an offset; the total in X-Total-Count, a Link to the next page.
constexpr std::int64_t kOwnPageSize = 10;

void total_and_next(StyleCall& call, std::int64_t through, const std::string& next_query) {
    const std::int64_t total = call.source.produced();
    call.res.set_header("X-Total-Count", std::to_string(total));
    if (through < total) {
        const auto path = call.req.path + "?" + next_query;
        call.res.set_header("Link", "<" + origin_of(call.req) + path + ">; rel=\"next\"");
    }
}

std::int64_t serve_page(StyleCall& call) {
    auto limit = limit_or_400(call);
    if (!limit) return 0;
    if (call.fault == FaultMode::limit_ignored) limit = kOwnPageSize;
    IntParam number = int_param(call.req, "page", 1, 1, kMaxId / *limit);
    if (!number.valid) {
        json_error(call.res, 400, "page must be an integer >= 1");
        return 0;
    }
    Page page = page_from(call.source, (number.value - 1) * *limit + 1, *limit);
    shrink_last_page(call, page, *limit);
    if (call.fault == FaultMode::limit_ignored)
        total_and_next(call, (number.value - 1) * *limit + static_cast<std::int64_t>(page.records.size()),
                       "page=" + std::to_string(number.value + 1));
    call.res.set_content(object_body(call, page, "results", ""), kJson);
    return static_cast<std::int64_t>(page.records.size());
}

std::int64_t serve_offset(StyleCall& call) {
    auto limit = limit_or_400(call);
    if (!limit) return 0;
    IntParam offset = int_param(call.req, "offset", 0, 0, kMaxId);
    if (!offset.valid) {
        json_error(call.res, 400, "offset must be an integer >= 0");
        return 0;
    }
    if (call.fault == FaultMode::limit_ignored)
        limit = std::max<std::int64_t>(call.source.produced() - offset.value, 0);
    Page page = page_from(call.source, offset.value + 1, *limit);
    if (call.fault == FaultMode::limit_ignored) total_and_next(call, call.source.produced(), "");
    call.res.set_content(object_body(call, page, "items", ""), kJson);
    return static_cast<std::int64_t>(page.records.size());
}

struct StyleRoute {
    const char* name;
    std::int64_t (*serve)(StyleCall&);
};

constexpr StyleRoute kStyleRoutes[] = {
    {"after-key", serve_after_key}, {"cursor", serve_cursor}, {"link", serve_link},
    {"time", serve_time},           {"page", serve_page},     {"offset", serve_offset},
};

}  // namespace

void install_style_routes(httplib::Server& server, ServerContext& ctx) {
    for (const StyleRoute& route : kStyleRoutes) {
        const std::string style = route.name;
        auto serve = route.serve;
        server.Get("/styles/" + style + "/([^/]+)",
                   [&ctx, style, serve](const httplib::Request& req, httplib::Response& res) {
                       serve_style_request(ctx, req, res, style, req.matches[1].str(), serve);
                   });
    }
}

std::optional<std::string> style_truth(const ServerContext& ctx, const Source& source, const std::string& style) {
    bool known = false;
    for (const StyleRoute& route : kStyleRoutes) known = known || style == route.name;
    if (!known) return std::nullopt;
    std::vector<EventRef> events =
        style == "time" ? source.events_updated_since(std::numeric_limits<std::int32_t>::min(), source.produced())
                        : source.events_after(0, source.produced());
    return style_records_array(ctx.generator, source.identity(), events);
}

}  // namespace tributary::source_server
