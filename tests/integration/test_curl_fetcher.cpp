// CurlEventFetcher against a real HTTP server (cpp-httplib) in this process,
// on a loopback port chosen by the kernel.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <ctime>
#include <mutex>
#include <string>
#include <thread>

#include <httplib.h>

#include "core/stop_signal.h"
#include "http/body_budget.h"
#include "http/curl_event_fetcher.h"
#include "support/loopback_socket.h"

using namespace std::chrono_literals;
using tributary::CurlEventFetcher;
using tributary::FetchLimits;
using tributary::FetchResult;
using tributary::Source;
using tributary::StopSignal;
using Status = FetchResult::Status;

namespace {

const std::string kTwoEvents = R"({"events":[{"id":6,"payload":{"b":[1,2],"a":"x"}},{"id":7,"payload":"y"}]})";

// Routes are added on http() first, then start(): httplib's route tables must
// not change while it listens. Slow handlers poll closing() so stop() can
// join them.
class TestServer {
public:
    ~TestServer() {
        closing_ = true;
        if (thread_.joinable()) {
            server_.stop();
            thread_.join();
        }
    }

    httplib::Server& http() { return server_; }
    bool closing() const { return closing_; }

    void start() {
        server_.set_keep_alive_timeout(1);
        port_ = server_.bind_to_any_port("127.0.0.1");
        REQUIRE(port_ > 0);
        thread_ = std::thread([this] { server_.listen_after_bind(); });
        while (!server_.is_running()) std::this_thread::sleep_for(1ms);
    }

    std::string url(const std::string& path_and_query) const {
        return "http://127.0.0.1:" + std::to_string(port_) + path_and_query;
    }

private:
    httplib::Server server_;
    int port_ = 0;
    std::thread thread_;
    std::atomic<bool> closing_{false};
};

// What the server saw of the last request, for the tests to check.
struct Seen {
    std::mutex mutex;
    int requests = 0;
    httplib::Request last;

    void record(const httplib::Request& req) {
        std::lock_guard<std::mutex> guard(mutex);
        ++requests;
        last = req;
    }
};

Source source_at(const std::string& url, std::chrono::milliseconds timeout = 5000ms) {
    Source s;
    s.id = 1;
    s.name = "test";
    s.endpoint.url = url;
    s.endpoint.timeout = timeout;
    return s;
}

void reply(httplib::Response& res, int status, const std::string& body, const std::string& type = "application/json") {
    res.status = status;
    res.set_content(body, type.c_str());
}

// Sends whitespace (a valid JSON prefix) every 20 ms, forever. httplib gzips
// JSON and its compressor holds back such a body, so the size test sends it
// as an opaque type (the size limit applies before the content type check).
void endless_body(TestServer& server, httplib::Response& res, const char* type = "application/json") {
    res.set_chunked_content_provider(type, [&server](std::size_t, httplib::DataSink& sink) {
        if (server.closing()) return false;
        std::this_thread::sleep_for(20ms);
        const std::string spaces(256, ' ');
        return sink.write(spaces.data(), spaces.size());
    });
}

std::string http_date(std::time_t t) {
    std::tm tm{};
    gmtime_r(&t, &tm);
    char buf[64];
    std::strftime(buf, sizeof buf, "%a, %d %b %Y %H:%M:%S GMT", &tm);
    return buf;
}

}  // namespace

TEST_CASE("CurlEventFetcher fetches a batch and sends the protocol's request", "[curl_fetcher]") {
    TestServer server;
    Seen seen;
    server.http().Get("/events", [&](const httplib::Request& req, httplib::Response& res) {
        seen.record(req);
        reply(res, 200, kTwoEvents, "application/json; charset=utf-8");
    });
    server.start();
    StopSignal stop;
    CurlEventFetcher fetcher(FetchLimits{}, stop);

    const FetchResult r = fetcher.fetch(source_at(server.url("/events")), tributary::Cursor::at_id(5), 10);

    REQUIRE(r.status == Status::ok);
    REQUIRE(r.events.size() == 2);
    CHECK(r.events[0].id == 6);
    CHECK(r.events[0].payload == R"({"b":[1,2],"a":"x"})");  // the source's own text, not re-serialised
    CHECK(r.events[1].id == 7);
    CHECK(r.events[1].payload == R"("y")");
    std::lock_guard<std::mutex> guard(seen.mutex);
    CHECK(seen.last.target == "/events?after_id=5&limit=10");
    CHECK(seen.last.get_header_value("User-Agent") == "tributary/0.1");
    CHECK(seen.last.get_header_value("Accept") == "application/json");
    CHECK_THAT(seen.last.get_header_value("Accept-Encoding"), Catch::Contains("gzip"));
}

