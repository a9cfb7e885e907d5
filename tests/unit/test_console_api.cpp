#include <catch2/catch.hpp>

#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "console/admin_token.h"
#include "console/console_api.h"
#include "console/same_origin.h"
#include "core/errors.h"

using namespace tributary;
using namespace tributary::console;
using nlohmann::json;

namespace {

const std::string kToken = "s3cret-token";

/// Records every call as one line, answers a canned document, and throws
/// what `fail` says instead when set.
class FakeConsoleStore : public ConsoleStore {
public:
    std::vector<std::string> calls;
    std::function<void()> fail;
    SourceQuery last_source_query;
    DeadLetterQuery last_dead_letter_query;

    std::string overview() override { return answer("overview", R"({"now":null})"); }
    std::string sources(const SourceQuery& query) override {
        last_source_query = query;
        return answer("sources " + query.pattern, R"({"sources":[]})");
    }
    std::string source(const std::string& name) override { return answer("source " + name, R"({"name":"s"})"); }
    std::string groups() override { return answer("groups", R"({"groups":[]})"); }
    std::string group(const std::string& name, const DeadLetterQuery& query) override {
        last_dead_letter_query = query;
        return answer("group " + name, R"({"name":"g"})");
    }
    std::string pause(const std::string& s) override { return answer("pause " + s, R"({"ok":true})"); }
    std::string resume(const std::string& s) override { return answer("resume " + s, R"({"ok":true})"); }
    std::string nudge(const std::string& s) override { return answer("nudge " + s, R"({"ok":true})"); }
    std::string replay(const std::string& g, std::optional<std::int64_t> seq) override {
        return answer("replay " + g + (seq ? " " + std::to_string(*seq) : std::string(" all")), R"({"ok":true})");
    }
    std::string reset(const std::string& g, const std::string& to) override {
        return answer("reset " + g + " " + to, R"({"ok":true})");
    }

private:
    std::string answer(const std::string& call, const std::string& document) {
        calls.push_back(call);
        if (fail) fail();
        return document;
    }
};

ConsoleRequest get(const std::string& path, std::multimap<std::string, std::string> query = {}) {
    ConsoleRequest request;
    request.method = "GET";
    request.path = path;
    request.query = std::move(query);
    request.headers["host"] = "127.0.0.1:8080";
    request.peer = "127.0.0.1";
    return request;
}

/// An action as the console's own page sends it.
ConsoleRequest post(const std::string& path, const std::string& body = "{}") {
    ConsoleRequest request;
    request.method = "POST";
    request.path = path;
    request.body = body;
    request.headers["host"] = "127.0.0.1:8080";
    request.headers["origin"] = "http://127.0.0.1:8080";
    request.headers["content-type"] = "application/json";
    request.headers["authorization"] = "Bearer " + kToken;
    request.peer = "127.0.0.1";
    return request;
}

std::string error_of(const ConsoleResponse& response) { return json::parse(response.body).at("error"); }

std::optional<std::string> header_of(const ConsoleResponse& response, const std::string& name) {
    for (const auto& [n, v] : response.headers)
        if (n == name) return v;
    return std::nullopt;
}

struct Rig {
    FakeConsoleStore store;
    ConsoleApi api{store, AdminToken(kToken), {"0.17.0 (test)", "db:5432/tributary"}};
    ConsoleApi read_only{store, std::nullopt, {"0.17.0 (test)", "db:5432/tributary"}};
};

}  // namespace

TEST_CASE("console api: every read route asks the store once and serves its document", "[console]") {
    Rig rig;
    const std::vector<std::pair<std::string, std::string>> reads = {{"/api/overview", "overview"},
                                                                    {"/api/sources", "sources >"},
                                                                    {"/api/sources/orders.eu", "source orders.eu"},
                                                                    {"/api/groups", "groups"},
                                                                    {"/api/groups/billing", "group billing"}};
    for (const auto& [path, call] : reads) {
        rig.store.calls.clear();
        const auto response = rig.api.handle(get(path));
        INFO(path);
        CHECK(response.status == 200);
        CHECK(response.content_type == "application/json");
        CHECK(json::parse(response.body).is_object());
        CHECK(rig.store.calls == std::vector<std::string>{call});
    }
}

TEST_CASE("console api: the session says whether the console is read-only, and which database", "[console]") {
    Rig rig;
    const auto body = json::parse(rig.api.handle(get("/api/session")).body);
    CHECK(body == json{{"read_only", false}, {"version", "0.17.0 (test)"}, {"database", "db:5432/tributary"}});
    CHECK(json::parse(rig.read_only.handle(get("/api/session")).body).at("read_only") == true);
}

