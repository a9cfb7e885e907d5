// Auth and rate limits through CurlEventFetcher against a real HTTP server
// (cpp-httplib) in this process: credentials from the environment, OAuth2
// tokens shared by two fetchers through PostgreSQL, rate-limit headers.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>

#include <httplib.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include "core/shared_access_token.h"
#include "core/stop_signal.h"
#include "http/curl_event_fetcher.h"
#include "http/oauth2_token_request.h"
#include "postgres/postgres_access_tokens.h"
#include "postgres/postgres_session.h"
#include "postgres/postgres_source_registry.h"
#include "support/test_database.h"

using namespace std::chrono_literals;
using namespace tributary;
using Status = FetchResult::Status;
using tributary::testing::TestDatabase;

namespace {

const std::string kOneEvent = R"({"events":[{"id":1,"payload":{}}]})";
const std::string kClientId = "client-7f3a";
const std::string kClientSecret = "s3cr3t-CLIENT-value";
const std::string kExpectedBasic = "Basic Y2xpZW50LTdmM2E6czNjcjN0LUNMSUVOVC12YWx1ZQ==";  // base64 of id:secret

// Routes first, then start(): httplib's route tables must not change while it listens.
class AuthServer {
public:
    ~AuthServer() {
        if (thread_.joinable()) {
            server_.stop();
            thread_.join();
        }
    }
    httplib::Server& http() { return server_; }
    void start() {
        port_ = server_.bind_to_any_port("127.0.0.1");
        REQUIRE(port_ > 0);
        thread_ = std::thread([this] { server_.listen_after_bind(); });
        while (!server_.is_running()) std::this_thread::sleep_for(1ms);
    }
    std::string url(const std::string& path) const { return "http://127.0.0.1:" + std::to_string(port_) + path; }

private:
    httplib::Server server_;
    int port_ = 0;
    std::thread thread_;
};

/// Every log line of the test, to check that no secret is in one.
class CapturedLog {
public:
    CapturedLog() : previous_(spdlog::default_logger()) {
        auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(lines_);
        auto logger = std::make_shared<spdlog::logger>("captured", sink);
        logger->set_level(spdlog::level::trace);
        spdlog::set_default_logger(logger);
    }
    ~CapturedLog() { spdlog::set_default_logger(previous_); }
    std::string text() const { return lines_.str(); }

private:
    std::shared_ptr<spdlog::logger> previous_;
    std::ostringstream lines_;
};

Source source_at(const std::string& url) {
    Source source;
    source.id = 1;
    source.name = "auth-test";
    source.endpoint.url = url;
    return source;
}

/// The token endpoint and the resource of an OAuth2 API: tokens "token-N",
/// the resource accepts only the newest unless told to reject it.
struct OAuth2Api {
    std::mutex mutex;
    int token_requests = 0;
    std::string newest;
    bool reject_next = false;
    std::string last_form;
    std::string last_authorization;