TEST_CASE("CurlEventFetcher appends after_id and limit to an existing query", "[curl_fetcher]") {
    TestServer server;
    Seen seen;
    server.http().Get("/events", [&](const httplib::Request& req, httplib::Response& res) {
        seen.record(req);
        reply(res, 200, "[]");
    });
    server.start();
    StopSignal stop;
    CurlEventFetcher fetcher(FetchLimits{}, stop);

    const FetchResult r = fetcher.fetch(source_at(server.url("/events?token=x")), tributary::Cursor::at_id(42), 1000);

    CHECK(r.status == Status::ok);
    CHECK(r.events.empty());
    std::lock_guard<std::mutex> guard(seen.mutex);
    CHECK(seen.last.target == "/events?token=x&after_id=42&limit=1000");
    CHECK(seen.last.get_param_value("token") == "x");
    CHECK(seen.last.get_param_value("after_id") == "42");
    CHECK(seen.last.get_param_value("limit") == "1000");
}

TEST_CASE("CurlEventFetcher sends the source's headers and never repeats their values", "[curl_fetcher]") {
    TestServer server;
    Seen seen;
    server.http().Get("/events", [&](const httplib::Request& req, httplib::Response& res) {
        seen.record(req);
        if (req.get_header_value("X-Api-Key") == "s3cret") reply(res, 200, kTwoEvents);
        else reply(res, 401, "who are you?", "text/plain");
    });
    server.start();
    StopSignal stop;
    CurlEventFetcher fetcher(FetchLimits{}, stop);

    Source source = source_at(server.url("/events"));
    source.endpoint.headers = {"X-Api-Key: s3cret", "Accept: application/vnd.test+json"};
    const FetchResult good = fetcher.fetch(source, tributary::Cursor::at_id(0), 10);
    CHECK(good.status == Status::ok);
    {
        std::lock_guard<std::mutex> guard(seen.mutex);
        CHECK(seen.last.get_header_value("Accept") == "application/vnd.test+json");
        CHECK(seen.last.get_header_value_count("Accept") == 1);
    }

    source.endpoint.headers = {"X-Api-Key: wrong-but-secret"};
    const FetchResult bad = fetcher.fetch(source, tributary::Cursor::at_id(0), 10);
    CHECK(bad.status == Status::failing);
    CHECK_THAT(bad.error, Catch::Contains("HTTP 401 Unauthorized"));
    CHECK_THAT(bad.error, !Catch::Contains("wrong-but-secret"));

    source.endpoint.headers = {"X-Api-Key: a\r\nX-Injected: 1"};
    const FetchResult injected = fetcher.fetch(source, tributary::Cursor::at_id(0), 10);
    CHECK(injected.status == Status::failing);
    CHECK_THAT(injected.error, Catch::Contains("header #0"));
    CHECK_THAT(injected.error, !Catch::Contains("X-Injected"));
}