TEST_CASE("console api: the sources query is parsed and checked", "[console]") {
    Rig rig;
    auto response = rig.api.handle(get("/api/sources", {{"pattern", "orders.>"},
                                                        {"state", "failing"},
                                                        {"sort", "last_success"},
                                                        {"order", "desc"},
                                                        {"limit", "500"},
                                                        {"offset", "20"}}));
    CHECK(response.status == 200);
    const auto& q = rig.store.last_source_query;
    CHECK(q.pattern == "orders.>");
    CHECK(q.state == "failing");
    CHECK(q.sort == "last_success");
    CHECK(q.descending);
    CHECK(q.limit == 500);
    CHECK(q.offset == 20);

    // Empty values are the defaults (an empty filter box).
    CHECK(rig.api.handle(get("/api/sources", {{"pattern", ""}, {"state", ""}})).status == 200);
    CHECK(rig.store.last_source_query.pattern == ">");
    CHECK(rig.store.last_source_query.state.empty());

    rig.store.calls.clear();
    const std::vector<std::multimap<std::string, std::string>> bad = {
        {{"limit", "0"}},      {{"limit", "501"}},  {{"limit", "ten"}},         {{"limit", "-1"}},
        {{"offset", "-5"}},    {{"offset", "1e3"}}, {{"sort", "size"}},         {{"order", "up"}},
        {{"state", "broken"}}, {{"colour", "red"}}, {{"limit", "99999999999"}}, {{"limit", "5"}, {"limit", "6"}}};
    for (const auto& query : bad) {
        const auto refused = rig.api.handle(get("/api/sources", query));
        INFO(query.begin()->first << "=" << query.begin()->second);
        CHECK(refused.status == 400);
        CHECK_FALSE(error_of(refused).empty());
    }
    CHECK(rig.store.calls.empty());  // refused before the database is asked
}

TEST_CASE("console api: the dead-letter page's query is checked; reads take no stray parameters", "[console]") {
    Rig rig;
    CHECK(rig.api.handle(get("/api/groups/billing", {{"limit", "10"}, {"offset", "30"}})).status == 200);
    CHECK(rig.store.last_dead_letter_query.limit == 10);
    CHECK(rig.store.last_dead_letter_query.offset == 30);
    CHECK(rig.api.handle(get("/api/groups/billing", {{"limit", "0"}})).status == 400);
    CHECK(rig.api.handle(get("/api/overview", {{"x", "1"}})).status == 400);
    CHECK(rig.api.handle(get("/api/groups", {{"sort", "name"}})).status == 400);
}

TEST_CASE("console api: unknown routes 404, wrong methods 405, names that cannot exist 404", "[console]") {
    Rig rig;
    for (const char* path : {"/api/nope", "/api/sources/a/b", "/api/sources/", "/api/sources/bad name",
                             "/api/groups/x/explode", "/nothing.js", "/api", "/api/sources/a/pause/now"}) {
        INFO(path);
        const auto response = rig.api.handle(get(path));
        CHECK(response.status == 404);
        CHECK_FALSE(error_of(response).empty());
    }
    auto response = rig.api.handle(get("/api/sources/orders.eu/pause"));
    CHECK(response.status == 405);
    CHECK(header_of(response, "Allow") == "POST");
    auto del = get("/api/groups");
    del.method = "DELETE";
    CHECK(rig.api.handle(del).status == 405);
    CHECK(rig.api.handle(post("/api/overview")).status == 405);
    CHECK(rig.store.calls.empty());
}

TEST_CASE("console api: store errors map to their status; unknown ones never leak their text", "[console]") {
    Rig rig;
    const auto with_failure = [&](std::function<void()> fail) {
        rig.store.fail = std::move(fail);
        return rig.api.handle(get("/api/sources/orders.eu"));
    };
    auto r = with_failure([] { throw std::invalid_argument("invalid pattern 'a..b'"); });
    CHECK(r.status == 400);
    CHECK(error_of(r) == "invalid pattern 'a..b'");
    r = with_failure([] { throw NotFound("no source orders.eu"); });
    CHECK(r.status == 404);
    CHECK(error_of(r) == "no source orders.eu");
    r = with_failure([] { throw DatabaseUnavailable("connection refused"); });
    CHECK(r.status == 503);
    CHECK(error_of(r) == "database unavailable: connection refused");
    r = with_failure([] { throw std::runtime_error("ERROR: relation secret_table password=hunter2"); });
    CHECK(r.status == 500);
    CHECK(r.body.find("hunter2") == std::string::npos);
    CHECK(r.body.find("secret_table") == std::string::npos);

    rig.store.fail = [] { throw ActionRefused("the group changed: try again"); };
    r = rig.api.handle(post("/api/groups/billing/reset", R"({"to":"end","confirm":"billing"})"));
    CHECK(r.status == 409);
    CHECK(error_of(r) == "the group changed: try again");
}