    void serve(AuthServer& server) {
        server.http().Post("/token", [this](const httplib::Request& req, httplib::Response& res) {
            std::lock_guard<std::mutex> guard(mutex);
            last_form = req.body;
            last_authorization = req.get_header_value("Authorization");
            if (last_authorization != kExpectedBasic) {
                res.status = 401;
                res.set_content(R"({"error":"invalid_client"})", "application/json");
                return;
            }
            newest = "token-" + std::to_string(++token_requests) + "-abcdef";
            res.set_content(R"({"access_token":")" + newest + R"(","token_type":"Bearer","expires_in":3600})",
                            "application/json");
        });
        server.http().Get("/events", [this](const httplib::Request& req, httplib::Response& res) {
            std::lock_guard<std::mutex> guard(mutex);
            if (reject_next || req.get_header_value("Authorization") != "Bearer " + newest) {
                reject_next = false;
                res.status = 401;
                return;
            }
            res.set_content(kOneEvent, "application/json");
        });
    }
};

/// One loader: its session, its share of the token table, its fetcher.
struct Loader {
    Loader(const std::string& db_url, const StopSignal& stop, const std::map<std::string, std::string>& env)
        : session(db_url),
          tokens(session),
          shared(
              tokens,
              [env](const Source& source) {
                  return request_oauth2_token(source, [&env](const char* name) -> const char* {
                      const auto it = env.find(name);
                      return it == env.end() ? nullptr : it->second.c_str();
                  });
              },
              stop),
          fetcher(FetchLimits{}, stop) {
        fetcher.share_access_tokens(shared);
    }
    postgres::PostgresSession session;
    postgres::PostgresAccessTokens tokens;
    SharedAccessToken shared;
    CurlEventFetcher fetcher;
};

int registered_source(const std::string& db_url, const std::string& name, const std::string& url) {
    postgres::PostgresSession session(db_url);
    postgres::PostgresSourceRegistry registry(session);
    postgres::SourceSpec spec;
    spec.name = name;
    spec.url = url;
    return registry.add(spec);
}

}  // namespace

TEST_CASE("OAuth2: two loaders share one token through PostgreSQL; a 401 renews it once", "[oauth2]") {
    AuthServer server;
    OAuth2Api api;
    api.serve(server);
    server.start();
    TestDatabase db;
    CapturedLog log;
    const std::map<std::string, std::string> env{{"CRM_CLIENT_ID", kClientId}, {"CRM_CLIENT_SECRET", kClientSecret}};
    StopSignal stop;
    Loader first(db.url(), stop, env), second(db.url(), stop, env);

    Source source = source_at(server.url("/events"));
    source.id = registered_source(db.url(), "crm", source.endpoint.url);
    source.name = "crm";
    source.endpoint.auth.oauth2 =
        EnvAuth::OAuth2{server.url("/token"), "CRM_CLIENT_ID", "CRM_CLIENT_SECRET", "read:events admin"};

    std::vector<std::string> errors;
    auto fetch = [&](Loader& loader) {
        FetchResult r = loader.fetcher.fetch(source, Cursor::at_id(0), 10);
        errors.push_back(r.error);
        return r.status;
    };
    CHECK(fetch(first) == Status::ok);
    CHECK(fetch(second) == Status::ok);
    CHECK(fetch(first) == Status::ok);
    CHECK(api.token_requests == 1);
    CHECK(api.last_form == "grant_type=client_credentials&scope=read%3Aevents%20admin");

    api.reject_next = true;
    CHECK(fetch(second) == Status::transient);  // 401: the token is rejected for everyone
    CHECK(fetch(first) == Status::ok);
    CHECK(fetch(second) == Status::ok);
    CHECK(api.token_requests == 2);

    const std::string logged = log.text();
    for (const std::string& secret : {kClientSecret, kClientId, std::string("token-1-abcdef"),
                                      std::string("token-2-abcdef"), api.last_authorization.substr(6)}) {
        CAPTURE(secret);
        CHECK(logged.find(secret) == std::string::npos);
        for (const auto& error : errors) CHECK(error.find(secret) == std::string::npos);
    }
    CHECK(logged.find("new OAuth2 access token") != std::string::npos);
}