TEST_CASE("CurlEventFetcher classifies HTTP statuses", "[curl_fetcher]") {
    TestServer server;
    Seen redirect_target;
    server.http().Get("/missing",
                      [](const httplib::Request&, httplib::Response& res) { reply(res, 404, "no", "text/plain"); });
    server.http().Get("/broken",
                      [](const httplib::Request&, httplib::Response& res) { reply(res, 500, "oops", "text/plain"); });
    server.http().Get("/busy",
                      [](const httplib::Request&, httplib::Response& res) { reply(res, 503, "busy", "text/plain"); });
    server.http().Get("/slow-client",
                      [](const httplib::Request&, httplib::Response& res) { reply(res, 408, "", "text/plain"); });
    server.http().Get("/moved",
                      [](const httplib::Request&, httplib::Response& res) { res.set_redirect("/events", 301); });
    server.http().Get("/events", [&](const httplib::Request& req, httplib::Response& res) {
        redirect_target.record(req);
        reply(res, 200, "[]");
    });
    server.http().Get("/bad-ids", [](const httplib::Request&, httplib::Response& res) {
        reply(res, 200, R"([{"id":2,"payload":1},{"id":1,"payload":1}])");
    });
    server.http().Get("/truncated", [](const httplib::Request&, httplib::Response& res) {
        reply(res, 200, R"({"events":[{"id":2,"payl)");
    });
    server.start();
    StopSignal stop;
    CurlEventFetcher fetcher(FetchLimits{}, stop);

    struct Case {
        const char* path;
        Status status;
        std::string message;
    };
    const Case cases[] = {
        {"/missing?token=secret", Status::failing,
         "HTTP 404 Not Found from " + server.url("/missing") + ": check the source URL/credentials"},
        {"/broken", Status::transient, "HTTP 500 Internal Server Error"},
        {"/busy", Status::transient, "HTTP 503 Service Unavailable"},
        {"/slow-client", Status::transient, "HTTP 408"},
        {"/moved", Status::failing,
         "HTTP 301 Moved Permanently from " + server.url("/moved") + ": redirects are not followed"},
        {"/bad-ids", Status::failing, "not strictly increasing"},
        {"/truncated", Status::transient, "malformed JSON body"},
    };
    for (const auto& c : cases) {
        INFO(c.path);
        const FetchResult r = fetcher.fetch(source_at(server.url(c.path)), tributary::Cursor::at_id(0), 10);
        CHECK(r.status == c.status);
        CHECK_THAT(r.error, Catch::Contains(c.message));
        CHECK_THAT(r.error, !Catch::Contains("secret"));
        CHECK(r.events.empty());
    }
    std::lock_guard<std::mutex> guard(redirect_target.mutex);
    CHECK(redirect_target.requests == 0);
}

TEST_CASE("CurlEventFetcher honours Retry-After on 429 and 503", "[curl_fetcher]") {
    TestServer server;
    std::mutex mutex;
    std::string retry_after;
    int status = 429;
    server.http().Get("/events", [&](const httplib::Request&, httplib::Response& res) {
        std::lock_guard<std::mutex> guard(mutex);
        res.set_header("Retry-After", retry_after);
        reply(res, status, "later", "text/plain");
    });
    server.start();
    StopSignal stop;
    CurlEventFetcher fetcher(FetchLimits{}, stop);
    auto fetch_with = [&](int code, const std::string& header) {
        {
            std::lock_guard<std::mutex> guard(mutex);
            status = code;
            retry_after = header;
        }
        return fetcher.fetch(source_at(server.url("/events")), tributary::Cursor::at_id(0), 10);
    };

    SECTION("seconds") {
        const FetchResult r = fetch_with(429, "3");
        CHECK(r.status == Status::throttled);
        CHECK(r.retry_after == 3000ms);
        CHECK_THAT(r.error, Catch::Contains("HTTP 429 Too Many Requests"));
        CHECK(fetch_with(503, "5").retry_after == 5000ms);
        CHECK(fetch_with(503, "5").status == Status::throttled);
        CHECK(fetch_with(429, "0").retry_after == 0ms);
    }
    SECTION("an HTTP-date") {
        const auto sent = std::time(nullptr);
        const FetchResult r = fetch_with(429, http_date(sent + 10));
        const auto answered = std::time(nullptr);
        CHECK(r.status == Status::throttled);
        // Ten seconds after `sent`, counted from whenever it was parsed.
        CHECK(r.retry_after >= std::chrono::seconds(sent + 10 - answered - 1));
        CHECK(r.retry_after <= 11000ms);
    }
    SECTION("an HTTP-date in the past means now") {
        const FetchResult r = fetch_with(503, http_date(std::time(nullptr) - 3600));
        CHECK(r.status == Status::throttled);
        CHECK(r.retry_after == 0ms);
    }
    SECTION("clamped to 24 hours") {
        CHECK(fetch_with(429, "99999999999999999999").retry_after == 24h);
        CHECK(fetch_with(429, http_date(std::time(nullptr) + 30 * 86400)).retry_after == 24h);
    }
    SECTION("unreadable Retry-After counts as absent") {
        const FetchResult r = fetch_with(429, "soon");
        CHECK(r.status == Status::transient);
        CHECK_THAT(r.error, Catch::Contains("HTTP 429"));
    }
    SECTION("Retry-After on another status is ignored") {
        CHECK(fetch_with(500, "3").status == Status::transient);
        CHECK(fetch_with(404, "3").status == Status::failing);
    }
}

