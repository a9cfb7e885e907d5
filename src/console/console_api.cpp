#include "console_api.h"

#include <algorithm>
#include <cctype>
#include <set>
#include <stdexcept>

#include <spdlog/spdlog.h>
#include <nlohmann/json.hpp>

#include "core/errors.h"
#include "core/names.h"
#include "embedded_assets.h"
#include "request_queries.h"
#include "same_origin.h"

namespace tributary::console {

namespace {

constexpr const char* kJson = "application/json";
constexpr const char* kReadOnly = "the console is read-only: start it with --token-env or --token-file";

/// Every route of the API; `name` is the source's or group's, `action` the
/// last segment of an action's path.
enum class Route {
    none,
    asset,
    session,
    overview,
    sources,
    source,
    source_action,
    groups,
    group,
    group_action,
    tail,
    metrics
};

struct Match {
    Route route = Route::none;
    std::string name;
    std::string action;
};

std::vector<std::string> split_path(const std::string& path) {
    std::vector<std::string> segments;
    std::size_t start = 1;  // after the leading '/'
    while (start <= path.size()) {
        const auto slash = path.find('/', start);
        const auto end = slash == std::string::npos ? path.size() : slash;
        segments.push_back(path.substr(start, end - start));
        start = end + 1;
    }
    return segments;
}

Match match(const std::string& path) {
    if (path == "/metrics") return {Route::metrics, "", ""};
    if (path.rfind("/api/", 0) != 0) return find_asset(path) ? Match{Route::asset, "", ""} : Match{};
    const auto s = split_path(path);  // s[0] == "api"
    const auto named = [&](Route route, const std::string& name, const std::string& action = "") {
        return is_valid_name(name) ? Match{route, name, action} : Match{};
    };
    if (s.size() == 2) {
        if (s[1] == "session") return {Route::session, "", ""};
        if (s[1] == "overview") return {Route::overview, "", ""};
        if (s[1] == "sources") return {Route::sources, "", ""};
        if (s[1] == "groups") return {Route::groups, "", ""};
        if (s[1] == "tail") return {Route::tail, "", ""};
    } else if (s.size() == 3) {
        if (s[1] == "sources") return named(Route::source, s[2]);
        if (s[1] == "groups") return named(Route::group, s[2]);
    } else if (s.size() == 4) {
        if (s[1] == "sources" && (s[3] == "pause" || s[3] == "resume" || s[3] == "nudge"))
            return named(Route::source_action, s[2], s[3]);
        if (s[1] == "groups" && (s[3] == "replay" || s[3] == "reset")) return named(Route::group_action, s[2], s[3]);
    }
    return {};
}

std::string allowed_methods(Route route) {
    switch (route) {
        case Route::session: return "GET, HEAD, POST";
        case Route::source_action:
        case Route::group_action: return "POST";
        default: return "GET, HEAD";
    }
}

/// Whether `method` (HEAD counted as GET) is one of the route's.
bool allows(Route route, const std::string& method) {
    if (method == "POST")
        return route == Route::session || route == Route::source_action || route == Route::group_action;
    return method == "GET" && route != Route::source_action && route != Route::group_action;
}

ConsoleResponse json_response(int status, std::string body) {
    ConsoleResponse response;
    response.status = status;
    response.content_type = kJson;
    response.body = std::move(body);
    return response;
}

ConsoleResponse error_response(int status, const std::string& error) {
    return json_response(status, nlohmann::json{{"error", error}}.dump());
}

/// Runs a read or an action, mapping what it throws to its status.
template <class F>
ConsoleResponse answered(const std::string& what, F&& f) {
    try {
        return f();
    } catch (const std::invalid_argument& e) {
        return error_response(400, e.what());
    } catch (const NotFound& e) {
        return error_response(404, e.what());
    } catch (const ActionRefused& e) {
        return error_response(409, e.what());
    } catch (const DatabaseUnavailable& e) {
        spdlog::warn("console: {}: database unavailable: {}", what, e.what());
        return error_response(503, std::string("database unavailable: ") + e.what());
    } catch (const std::exception& e) {
        // The message may hold internals (SQL, addresses): the log has it.
        spdlog::error("console: {} failed: {}", what, e.what());
        return error_response(500, "internal error: see the console's log");
    }
}

/// An action's body: a JSON object with only `allowed` members (an empty
/// body is `{}`).
nlohmann::json object_body(const std::string& body, const std::set<std::string>& allowed) {
    if (body.find_first_not_of(" \t\r\n") == std::string::npos) return nlohmann::json::object();
    nlohmann::json parsed = nlohmann::json::parse(body, nullptr, false);
    if (parsed.is_discarded() || !parsed.is_object()) throw std::invalid_argument("the body must be a JSON object");
    for (const auto& item : parsed.items())
        if (!allowed.count(item.key())) throw std::invalid_argument("unknown member '" + item.key() + "' in the body");
    return parsed;
}

std::string string_member(const nlohmann::json& body, const std::string& name) {
    const auto it = body.find(name);
    if (it == body.end() || !it->is_string() || it->get<std::string>().empty())
        throw std::invalid_argument("the body needs '" + name + "', a string");
    return it->get<std::string>();
}

bool is_json_content_type(const std::optional<std::string>& content_type) {
    if (!content_type) return false;
    std::string type = content_type->substr(0, content_type->find(';'));
    type.erase(std::remove_if(type.begin(), type.end(), [](unsigned char c) { return std::isspace(c); }), type.end());
    std::transform(type.begin(), type.end(), type.begin(), [](unsigned char c) { return std::tolower(c); });
    return type == "application/json";
}

std::string action_name(const Match& m, const nlohmann::json& body) {
    if (m.action == "replay")
        return "replay " + m.name + (body.contains("seq") ? " seq " + body["seq"].dump() : std::string(" all"));
    if (m.action == "reset") return "reset " + m.name + " to " + body.value("to", std::string("?"));
    return m.action + " " + m.name;
}

}  // namespace

std::optional<std::string> ConsoleRequest::header(const std::string& lower_case_name) const {
    const auto it = headers.find(lower_case_name);
    if (it == headers.end()) return std::nullopt;
    return it->second;
}

std::vector<std::pair<std::string, std::string>> security_headers(const std::string& path) {
    std::vector<std::pair<std::string, std::string>> headers = {
        {"Content-Security-Policy",
         "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
         "base-uri 'none'; form-action 'self'; frame-ancestors 'none'"},
        {"X-Content-Type-Options", "nosniff"},
        {"Referrer-Policy", "no-referrer"},
    };
    // The pages are small and change with the binary: revalidated each time.
    headers.emplace_back("Cache-Control", path.rfind("/api/", 0) == 0 ? "no-store" : "no-cache");
    return headers;
}

ConsoleApi::ConsoleApi(ConsoleStore& store, std::optional<AdminToken> token, Options options, TailService* tail,
                       ConsoleMetrics* metrics)
    : store_(store), token_(std::move(token)), options_(std::move(options)), tail_(tail), metrics_(metrics) {}

ConsoleResponse ConsoleApi::handle(const ConsoleRequest& request) const {
    const auto m = match(request.path);
    ConsoleResponse response;
    const std::string method = request.method == "HEAD" ? "GET" : request.method;
    if (options_.loopback_only && !is_loopback_host_header(request.header("host"))) {
        spdlog::warn("console: refused {} {} by {}: Host is not the loopback", request.method, request.path,
                     request.peer);
        response = error_response(403, "the console listens on the loopback: use http://127.0.0.1 or localhost");
    } else if (m.route == Route::none) {
        response = error_response(404, "no such page or API route");
    } else if (!allows(m.route, method)) {
        response = error_response(405, "method " + request.method + " not allowed here");
        response.headers.emplace_back("Allow", allowed_methods(m.route));
    } else if (method == "GET") {
        response = route_get(request);
    } else {
        response = route_post(request);
    }
    for (auto& header : security_headers(request.path)) response.headers.push_back(std::move(header));
    return response;
}

ConsoleResponse ConsoleApi::route_get(const ConsoleRequest& request) const {
    const auto m = match(request.path);
    if (m.route == Route::asset) {
        const auto* asset = find_asset(request.path);
        ConsoleResponse response;
        response.content_type = std::string(asset->content_type);
        response.body = std::string(asset->body);
        return response;
    }
    if (m.route == Route::tail) return tail(request);
    if (m.route == Route::metrics) return metrics(request);
    return answered("GET " + request.path, [&] {
        switch (m.route) {
            case Route::session: no_query(request.query); return session();
            case Route::overview: no_query(request.query); return json_response(200, store_.overview());
            case Route::sources: return json_response(200, store_.sources(source_query(request.query)));
            case Route::source: no_query(request.query); return json_response(200, store_.source(m.name));
            case Route::groups: no_query(request.query); return json_response(200, store_.groups());
            case Route::group: return json_response(200, store_.group(m.name, dead_letter_query(request.query)));
            default: return error_response(404, "no such page or API route");
        }
    });
}

ConsoleResponse ConsoleApi::session() const {
    const nlohmann::json body = {
        {"read_only", read_only()}, {"version", options_.version}, {"database", options_.database}};
    return json_response(200, body.dump());
}

std::optional<ConsoleResponse> ConsoleApi::refusal(const ConsoleRequest& request, const std::string& what) const {
    const auto refused = [&](int status, const std::string& error) {
        spdlog::warn("console: refused {} by {}: {}", what, request.peer, error);
        return error_response(status, error);
    };
    if (!token_) return refused(403, kReadOnly);
    // Where a request comes from and what it carries before its token: a page on another site, or a
    // form (text/plain needs no preflight), learns nothing about the token from 401 against 403.
    if (!is_same_origin(request.header("origin"), request.header("host"), request.header("sec-fetch-site")))
        return refused(403, "cross-origin request refused: an action needs an Origin equal to its Host");
    if (!is_json_content_type(request.header("content-type")))
        return refused(403, "an action's Content-Type must be application/json");
    const auto authorization = request.header("authorization");
    const auto presented = authorization ? bearer_token(*authorization) : std::nullopt;
    if (!presented || !token_->matches(*presented)) {
        auto response = refused(401, "a valid admin token is needed: Authorization: Bearer <token>");
        response.headers.emplace_back("WWW-Authenticate", "Bearer");
        return response;
    }
    return std::nullopt;
}

ConsoleResponse ConsoleApi::route_post(const ConsoleRequest& request) const {
    const auto m = match(request.path);
    const std::string what = m.route == Route::session ? "token check" : m.action + " " + m.name;
    if (auto refused = refusal(request, what)) return std::move(*refused);
    if (!request.query.empty()) return error_response(400, "an action takes no query parameters");
    std::string done_what = what;
    auto response = answered(what, [&] {
        if (m.route == Route::session) {
            object_body(request.body, {});
            return json_response(200, R"({"ok":true})");
        }
        if (m.route == Route::source_action) {
            object_body(request.body, {});
            if (m.action == "pause") return json_response(200, store_.pause(m.name));
            if (m.action == "resume") return json_response(200, store_.resume(m.name));
            return json_response(200, store_.nudge(m.name));
        }
        if (m.action == "replay") {
            const auto body = object_body(request.body, {"seq"});
            done_what = action_name(m, body);
            std::optional<std::int64_t> seq;
            if (body.contains("seq")) {
                if (!body["seq"].is_number_integer()) throw std::invalid_argument("'seq' must be an integer");
                seq = body["seq"].get<std::int64_t>();
            }
            return json_response(200, store_.replay(m.name, seq));
        }
        const auto body = object_body(request.body, {"to", "confirm"});
        const auto to = string_member(body, "to");
        done_what = action_name(m, body);
        const auto confirm = body.find("confirm");
        if (confirm == body.end() || !confirm->is_string() || confirm->get<std::string>() != m.name)
            throw std::invalid_argument("'confirm' must be the group's name, " + m.name);
        return json_response(200, store_.reset(m.name, to));
    });
    if (response.status == 200) spdlog::info("console: {} by {}", done_what, request.peer);
    else spdlog::warn("console: {} by {} failed: {} {}", done_what, request.peer, response.status, response.body);
    return response;
}

ConsoleResponse ConsoleApi::tail(const ConsoleRequest& request) const {
    return answered("GET /api/tail", [&] {
        const auto [pattern, from] = tail_query(request.query);
        if (!tail_) return error_response(503, "the live tail is not available");
        auto slot = tail_->slots.try_take();
        if (!slot) return error_response(503, "too many live tails open: close one and try again");
        auto feed = tail_->feeds.open();
        const auto last_event_id = request.header("last-event-id");
        const std::string position =
            last_event_id && !last_event_id->empty() ? feed->after_event(*last_event_id) : feed->position(from);
        // The first read checks the pattern: a bad one is a 400 before the
        // stream starts.
        auto first = feed->read(pattern, position, tail_->timing.batch);
        ConsoleResponse response;
        response.content_type = "text/event-stream";
        response.headers.emplace_back("X-Accel-Buffering", "no");  // proxies pass events on at once
        response.stream =
            std::make_shared<TailStream>(std::move(feed), std::move(*slot), pattern, position, std::move(first),
                                         tail_->wakeup, tail_->stop, tail_->timing, request.peer);
        return response;
    });
}

ConsoleResponse ConsoleApi::metrics(const ConsoleRequest& request) const {
    return answered("GET /metrics", [&] {
        no_query(request.query);
        if (!metrics_) return error_response(503, "the metrics are not available");
        ConsoleResponse response;
        // No token: like the pages, and like the other processes' /metrics
        // (Prometheus scrapes without one). The figures are counts per group.
        response.content_type = "text/plain; version=0.0.4; charset=utf-8";
        response.body = metrics_->scrape();
        return response;
    });
}

}  // namespace tributary::console