TEST_CASE("console api: every response carries the security headers; /api/ is never cached", "[console]") {
    Rig rig;
    rig.store.fail = [] { throw DatabaseUnavailable("down"); };
    const std::string csp =
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
        "base-uri 'none'; form-action 'self'; frame-ancestors 'none'";
    for (const auto& response : {rig.api.handle(get("/")), rig.api.handle(get("/api/overview")),
                                 rig.api.handle(get("/api/nope")), rig.read_only.handle(post("/api/session"))}) {
        CHECK(header_of(response, "Content-Security-Policy") == csp);
        CHECK(header_of(response, "X-Content-Type-Options") == "nosniff");
        CHECK(header_of(response, "Referrer-Policy") == "no-referrer");
    }
    CHECK(header_of(rig.api.handle(get("/api/overview")), "Cache-Control") == "no-store");
}

TEST_CASE("console api: the pages are served with their content types", "[console]") {
    Rig rig;
    const std::map<std::string, std::string> types = {{"/", "text/html; charset=utf-8"},
                                                      {"/app.js", "text/javascript; charset=utf-8"},
                                                      {"/app.css", "text/css; charset=utf-8"},
                                                      {"/favicon.svg", "image/svg+xml"}};
    for (const auto& [path, type] : types) {
        INFO(path);
        auto response = rig.api.handle(get(path));
        CHECK(response.status == 200);
        CHECK(response.content_type == type);
        CHECK_FALSE(response.body.empty());
        auto head = get(path);
        head.method = "HEAD";
        CHECK(rig.api.handle(head).status == 200);
    }
    CHECK(rig.api.handle(get("/")).body == rig.api.handle(get("/index.html")).body);
}

TEST_CASE("console api: read-only refuses every action 403 and asks the store nothing", "[console]") {
    Rig rig;
    for (const char* path : {"/api/session", "/api/sources/a/pause", "/api/sources/a/resume", "/api/sources/a/nudge",
                             "/api/groups/g/replay", "/api/groups/g/reset"}) {
        const auto response = rig.read_only.handle(post(path, R"({"to":"end","confirm":"g"})"));
        INFO(path);
        CHECK(response.status == 403);
        CHECK(error_of(response) == "the console is read-only: start it with --token-env or --token-file");
    }
    CHECK(rig.store.calls.empty());
}

TEST_CASE("console api: an action needs the token: missing or wrong 401, right goes through", "[console]") {
    Rig rig;
    auto request = post("/api/sources/orders.eu/pause");
    for (const std::optional<std::string>& authorization :
         {std::optional<std::string>{}, std::optional<std::string>{"Bearer wrong"},
          std::optional<std::string>{"Bearer " + kToken + "x"}, std::optional<std::string>{"Basic " + kToken},
          std::optional<std::string>{kToken}, std::optional<std::string>{"Bearer "}}) {
        if (authorization) request.headers["authorization"] = *authorization;
        else request.headers.erase("authorization");
        const auto response = rig.api.handle(request);
        INFO(authorization.value_or("(none)"));
        CHECK(response.status == 401);
        CHECK(header_of(response, "WWW-Authenticate") == "Bearer");
        CHECK(response.body.find(kToken) == std::string::npos);
    }
    CHECK(rig.store.calls.empty());
    request.headers["authorization"] = "bearer " + kToken;  // the scheme in any case
    CHECK(rig.api.handle(request).status == 200);
    CHECK(rig.store.calls == std::vector<std::string>{"pause orders.eu"});
    // POST /api/session checks a token and does nothing else.
    CHECK(rig.api.handle(post("/api/session")).body == R"({"ok":true})");
}