TEST_CASE("CurlEventFetcher accepts only JSON content types", "[curl_fetcher]") {
    TestServer server;
    std::mutex mutex;
    std::string type;
    server.http().Get("/events", [&](const httplib::Request&, httplib::Response& res) {
        std::lock_guard<std::mutex> guard(mutex);
        reply(res, 200, "[]", type);
    });
    server.start();
    StopSignal stop;
    CurlEventFetcher fetcher(FetchLimits{}, stop);
    auto fetch_as = [&](const std::string& content_type) {
        {
            std::lock_guard<std::mutex> guard(mutex);
            type = content_type;
        }
        return fetcher.fetch(source_at(server.url("/events")), tributary::Cursor::at_id(0), 10);
    };

    CHECK(fetch_as("application/json").status == Status::ok);
    CHECK(fetch_as("Application/JSON ; charset=UTF-8").status == Status::ok);
    CHECK(fetch_as("application/problem+json").status == Status::ok);
    CHECK(fetch_as("application/vnd.events.v2+json; charset=utf-8").status == Status::ok);
    for (const char* wrong :
         {"text/html; charset=utf-8", "text/plain", "application/jsonx", "application/+json", "application/json+xml"}) {
        INFO(wrong);
        const FetchResult r = fetch_as(wrong);
        CHECK(r.status == Status::transient);
        CHECK_THAT(r.error, Catch::Contains(std::string("unexpected content type \"") + wrong + "\""));
    }
}

TEST_CASE("CurlEventFetcher cuts off a body over max_body_bytes", "[curl_fetcher]") {
    TestServer server;
    std::string big = R"({"events":[)";
    for (int i = 1; i <= 200; ++i)
        big += (i > 1 ? "," : "") + std::string(R"({"id":)") + std::to_string(i) + R"(,"payload":{}})";
    big += "]}";
    REQUIRE(big.size() > 4000);
    server.http().Get("/big", [&](const httplib::Request&, httplib::Response& res) { reply(res, 200, big); });
    server.http().Get("/big-opaque", [&](const httplib::Request&, httplib::Response& res) {
        reply(res, 200, big, "application/octet-stream");  // sent uncompressed, with Content-Length
    });
    server.http().Get("/endless", [&](const httplib::Request&, httplib::Response& res) {
        endless_body(server, res, "application/octet-stream");
    });
    server.start();
    StopSignal stop;
    FetchLimits limits;
    limits.max_body_bytes = 1000;
    CurlEventFetcher fetcher(limits, stop);

    // Compressed in transit (the server gzips JSON) but counted decompressed.
    for (const char* path : {"/big", "/big-opaque", "/endless"}) {
        INFO(path);
        // Cut at the limit: a transfer left to run would end in "timed out".
        const FetchResult r = fetcher.fetch(source_at(server.url(path)), tributary::Cursor::at_id(0), 1000);
        CHECK(r.status == Status::transient);
        CHECK_THAT(r.error, Catch::Contains("response larger than 1000 bytes from " + server.url(path)));
    }

    limits.max_body_bytes = big.size();
    CurlEventFetcher roomy(limits, stop);
    CHECK(roomy.fetch(source_at(server.url("/big")), tributary::Cursor::at_id(0), 1000).events.size() == 200);
}

