#include "control_api.h"

#include <charconv>
#include <chrono>
#include <cstdint>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include "common/exception_text.h"
#include "proxy.h"

namespace tributary::fault_proxy {
namespace {

constexpr std::int64_t kMaxCommitCuts = 1000000000;
constexpr std::int64_t kMaxDelayMs = 600000;  // 10 minutes

void reply(httplib::Response& res, int status, const nlohmann::json& body) {
    res.status = status;
    res.set_content(body.dump() + "\n", "application/json");
}

void bad_request(httplib::Response& res, const std::string& message) { reply(res, 400, {{"error", message}}); }

std::optional<std::int64_t> int_param(const httplib::Request& req, const char* name, std::int64_t lo, std::int64_t hi) {
    if (!req.has_param(name)) return std::nullopt;
    const std::string text = req.get_param_value(name);
    std::int64_t value = 0;
    auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (text.empty() || ec != std::errc() || ptr != text.data() + text.size() || value < lo || value > hi) {
        return std::nullopt;
    }
    return value;
}

std::optional<bool> switch_param(const httplib::Request& req) {
    if (!req.has_param("on")) return std::nullopt;
    const std::string text = req.get_param_value("on");
    if (text == "1" || text == "true" || text == "on") return true;
    if (text == "0" || text == "false" || text == "off") return false;
    return std::nullopt;
}

// Runs `task` on the loop thread and answers with what it returns.
template <typename Task>
void on_loop(Proxy& proxy, httplib::Response& res, Task task) {
    nlohmann::json body;
    if (!proxy.mailbox().call([&] { body = task(); })) {
        reply(res, 503, {{"error", "the proxy is stopping"}});
        return;
    }
    reply(res, 200, body);
}

}  // namespace

void install_control_routes(httplib::Server& server, Proxy& proxy) {
    using Handler = std::function<void(const httplib::Request&, httplib::Response&)>;
    // Every POST route, also reachable without a body: httplib answers 400 to a POST that has no
    // Content-Length (`curl -X POST URL`) before routing, so those are dispatched before that.
    auto posts = std::make_shared<std::map<std::string, Handler>>();
    auto post = [&server, posts](const std::string& path, Handler handler) {
        (*posts)[path] = handler;
        server.Post(path, std::move(handler));
    };
    server.set_pre_routing_handler([posts](const httplib::Request& req, httplib::Response& res) {
        if (req.method != "POST" || req.has_header("Content-Length") || req.has_header("Transfer-Encoding")) {
            return httplib::Server::HandlerResponse::Unhandled;
        }
        auto route = posts->find(req.path);
        if (route == posts->end()) {
            reply(res, 404, {{"error", "no such route: POST " + req.path}});
        } else {
            route->second(req, res);
        }
        return httplib::Server::HandlerResponse::Handled;
    });
    server.set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr ep) {
        const std::string what = tools::exception_text(ep);
        reply(res, 500, {{"error", what}});
    });

    post("/cut", [&proxy](const httplib::Request&, httplib::Response& res) {
        on_loop(proxy, res, [&] { return nlohmann::json{{"closed", proxy.cut_all()}}; });
    });

    post("/cut-after-commit", [&proxy](const httplib::Request& req, httplib::Response& res) {
        auto count = int_param(req, "count", 0, kMaxCommitCuts);
        if (!count) return bad_request(res, "count must be an integer from 0 to " + std::to_string(kMaxCommitCuts));
        const std::string statement = req.has_param("statement") ? req.get_param_value("statement") : "";
        if (statement.size() > 63) return bad_request(res, "statement must be at most 63 bytes (a prepared name)");
        on_loop(proxy, res, [&] {
            proxy.cut_after_commits(*count, statement);
            return nlohmann::json{{"pending", *count}, {"statement", statement}};
        });
    });

    post("/delay", [&proxy](const httplib::Request& req, httplib::Response& res) {
        auto ms = int_param(req, "ms", 0, kMaxDelayMs);
        if (!ms) return bad_request(res, "ms must be an integer from 0 to " + std::to_string(kMaxDelayMs));
        on_loop(proxy, res, [&] {
            auto previous = proxy.set_delay(std::chrono::milliseconds(*ms));
            return nlohmann::json{{"delay_ms", *ms}, {"previous_ms", previous.count()}};
        });
    });

    post("/blackhole", [&proxy](const httplib::Request& req, httplib::Response& res) {
        auto on = switch_param(req);
        if (!on) return bad_request(res, "on must be 1 or 0");
        on_loop(proxy, res, [&] {
            std::size_t count = proxy.set_blackhole(*on);
            // on: connections that were open and now swallow; off: connections reset.
            return nlohmann::json{{"blackhole", *on}, {*on ? "swallowing" : "closed", count}};
        });
    });

    post("/refuse", [&proxy](const httplib::Request& req, httplib::Response& res) {
        auto on = switch_param(req);
        if (!on) return bad_request(res, "on must be 1 or 0");
        on_loop(proxy, res, [&] {
            proxy.set_refuse(*on);
            return nlohmann::json{{"refuse", *on}};
        });
    });

    post("/heal", [&proxy](const httplib::Request&, httplib::Response& res) {
        on_loop(proxy, res, [&] { return nlohmann::json{{"closed", proxy.heal()}}; });
    });

    server.Get("/stats", [&proxy](const httplib::Request&, httplib::Response& res) {
        on_loop(proxy, res, [&] {
            ProxyStats s = proxy.stats();
            return nlohmann::json{{"connections_total", s.connections_total},
                                  {"connections_open", s.connections_open},
                                  {"cuts", s.cuts},
                                  {"commit_cuts", s.commit_cuts},
                                  {"commits_seen", s.commits_seen},
                                  {"bytes_up", s.bytes_up},
                                  {"bytes_down", s.bytes_down},
                                  {"bytes_swallowed", s.bytes_swallowed},
                                  {"refused", s.refused},
                                  {"delay_ms", s.delay_ms},
                                  {"blackhole", s.blackhole},
                                  {"refuse", s.refuse},
                                  {"commit_cuts_pending", s.commit_cuts_pending}};
        });
    });
}

}  // namespace tributary::fault_proxy