TEST_CASE("console api: a cross-origin action is refused 403 even with the token", "[console]") {
    Rig rig;
    const std::vector<std::map<std::string, std::string>> foreign = {
        {{"origin", "http://evil.example"}},
        {{"origin", "http://127.0.0.1:9999"}},
        {{"origin", "null"}},
        {},  // no Origin at all
        {{"origin", "http://127.0.0.1:8080"}, {"sec-fetch-site", "cross-site"}},
        {{"sec-fetch-site", "same-site"}}};
    for (const auto& headers : foreign) {
        auto request = post("/api/sources/orders.eu/pause");
        request.headers.erase("origin");
        for (const auto& [name, value] : headers) request.headers[name] = value;
        CHECK(rig.api.handle(request).status == 403);
    }
    auto same = post("/api/sources/orders.eu/pause");
    same.headers.erase("origin");
    same.headers["sec-fetch-site"] = "same-origin";
    CHECK(rig.api.handle(same).status == 200);
    CHECK(rig.store.calls.size() == 1);
}

TEST_CASE("console api: an action needs a JSON content type and a JSON object body", "[console]") {
    Rig rig;
    auto request = post("/api/sources/orders.eu/pause");
    request.headers["content-type"] = "text/plain";
    CHECK(rig.api.handle(request).status == 403);
    request.headers["content-type"] = "application/json; charset=utf-8";
    CHECK(rig.api.handle(request).status == 200);
    CHECK(rig.api.handle(post("/api/sources/a/pause", "[1]")).status == 400);
    CHECK(rig.api.handle(post("/api/sources/a/pause", "{")).status == 400);
    CHECK(rig.api.handle(post("/api/sources/a/pause", R"({"force":true})")).status == 400);
    CHECK(rig.api.handle(post("/api/sources/a/resume", "")).status == 200);  // no body is {}
}

TEST_CASE("console api: origin and content type are checked before the token", "[console]") {
    // A cross-site form posts text/plain without a preflight: whatever its token, the answer must
    // not tell a wrong token (401) from a right one.
    Rig rig;
    for (const std::string& authorization : std::vector<std::string>{"Bearer wrong", "Bearer " + kToken, ""}) {
        INFO(authorization);
        auto plain = post("/api/sources/orders.eu/pause");
        plain.headers["content-type"] = "text/plain";
        if (authorization.empty()) plain.headers.erase("authorization");
        else plain.headers["authorization"] = authorization;
        const auto refused = rig.api.handle(plain);
        CHECK(refused.status == 403);
        CHECK(refused.body.find("Content-Type") != std::string::npos);
        CHECK_FALSE(header_of(refused, "WWW-Authenticate"));

        auto foreign = plain;
        foreign.headers["content-type"] = "application/json";
        foreign.headers["origin"] = "http://evil.example";
        CHECK(rig.api.handle(foreign).status == 403);
    }
    CHECK(rig.store.calls.empty());
}

TEST_CASE("console api: each action calls its store method", "[console]") {
    Rig rig;
    CHECK(rig.api.handle(post("/api/sources/a/pause")).status == 200);
    CHECK(rig.api.handle(post("/api/sources/a/resume")).status == 200);
    CHECK(rig.api.handle(post("/api/sources/a/nudge")).status == 200);
    CHECK(rig.api.handle(post("/api/groups/g/replay", R"({"seq":17})")).status == 200);
    CHECK(rig.api.handle(post("/api/groups/g/replay", "{}")).status == 200);
    CHECK(rig.api.handle(post("/api/groups/g/reset", R"({"to":"2026-11-24T10:00:00Z","confirm":"g"})")).status == 200);
    CHECK(rig.store.calls == std::vector<std::string>{"pause a", "resume a", "nudge a", "replay g 17", "replay g all",
                                                      "reset g 2026-11-24T10:00:00Z"});
}

TEST_CASE("console api: replay and reset check their bodies; reset needs the group's name typed", "[console]") {
    Rig rig;
    for (const char* body : {R"({"seq":"17"})", R"({"seq":1.5})", R"({"all":true})"})
        CHECK(rig.api.handle(post("/api/groups/g/replay", body)).status == 400);
    for (const char* body : {R"({"to":"end"})", R"({"to":"end","confirm":"G"})", R"({"to":"end","confirm":""})",
                             R"({"confirm":"g"})", R"({"to":5,"confirm":"g"})"}) {
        INFO(body);
        CHECK(rig.api.handle(post("/api/groups/g/reset", body)).status == 400);
    }
    CHECK(rig.store.calls.empty());
}