TEST_CASE("OAuth2: a token endpoint that refuses the client fails the source without a secret", "[oauth2]") {
    AuthServer server;
    OAuth2Api api;
    api.serve(server);
    server.start();
    TestDatabase db;
    StopSignal stop;
    Loader loader(db.url(), stop, {{"ID", kClientId}, {"SECRET", "wrong-secret-value"}});
    Source source = source_at(server.url("/events"));
    source.id = registered_source(db.url(), "crm", source.endpoint.url);
    source.endpoint.auth.oauth2 = EnvAuth::OAuth2{server.url("/token?tenant=t1"), "ID", "SECRET", ""};

    const FetchResult r = loader.fetcher.fetch(source, Cursor::at_id(0), 10);
    CHECK(r.status == Status::failing);
    CHECK_THAT(r.error, Catch::Contains("HTTP 401 (invalid_client)"));
    CHECK_THAT(r.error, Catch::Contains("/token"));
    CHECK(r.error.find("wrong-secret-value") == std::string::npos);
    CHECK(r.error.find("tenant") == std::string::npos);
    CHECK(api.last_form == "grant_type=client_credentials");

    Loader unset(db.url(), stop, {{"ID", kClientId}});
    const FetchResult missing = unset.fetcher.fetch(source, Cursor::at_id(0), 10);
    CHECK(missing.status == Status::failing);
    CHECK(missing.error == "environment variable SECRET (--client-secret-env) is not set in the loader's environment");
}

TEST_CASE("credentials from the environment go into headers and the query", "[auth]") {
    AuthServer server;
    std::mutex mutex;
    httplib::Request seen;
    server.http().Get("/events", [&](const httplib::Request& req, httplib::Response& res) {
        std::lock_guard<std::mutex> guard(mutex);
        seen = req;
        res.set_content(kOneEvent, "application/json");
    });
    server.start();
    ::setenv("TRIBUTARY_TEST_BEARER", "bearer-value-1", 1);
    ::setenv("TRIBUTARY_TEST_KEY", "key value&2", 1);
    StopSignal stop;
    CurlEventFetcher fetcher(FetchLimits{}, stop);
    Source source = source_at(server.url("/events"));
    source.endpoint.auth.bearer = "TRIBUTARY_TEST_BEARER";
    source.endpoint.auth.headers = {{"X-Api-Key", "TRIBUTARY_TEST_KEY"}};
    source.endpoint.auth.query = {{"api_key", "TRIBUTARY_TEST_KEY"}};

    REQUIRE(fetcher.fetch(source, Cursor::at_id(0), 10).status == Status::ok);
    {
        std::lock_guard<std::mutex> guard(mutex);
        CHECK(seen.get_header_value("Authorization") == "Bearer bearer-value-1");
        CHECK(seen.get_header_value("X-Api-Key") == "key value&2");
        CHECK(seen.get_param_value("api_key") == "key value&2");
        CHECK(seen.get_param_value("after_id") == "0");
    }

    source.endpoint.auth.bearer = "TRIBUTARY_TEST_UNSET_VARIABLE";
    const FetchResult r = fetcher.fetch(source, Cursor::at_id(0), 10);
    CHECK(r.status == Status::failing);
    CHECK(r.error ==
          "environment variable TRIBUTARY_TEST_UNSET_VARIABLE (--bearer-env) is not set in the loader's environment");
    ::unsetenv("TRIBUTARY_TEST_BEARER");
    ::unsetenv("TRIBUTARY_TEST_KEY");
}

TEST_CASE("a spent rate limit holds the source off; a 403 with it is throttled", "[auth]") {
    AuthServer server;
    std::atomic<int> status{200};
    server.http().Get("/events", [&](const httplib::Request&, httplib::Response& res) {
        res.status = status.load();
        res.set_header("X-RateLimit-Remaining", "0");
        res.set_header("X-RateLimit-Reset", "42");
        res.set_content(res.status == 200 ? kOneEvent : R"({"message":"API rate limit exceeded"})", "application/json");
    });
    server.start();
    StopSignal stop;
    CurlEventFetcher fetcher(FetchLimits{}, stop);
    const Source source = source_at(server.url("/events"));

    const FetchResult ok = fetcher.fetch(source, Cursor::at_id(0), 10);
    REQUIRE(ok.status == Status::ok);
    CHECK(ok.events.size() == 1);
    CHECK(ok.hold_off == 42s);

    status = 403;
    const FetchResult throttled = fetcher.fetch(source, Cursor::at_id(0), 10);
    CHECK(throttled.status == Status::throttled);
    CHECK(throttled.retry_after == 42s);
    CHECK_THAT(throttled.error, Catch::Contains("rate limit"));

    status = 429;
    CHECK(fetcher.fetch(source, Cursor::at_id(0), 10).status == Status::throttled);
}