TEST_CASE("CurlEventFetcher takes bodies from the process's budget and holds what a batch keeps", "[curl_fetcher]") {
    TestServer server;
    std::string body = R"({"events":[)";
    for (int i = 1; i <= 100; ++i)
        body += (i > 1 ? "," : "") + std::string(R"({"id":)") + std::to_string(i) + R"(,"payload":"0123456789"})";
    body += "]}";
    server.http().Get("/events", [&](const httplib::Request&, httplib::Response& res) { reply(res, 200, body); });
    server.start();
    StopSignal stop;
    FetchLimits limits;
    limits.max_body_bytes = 1 << 20;
    tributary::BodyBudget budget(limits.max_body_bytes);
    CurlEventFetcher fetcher(limits, stop, &budget);

    {
        const FetchResult r = fetcher.fetch(source_at(server.url("/events")), tributary::Cursor::at_id(0), 1000);
        REQUIRE(r.status == Status::ok);
        CHECK(r.events.size() == 100);
        // The payloads stay counted until the batch is dropped; the body is given back.
        REQUIRE(r.memory_hold);
        CHECK_FALSE(budget.try_take(budget.total()));
        CHECK(budget.try_take(budget.total() - 100 * 16));
        budget.give_back(budget.total() - 100 * 16);
    }
    CHECK(budget.try_take(budget.total()));

    // Others hold the whole budget: the fetch waits for its share, within
    // the source's timeout, then fails as transient and says why.
    const FetchResult starved =
        fetcher.fetch(source_at(server.url("/events"), 300ms), tributary::Cursor::at_id(0), 1000);
    CHECK(starved.status == Status::transient);
    CHECK_THAT(starved.error, Catch::Contains("--max-body-bytes-in-flight 1048576"));

    // Given back meanwhile, the waiting fetch goes on.
    std::thread giver([&] {
        std::this_thread::sleep_for(100ms);
        budget.give_back(budget.total());
    });
    const FetchResult waited = fetcher.fetch(source_at(server.url("/events")), tributary::Cursor::at_id(0), 1000);
    giver.join();
    CHECK(waited.status == Status::ok);
    CHECK(waited.events.size() == 100);
}

TEST_CASE("CurlEventFetcher gives up on a slow body after the source's timeout", "[curl_fetcher]") {
    TestServer server;
    server.http().Get("/slow", [&](const httplib::Request&, httplib::Response& res) { endless_body(server, res); });
    server.start();
    StopSignal stop;
    CurlEventFetcher fetcher(FetchLimits{}, stop);

    const auto started = std::chrono::steady_clock::now();
    const FetchResult r = fetcher.fetch(source_at(server.url("/slow"), 300ms), tributary::Cursor::at_id(0), 10);
    const auto elapsed = std::chrono::steady_clock::now() - started;

    CHECK(r.status == Status::transient);
    CHECK_THAT(r.error, Catch::Contains("timed out"));
    CHECK_THAT(r.error, Catch::Contains(server.url("/slow")));
    // Never (much) before the timeout; how much later depends on the machine. libcurl counts whole
    // milliseconds on its own clock, started after ours, so its timer may fire a few ms early.
    CHECK(elapsed >= 290ms);
}

TEST_CASE("CurlEventFetcher abandons a transfer when a stop is requested", "[curl_fetcher]") {
    TestServer server;
    Seen seen;
    server.http().Get("/slow", [&](const httplib::Request& req, httplib::Response& res) {
        seen.record(req);
        endless_body(server, res);
    });
    server.start();
    StopSignal stop;
    CurlEventFetcher fetcher(FetchLimits{}, stop);

    const auto started = std::chrono::steady_clock::now();
    std::thread stopper([&stop] {
        std::this_thread::sleep_for(200ms);
        stop.request_stop();
    });
    const FetchResult r = fetcher.fetch(source_at(server.url("/slow"), 30s), tributary::Cursor::at_id(0), 10);
    const auto elapsed = std::chrono::steady_clock::now() - started;
    stopper.join();

    CHECK(r.status == Status::stopped);  // not "timed out": the source's timeout is 30 s
    CHECK(elapsed >= 200ms);

    // Once stopping, no new request goes out.
    const FetchResult next = fetcher.fetch(source_at(server.url("/slow"), 30s), tributary::Cursor::at_id(0), 10);
    CHECK(next.status == Status::stopped);
    std::lock_guard<std::mutex> guard(seen.mutex);
    CHECK(seen.requests == 1);
}