TEST_CASE("console: same-origin check of Origin against Host", "[console]") {
    using O = std::optional<std::string>;
    CHECK(is_same_origin(O{"http://127.0.0.1:8080"}, O{"127.0.0.1:8080"}, {}));
    CHECK(is_same_origin(O{"http://Console.Example"}, O{"console.example:80"}, {}));
    CHECK(is_same_origin(O{"https://console.example"}, O{"console.example"}, {}));
    CHECK(is_same_origin(O{"http://[::1]:8080"}, O{"[::1]:8080"}, {}));
    CHECK_FALSE(is_same_origin(O{"https://console.example"}, O{"console.example:80"}, {}));
    CHECK_FALSE(is_same_origin(O{"http://127.0.0.1:8080"}, O{"127.0.0.1:8081"}, {}));
    CHECK_FALSE(is_same_origin(O{"http://127.0.0.1:8080/"}, O{"127.0.0.1:8080"}, {}));
    CHECK_FALSE(is_same_origin(O{"http://user@127.0.0.1:8080"}, O{"127.0.0.1:8080"}, {}));
    CHECK_FALSE(is_same_origin(O{"ftp://127.0.0.1:8080"}, O{"127.0.0.1:8080"}, {}));
    CHECK_FALSE(is_same_origin(O{"http://127.0.0.1:8080"}, {}, {}));
    CHECK(is_same_origin({}, {}, O{"same-origin"}));
    CHECK_FALSE(is_same_origin(O{"http://127.0.0.1:8080"}, O{"127.0.0.1:8080"}, O{"none"}));
}

TEST_CASE("console: the admin token", "[console]") {
    const AdminToken token("abc");
    CHECK(token.matches("abc"));
    CHECK_FALSE(token.matches("abd"));
    CHECK_FALSE(token.matches("ab"));
    CHECK_FALSE(token.matches(""));
    CHECK_THROWS_AS(AdminToken(""), std::invalid_argument);
    CHECK(bearer_token("Bearer abc") == std::optional<std::string_view>("abc"));
    CHECK(bearer_token("BEARER  abc ") == std::optional<std::string_view>("abc"));
    CHECK_FALSE(bearer_token("Bearer"));
    CHECK_FALSE(bearer_token("Basic abc"));
    CHECK(without_trailing_newlines("tok\r\n\n") == "tok");
    CHECK(without_trailing_newlines("\n").empty());

    ::setenv("TRIBUTARY_TEST_CONSOLE_TOKEN", "from-env\n", 1);
    CHECK(AdminToken::from_environment("TRIBUTARY_TEST_CONSOLE_TOKEN").matches("from-env"));
    ::setenv("TRIBUTARY_TEST_CONSOLE_TOKEN", "\n", 1);
    CHECK_THROWS_WITH(AdminToken::from_environment("TRIBUTARY_TEST_CONSOLE_TOKEN"),
                      Catch::Contains("TRIBUTARY_TEST_CONSOLE_TOKEN is empty"));
    ::unsetenv("TRIBUTARY_TEST_CONSOLE_TOKEN");
    CHECK_THROWS_WITH(AdminToken::from_environment("TRIBUTARY_TEST_CONSOLE_TOKEN"), Catch::Contains("not set"));
    CHECK_THROWS_WITH(AdminToken::from_file("/nonexistent/token"), Catch::Contains("/nonexistent/token"));
}

TEST_CASE("console: on the loopback, only requests whose Host is the loopback (DNS rebinding)", "[console]") {
    CHECK(is_loopback_host("127.0.0.1"));
    CHECK(is_loopback_host("127.1.2.3"));
    CHECK(is_loopback_host("localhost"));
    CHECK(is_loopback_host("::1"));
    CHECK(is_loopback_host("[::1]"));
    CHECK_FALSE(is_loopback_host("0.0.0.0"));
    CHECK_FALSE(is_loopback_host("127.0.0.1.evil.example"));
    CHECK_FALSE(is_loopback_host("10.0.0.1"));

    FakeConsoleStore store;
    ConsoleApi api(store, AdminToken(kToken), {"v", "db", true});
    auto request = get("/api/overview");
    CHECK(api.handle(request).status == 200);
    for (const char* host : {"localhost:8080", "[::1]:8080", "127.0.0.1"}) {
        request.headers["host"] = host;
        CHECK(api.handle(request).status == 200);
    }
    request.headers["host"] = "evil.example:8080";
    const auto refused = api.handle(request);
    CHECK(refused.status == 403);
    CHECK(header_of(refused, "Content-Security-Policy"));
    auto action = post("/api/sources/a/pause");
    action.headers["host"] = "evil.example:8080";
    action.headers["origin"] = "http://evil.example:8080";
    CHECK(api.handle(action).status == 403);
    CHECK(store.calls == std::vector<std::string>{"overview", "overview", "overview", "overview"});
    // Listening elsewhere (0.0.0.0, a name), any Host is answered.
    ConsoleApi anywhere(store, std::nullopt, {"v", "db", false});
    CHECK(anywhere.handle(request).status == 200);
}