TEST_CASE("OAuth2: an unusable token answer fails the source, naming why", "[oauth2]") {
    AuthServer server;
    std::atomic<int> shape{0};
    server.http().Post("/token", [&](const httplib::Request&, httplib::Response& res) {
        switch (shape.load()) {
            case 0:
                res.set_content(R"({"access_token":")" + std::string(9000, 'a') + R"("})", "application/json");
                break;
            case 1: res.set_content(R"({"access_token":"abc\r\nX-Evil: 1"})", "application/json"); break;
            case 2: res.set_content(R"({"token":"abc"})", "application/json"); break;
            case 3: res.set_content("not json", "text/plain"); break;
            default: res.status = 503;
        }
    });
    server.start();
    TestDatabase db;
    StopSignal stop;
    Loader loader(db.url(), stop, {{"ID", kClientId}, {"SECRET", kClientSecret}});
    Source source = source_at(server.url("/events"));
    source.id = registered_source(db.url(), "crm", source.endpoint.url);
    source.endpoint.auth.oauth2 = EnvAuth::OAuth2{server.url("/token"), "ID", "SECRET", ""};

    const std::vector<std::pair<Status, std::string>> expected{
        {Status::failing, "over 8192 bytes"},
        {Status::failing, "characters a header cannot carry"},
        {Status::failing, "no access_token string"},
        {Status::failing, "not a JSON object"},
        {Status::transient, "HTTP 503"},
    };
    for (std::size_t i = 0; i < expected.size(); ++i) {
        CAPTURE(i);
        shape = static_cast<int>(i);
        // Each failure keeps the refresher's lease until it runs out; end it.
        db.exec("UPDATE tributary.access_tokens SET refreshing_until = NULL");
        const FetchResult r = loader.fetcher.fetch(source, Cursor::at_id(0), 10);
        CHECK(r.status == expected[i].first);
        CHECK_THAT(r.error, Catch::Contains(expected[i].second));
        CHECK(r.error.find(kClientSecret) == std::string::npos);
    }
}

TEST_CASE("absurd rate-limit headers are clamped and logged", "[auth]") {
    AuthServer server;
    server.http().Get("/events", [&](const httplib::Request&, httplib::Response& res) {
        res.set_header("RateLimit-Remaining", "0");
        res.set_header("RateLimit-Reset", "99999999");
        res.set_content(kOneEvent, "application/json");
    });
    server.start();
    CapturedLog log;
    StopSignal stop;
    CurlEventFetcher fetcher(FetchLimits{}, stop);
    const FetchResult r = fetcher.fetch(source_at(server.url("/events")), Cursor::at_id(0), 10);
    REQUIRE(r.status == Status::ok);
    CHECK(r.hold_off == 24h);
    CHECK_THAT(log.text(), Catch::Contains("clamped"));
}

TEST_CASE("a Unix reset time is counted on the server's clock (its Date header)", "[auth]") {
    AuthServer server;
    server.http().Get("/events", [&](const httplib::Request&, httplib::Response& res) {
        res.set_header("Date", "Tue, 14 Nov 2023 22:13:20 GMT");  // 1700000000
        res.set_header("X-RateLimit-Remaining", "0");
        res.set_header("X-RateLimit-Reset", "1700000077");
        res.set_content(kOneEvent, "application/json");
    });
    server.start();
    StopSignal stop;
    CurlEventFetcher fetcher(FetchLimits{}, stop);
    const FetchResult r = fetcher.fetch(source_at(server.url("/events")), Cursor::at_id(0), 10);
    REQUIRE(r.status == Status::ok);
    CHECK(r.hold_off == 77s);
}
