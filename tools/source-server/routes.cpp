#include "routes.h"

#include <charconv>
#include <optional>
#include <regex>
#include <string>

#include "common/exception_text.h"
#include "fault_responses.h"
#include "fixture_routes.h"
#include "query_params.h"
#include "request_arrival.h"
#include "style_routes.h"
#include "wall_clock.h"

namespace tributary::source_server {
namespace {

constexpr std::int64_t kDefaultLimit = 1000;
constexpr std::int64_t kMaxLimit = 10000;
constexpr std::int64_t kMaxAfterId = std::int64_t{1} << 62;
constexpr const char* kJson = "application/json";

// after_id: an integer 0 <= A <= kMaxAfterId (headroom so that A + limit never overflows).
std::optional<std::int64_t> parse_after_id(const httplib::Request& req) {
    if (!req.has_param("after_id")) return std::nullopt;
    auto value = parse_int(req.get_param_value("after_id"));
    if (!value || *value < 0 || *value > kMaxAfterId) return std::nullopt;
    return value;
}

// limit: an integer >= 1, default 1000, capped at 10000.
std::optional<std::int64_t> parse_limit(const httplib::Request& req) {
    if (!req.has_param("limit")) return kDefaultLimit;
    auto value = parse_int(req.get_param_value("limit"));
    if (!value || *value < 1) return std::nullopt;
    return std::min(*value, kMaxLimit);
}

void serve_events(ServerContext& ctx, const httplib::Request& req, httplib::Response& res) {
    RequestRecord record;
    record.arrival_us = request_arrival_us();  // stamped in the pre-routing hook
    record.source = req.matches[1].str();

    Source* source = ctx.sources.find(record.source);
    if (source == nullptr) {
        json_error(res, 404, "unknown source '" + record.source + "'");
    } else {
        source->count_request();
        record.after_id = parse_after_id(req);
        record.limit = parse_limit(req);
        if (!record.after_id) {
            json_error(res, 400, "after_id must be an integer from 0 to " + std::to_string(kMaxAfterId));
        } else if (!record.limit) {
            json_error(res, 400, "limit must be an integer >= 1");
        } else {
            BatchQuery query{*record.after_id, *record.limit};
            record.fault = source->fault();
            if (!shapes_events_route(record.fault)) {
                auto events = source->events_after(query.after_id, query.limit);
                res.status = 200;
                res.set_content(ctx.generator.batch_body(source->identity(), events), kJson);
                record.events = static_cast<std::int64_t>(events.size());
            } else {
                auto outcome =
                    respond_with_fault(record.fault, *source, ctx.generator, query, realtime_us(), res, ctx.stopping);
                record.events = outcome.events;
                record.retry_after = std::move(outcome.retry_after);
            }
        }
    }
    record.status = res.status;
    ctx.log.add(std::move(record));
}

// GET /_truth/NAME: the events route's events; ?style=S: the records of style or fixture S.
void serve_truth(ServerContext& ctx, const httplib::Request& req, httplib::Response& res) {
    Source* source = ctx.sources.find(req.matches[1].str());
    if (source == nullptr) return json_error(res, 404, "unknown source '" + req.matches[1].str() + "'");
    if (req.has_param("style")) {
        const std::string style = req.get_param_value("style");
        auto body = style_truth(ctx, *source, style);
        if (!body) body = fixture_truth(ctx, *source, style);
        if (!body) return json_error(res, 400, "unknown style '" + style + "'");
        res.status = 200;
        res.set_content(*body, kJson);
        return;
    }
    auto events = source->events_after(0, source->produced());
    res.status = 200;
    res.set_content(ctx.generator.array_body(source->identity(), events), kJson);
}

void serve_requests(ServerContext& ctx, const httplib::Request& req, httplib::Response& res) {
    std::optional<std::string> filter;
    if (req.has_param("source")) filter = req.get_param_value("source");
    res.status = 200;
    res.set_content(ctx.log.to_json(filter), kJson);
}

void serve_stats(ServerContext& ctx, httplib::Response& res) {
    std::string out = "{\"sources\":";
    append_int(out, static_cast<std::int64_t>(ctx.sources.all().size()));
    out += ",\"requests\":";
    append_int(out, ctx.log.size());
    out += ",\"pool\":{\"threads\":";
    append_int(out, ctx.pool.threads);
    out += ",\"connections\":";
    append_int(out, ctx.pool.connections.load());
    out += ",\"busy\":";
    append_int(out, ctx.pool.busy.load());
    out += ",\"max_busy\":";
    append_int(out, ctx.pool.max_busy.load());
    out += ",\"starved_connections\":";
    append_int(out, ctx.pool.starved.load());
    out += ",\"max_wait_us\":";
    append_int(out, ctx.pool.max_wait_us.load());
    out += "},\"per_source\":{";
    bool first = true;
    for (const auto& source : ctx.sources.all()) {
        if (!first) out += ',';
        first = false;
        out += source->identity().name_json;
        out += ":{\"produced\":";
        append_int(out, source->produced());
        out += ",\"requests\":";
        append_int(out, source->requests());
        out += ",\"rate_limited\":";
        append_int(out, source->rate_window().refused());
        out += ",\"fault\":\"";
        out += fault_mode_name(source->fault());
        out += "\"}";
    }
    out += '}';
    if (ctx.oauth != nullptr) out += ",\"oauth\":" + ctx.oauth->stats_json();
    out += '}';
    res.status = 200;
    res.set_content(out, kJson);
}

void set_fault(ServerContext& ctx, const std::string& name, const httplib::Request& req, httplib::Response& res) {
    Source* source = ctx.sources.find(name);
    if (source == nullptr) return json_error(res, 404, "unknown source '" + name + "'");
    if (!req.has_param("mode")) return json_error(res, 400, "missing mode (modes: " + fault_mode_list() + ")");
    auto mode = parse_fault_mode(req.get_param_value("mode"));
    if (!mode) {
        return json_error(res, 400,
                          "unknown mode '" + req.get_param_value("mode") + "' (modes: " + fault_mode_list() + ")");
    }
    FaultMode previous = source->set_fault(*mode);
    std::string out = "{\"source\":" + source->identity().name_json + ",\"mode\":\"" +
                      std::string(fault_mode_name(*mode)) + "\",\"previous\":\"" +
                      std::string(fault_mode_name(previous)) + "\"}";
    res.status = 200;
    res.set_content(out, kJson);
}

void revoke_tokens(ServerContext& ctx, httplib::Response& res) {
    if (ctx.oauth == nullptr) return json_error(res, 404, "OAuth2 is off (no --oauth-client)");
    ctx.oauth->revoke_all();
    res.status = 200;
    res.set_content("{\"revoked\":true}", kJson);
}

}  // namespace

void install_routes(httplib::Server& server, ServerContext& ctx) {
    // Responses go out as they are built (no gzip even if the client offers it): the
    // hostile bodies and their Content-Length must reach the client exactly.
    server.set_pre_routing_handler([&ctx](const httplib::Request& req, httplib::Response& res) {
        stamp_request_arrival();  // first thing for every request
        // httplib picks the encoding from the request later; the Request object is ours to edit.
        const_cast<httplib::Request&>(req).headers.erase("Accept-Encoding");
        // httplib answers 400 to a POST without Content-Length (`curl -X POST`) before routing;
        // a body-less POST /_fault/NAME is handled here, before it reads any body.
        // The same holds for POST /_oauth/revoke.
        static const std::regex kFaultPath(R"(/_fault/([^/]+))");
        std::smatch m;
        const bool bodyless_post =
            req.method == "POST" && !req.has_header("Content-Length") && !req.has_header("Transfer-Encoding");
        if (bodyless_post && std::regex_match(req.path, m, kFaultPath)) {
            set_fault(ctx, m[1].str(), req, res);
            return httplib::Server::HandlerResponse::Handled;
        }
        if (bodyless_post && req.path == "/_oauth/revoke") {
            revoke_tokens(ctx, res);
            return httplib::Server::HandlerResponse::Handled;
        }
        return httplib::Server::HandlerResponse::Unhandled;
    });
    server.Get(R"(/sources/([^/]+)/events)",
               [&ctx](const httplib::Request& req, httplib::Response& res) { serve_events(ctx, req, res); });
    install_style_routes(server, ctx);
    install_fixture_routes(server, ctx);
    server.Post("/oauth/token", [&ctx](const httplib::Request& req, httplib::Response& res) {
        if (ctx.oauth == nullptr) return json_error(res, 404, "OAuth2 is off (no --oauth-client)");
        ctx.oauth->serve_token(req, res);
    });
    server.Post("/_oauth/revoke", [&ctx](const httplib::Request&, httplib::Response& res) { revoke_tokens(ctx, res); });
    server.Get(R"(/_truth/([^/]+))",
               [&ctx](const httplib::Request& req, httplib::Response& res) { serve_truth(ctx, req, res); });
    server.Get("/_requests",
               [&ctx](const httplib::Request& req, httplib::Response& res) { serve_requests(ctx, req, res); });
    server.Get("/_stats", [&ctx](const httplib::Request&, httplib::Response& res) { serve_stats(ctx, res); });
    server.Post(R"(/_fault/([^/]+))", [&ctx](const httplib::Request& req, httplib::Response& res) {
        set_fault(ctx, req.matches[1].str(), req, res);
    });
    server.set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr ep) {
        const std::string what = tools::exception_text(ep);
        json_error(res, 500, what);
    });
}

}  // namespace tributary::source_server