TEST_CASE("CurlEventFetcher sends no request past the time it was given, and only that fetch is bounded",
          "[curl_fetcher]") {
    TestServer server;
    Seen seen;
    server.http().Get("/events", [&](const httplib::Request& req, httplib::Response& res) {
        seen.record(req);
        res.set_content(R"({"events": []})", "application/json");
    });
    server.start();
    StopSignal stop;
    CurlEventFetcher fetcher(FetchLimits{}, stop);

    // A loader that stalled past its claim: the check comes after the
    // connection is made, just before the request would be written.
    fetcher.send_no_later_than(std::chrono::steady_clock::now() - 1ms);
    const FetchResult late = fetcher.fetch(source_at(server.url("/events")), tributary::Cursor::at_id(0), 10);
    CHECK(late.status == Status::late);
    CHECK_THAT(late.error, Catch::Contains("not sent"));
    {
        std::lock_guard<std::mutex> guard(seen.mutex);
        CHECK(seen.requests == 0);
    }
    // The next fetch was given no time: it is sent.
    const FetchResult next = fetcher.fetch(source_at(server.url("/events")), tributary::Cursor::at_id(0), 10);
    CHECK(next.status == Status::ok);
    std::lock_guard<std::mutex> guard(seen.mutex);
    CHECK(seen.requests == 1);
}

TEST_CASE("CurlEventFetcher reports connection failures as transient", "[curl_fetcher]") {
    StopSignal stop;
    CurlEventFetcher fetcher(FetchLimits{}, stop);
    // Bound, not listening: connecting is refused.
    tributary::testing::LoopbackSocket refusing(tributary::testing::LoopbackSocket::Mode::bound);
    const std::string url = "http://127.0.0.1:" + std::to_string(refusing.port()) + "/events";

    const FetchResult r = fetcher.fetch(source_at(url + "?token=secret"), tributary::Cursor::at_id(0), 10);

    CHECK(r.status == Status::transient);
    CHECK_THAT(r.error, Catch::Contains("GET " + url + " failed"));
    CHECK_THAT(r.error, Catch::Contains("onnect"));
    CHECK_THAT(r.error, !Catch::Contains("secret"));
}

TEST_CASE("CurlEventFetcher refuses URLs it must not or cannot use", "[curl_fetcher]") {
    StopSignal stop;
    CurlEventFetcher fetcher(FetchLimits{}, stop);
    for (const char* url : {"file:///etc/passwd", "ftp://127.0.0.1/events", "no scheme at all"}) {
        INFO(url);
        const FetchResult r = fetcher.fetch(source_at(url), tributary::Cursor::at_id(0), 10);
        CHECK(r.status == Status::failing);
        CHECK(r.events.empty());
    }
    const FetchResult r =
        fetcher.fetch(source_at("http://user:pa55@127.0.0.1:1/x?k=v"), tributary::Cursor::at_id(0), 10);
    CHECK_THAT(r.error, !Catch::Contains("pa55"));
    CHECK_THAT(r.error, Catch::Contains("http://127.0.0.1:1/x"));
}

TEST_CASE("CurlEventFetcher reuses its connection between requests", "[curl_fetcher]") {
    TestServer server;
    Seen seen;
    server.http().Get("/events", [&](const httplib::Request& req, httplib::Response& res) {
        seen.record(req);
        reply(res, 200, "[]");
    });
    server.start();
    StopSignal stop;
    CurlEventFetcher fetcher(FetchLimits{}, stop);

    REQUIRE(fetcher.fetch(source_at(server.url("/events")), tributary::Cursor::at_id(0), 10).status == Status::ok);
    int first_port = 0;
    {
        std::lock_guard<std::mutex> guard(seen.mutex);
        first_port = seen.last.remote_port;
    }
    REQUIRE(fetcher.fetch(source_at(server.url("/events")), tributary::Cursor::at_id(0), 10).status == Status::ok);
    std::lock_guard<std::mutex> guard(seen.mutex);
    CHECK(seen.requests == 2);
    CHECK(seen.last.remote_port == first_port);
}
