#include "fixture_routes.h"

#include <algorithm>

#include "fixture_records.h"
#include "page_token.h"
#include "query_params.h"
#include "style_request.h"
#include "zendesk_stream.h"

namespace tributary::source_server {
namespace {

constexpr const char* kJson = "application/json";
constexpr std::int64_t kMaxId = std::int64_t{1} << 62;
constexpr std::int64_t kMaxUnixSeconds = 1'000'000'000'000;
constexpr const char* kShopifyAfter = "a";   // page_info of the page after an order id
constexpr const char* kShopifyBefore = "b";  // page_info of the page before an order id
constexpr const char* kSlackTag = "n";       // Slack cursor: the first message id of the page

using AppendRecord = void (*)(std::string&, const EventGenerator&, const SourceIdentity&, const EventRef&);

// The fixtures keep every event at start + id ms even in mode `late` (that mode is for the
// generic time style): Slack's ts and the other times stay unique and in id order.
std::string records_array(const Source& source, const EventGenerator& generator, const std::vector<EventRef>& events,
                          AppendRecord append) {
    std::string out = "[";
    for (std::size_t i = 0; i < events.size(); ++i) {
        if (i > 0) out += ',';
        EventRef on_time = events[i];
        on_time.updated_ms = source.start_ms() + on_time.id;
        append(out, generator, source.identity(), on_time);
    }
    out += ']';
    return out;
}

std::string records_array(const StyleCall& call, const std::vector<EventRef>& events, AppendRecord append) {
    return records_array(call.source, call.generator, events, append);
}

bool more_after(const StyleCall& call, const std::vector<EventRef>& events) {
    return !events.empty() && events.back().id < call.source.produced();
}

// --- GitHub: page numbers from 1, Link rel="next"/"last" (and "prev"/"first" after page 1).
std::int64_t serve_github(StyleCall& call) {
    auto per_page = page_size_param(call.req, "per_page", 30, 100);
    IntParam page = int_param(call.req, "page", 1, 1, kMaxId / 100);
    if (!per_page || !page.valid) {
        json_error(call.res, 422, "per_page and page must be positive integers");
        return 0;
    }
    auto events = call.source.events_after((page.value - 1) * *per_page, *per_page);
    const std::int64_t last_page = std::max<std::int64_t>(1, (call.source.produced() + *per_page - 1) / *per_page);
    auto url = [&](std::int64_t p) {
        return "<" + origin_of(call.req) + "/github/repos/acme/" + call.source.name() +
               "/issues/comments?sort=created&direction=asc&per_page=" + std::to_string(*per_page) +
               "&page=" + std::to_string(p) + ">";
    };
    std::string link;
    if (page.value > 1) link = url(page.value - 1) + "; rel=\"prev\", " + url(1) + "; rel=\"first\"";
    if (page.value < last_page) {
        if (!link.empty()) link += ", ";
        link += url(page.value + 1) + "; rel=\"next\", " + url(last_page) + "; rel=\"last\"";
    }
    if (!link.empty()) call.res.set_header("Link", link);
    call.res.set_content(records_array(call, events, append_github_comment), kJson);
    return static_cast<std::int64_t>(events.size());
}

// --- Stripe: newest first within a page; ending_before=X gives the N events just newer than X.
std::optional<std::int64_t> stripe_id_param(StyleCall& call, const char* name) {
    const std::string value = call.req.get_param_value(name);
    if (value.size() != 14 || value.compare(0, 4, "evt_") != 0) return std::nullopt;
    auto id = parse_int(value.substr(4));
    if (!id || *id < 0 || *id > kMaxId) return std::nullopt;
    return id;
}

std::int64_t serve_stripe(StyleCall& call) {
    auto limit = page_size_param(call.req, "limit", 10, 100);
    if (!limit) {
        json_error(call.res, 400, "limit must be an integer from 1 to 100");
        return 0;
    }
    std::vector<EventRef> events;
    bool has_more = false;
    if (call.req.has_param("starting_after")) {  // older than X, the newest of them first
        auto before = stripe_id_param(call, "starting_after");
        if (!before) {
            json_error(call.res, 400, "No such event: starting_after");
            return 0;
        }
        std::int64_t first = std::max<std::int64_t>(1, *before - *limit);
        events = call.source.events_after(first - 1, std::min(*limit, *before - first));
        has_more = first > 1;
    } else {
        std::int64_t after = 0;  // no cursor: the oldest N (a fixture choice, so a reader starts at the beginning)
        if (call.req.has_param("ending_before")) {
            auto id = stripe_id_param(call, "ending_before");
            if (!id) {
                json_error(call.res, 400, "No such event: ending_before");
                return 0;
            }
            after = *id;
        }
        events = call.source.events_after(after, *limit);
        has_more = more_after(call, events);
    }
    std::reverse(events.begin(), events.end());
    std::string body = "{\"object\":\"list\",\"url\":\"/v1/events\",\"has_more\":";
    body += has_more ? "true" : "false";
    body += ",\"data\":" + records_array(call, events, append_stripe_event) + "}";
    call.res.set_content(body, kJson);
    return static_cast<std::int64_t>(events.size());
}

// --- Shopify: cursor pages by page_info, Link rel="previous"/"next".
std::int64_t serve_shopify(StyleCall& call) {
    auto limit = page_size_param(call.req, "limit", 50, 250);
    if (!limit) {
        json_error(call.res, 400, "limit must be an integer from 1 to 250");
        return 0;
    }
    std::int64_t first = 1;
    if (call.req.has_param("page_info")) {
        const std::string info = call.req.get_param_value("page_info");
        auto after = read_page_token(info, kShopifyAfter);
        auto before = read_page_token(info, kShopifyBefore);
        if (after) {
            first = *after + 1;
        } else if (before) {
            first = std::max<std::int64_t>(1, *before - *limit);
        } else {
            call.res.status = 400;
            call.res.set_content("{\"errors\":{\"page_info\":\"Invalid value.\"}}", kJson);
            return 0;
        }
    }
    auto events = call.source.events_after(first - 1, *limit);
    auto url = [&](const char* tag, std::int64_t id) {
        return "<" + origin_of(call.req) + "/shopify/" + call.source.name() +
               "/admin/api/2024-01/orders.json?limit=" + std::to_string(*limit) + "&page_info=" + page_token(tag, id) +
               ">";
    };
    std::string link;
    if (first > 1 && !events.empty()) link = url(kShopifyBefore, events.front().id) + "; rel=\"previous\"";
    if (more_after(call, events)) {
        if (!link.empty()) link += ", ";
        link += url(kShopifyAfter, events.back().id) + "; rel=\"next\"";
    }
    if (!link.empty()) call.res.set_header("Link", link);
    call.res.set_content("{\"orders\":" + records_array(call, events, append_shopify_order) + "}", kJson);
    return static_cast<std::int64_t>(events.size());
}

// --- Slack: cursor in response_metadata.next_cursor, "" at the end; errors are 200 ok:false.
std::int64_t serve_slack(StyleCall& call) {
    auto slack_error = [&](const char* code) {
        call.res.set_content(std::string("{\"ok\":false,\"error\":\"") + code + "\"}", kJson);
        return std::int64_t{0};
    };
    if (call.req.get_param_value("channel").empty()) return slack_error("channel_not_found");
    auto limit = page_size_param(call.req, "limit", 100, 999);
    if (!limit) return slack_error("invalid_limit");
    std::int64_t first = 1;
    if (call.req.has_param("cursor") && !call.req.get_param_value("cursor").empty()) {
        auto id = read_page_token(call.req.get_param_value("cursor"), kSlackTag);
        if (!id || *id < 1 || *id > kMaxId) return slack_error("invalid_cursor");
        first = *id;
    }
    auto events = call.source.events_after(first - 1, *limit);
    const bool has_more = more_after(call, events);
    std::string body = "{\"ok\":true,\"messages\":" + records_array(call, events, append_slack_message);
    body += has_more ? ",\"has_more\":true" : ",\"has_more\":false";
    body += ",\"pin_count\":0,\"response_metadata\":{\"next_cursor\":\"";
    if (has_more) body += page_token(kSlackTag, events.back().id + 1);
    body += "\"}}";
    call.res.set_content(body, kJson);
    return static_cast<std::int64_t>(events.size());
}

// --- Zendesk: time-based incremental export; end_time/next_page carry the next start_time.
std::string zendesk_array(const Source& source, const EventGenerator& generator,
                          const std::vector<ZendeskEntry>& entries) {
    std::string out = "[";
    for (std::size_t i = 0; i < entries.size(); ++i) {
        if (i > 0) out += ',';
        const ZendeskEntry& e = entries[i];
        append_zendesk_ticket(out, generator, source.identity(), e.ticket_id, e.created_s, e.updated_s, e.updated);
    }
    out += ']';
    return out;
}

std::int64_t serve_zendesk(StyleCall& call) {
    IntParam start = int_param(call.req, "start_time", 0, 0, kMaxUnixSeconds);
    auto per_page = page_size_param(call.req, "per_page", 1000, 1000);
    if (!start.present || !start.valid || !per_page) {
        call.res.status = 400;
        call.res.set_content(
            "{\"error\":\"InvalidValue\",\"description\":\"start_time (Unix seconds) is required; per_page is "
            "1..1000\"}",
            kJson);
        return 0;
    }
    auto entries = zendesk_entries(call.source, start.value, *per_page, call.fault == FaultMode::updates);
    const bool end_of_stream = static_cast<std::int64_t>(entries.size()) < *per_page;
    const std::int64_t end_time = entries.empty() ? start.value : entries.back().updated_s;
    std::string body = "{\"tickets\":" + zendesk_array(call.source, call.generator, entries) + ",\"count\":";
    append_int(body, static_cast<std::int64_t>(entries.size()));
    body += end_of_stream ? ",\"end_of_stream\":true" : ",\"end_of_stream\":false";
    body += ",\"end_time\":";
    append_int(body, end_time);
    body += ",\"next_page\":";
    if (end_of_stream) {
        body += "null";
    } else {
        body += "\"" + origin_of(call.req) + "/zendesk/" + call.source.name() +
                "/api/v2/incremental/tickets.json?start_time=" + std::to_string(end_time);
        if (call.req.has_param("per_page")) body += "&per_page=" + std::to_string(*per_page);
        body += '"';
    }
    body += '}';
    call.res.set_content(body, kJson);
    return static_cast<std::int64_t>(entries.size());
}

// --- HubSpot: paging.next.after (the next id) until the last page, which has no "paging".
std::int64_t serve_hubspot(StyleCall& call) {
    auto limit = page_size_param(call.req, "limit", 10, 100);
    IntParam after = int_param(call.req, "after", 0, 0, kMaxId);
    if (!limit || !after.valid) {
        json_error(call.res, 400, "limit must be 1..100 and after a number");
        return 0;
    }
    // `after` is the id the page starts at (HubSpot hands out the next id).
    auto events = call.source.events_after(std::max<std::int64_t>(0, after.value - 1), *limit);
    std::string body = "{\"results\":" + records_array(call, events, append_hubspot_contact);
    if (more_after(call, events)) {
        const std::string next = std::to_string(events.back().id + 1);
        body += ",\"paging\":{\"next\":{\"after\":\"" + next + "\",\"link\":\"" + origin_of(call.req) + "/hubspot/" +
                call.source.name() + "/crm/v3/objects/contacts?after=" + next + "&limit=" + std::to_string(*limit) +
                "\"}}";
    }
    body += '}';
    call.res.set_content(body, kJson);
    return static_cast<std::int64_t>(events.size());
}

struct FixtureRoute {
    const char* style;
    const char* pattern;
    std::int64_t (*serve)(StyleCall&);
    AppendRecord append;  // null: the fixture has its own truth (zendesk)
};

constexpr FixtureRoute kFixtures[] = {
    {"github", R"(/github/repos/acme/([^/]+)/issues/comments)", serve_github, append_github_comment},
    {"stripe", R"(/stripe/([^/]+)/v1/events)", serve_stripe, append_stripe_event},
    {"shopify", R"(/shopify/([^/]+)/admin/api/2024-01/orders\.json)", serve_shopify, append_shopify_order},
    {"slack", R"(/slack/([^/]+)/api/conversations\.history)", serve_slack, append_slack_message},
    {"zendesk", R"(/zendesk/([^/]+)/api/v2/incremental/tickets\.json)", serve_zendesk, nullptr},
    {"hubspot", R"(/hubspot/([^/]+)/crm/v3/objects/contacts)", serve_hubspot, append_hubspot_contact},
};

}  // namespace

void install_fixture_routes(httplib::Server& server, ServerContext& ctx) {
    for (const FixtureRoute& route : kFixtures) {
        const std::string style = route.style;
        auto serve = route.serve;
        server.Get(route.pattern, [&ctx, style, serve](const httplib::Request& req, httplib::Response& res) {
            serve_style_request(ctx, req, res, style, req.matches[1].str(), serve);
        });
    }
}

std::optional<std::string> fixture_truth(const ServerContext& ctx, const Source& source, const std::string& style) {
    for (const FixtureRoute& route : kFixtures) {
        if (style != route.style) continue;
        if (route.append == nullptr) {  // zendesk: the whole stream, every version
            const bool updates = source.fault() == FaultMode::updates;
            return zendesk_array(source, ctx.generator, zendesk_entries(source, 0, 2 * source.produced() + 1, updates));
        }
        return records_array(source, ctx.generator, source.events_after(0, source.produced()), route.append);
    }
    return std::nullopt;
}

}  // namespace tributary::source_server
