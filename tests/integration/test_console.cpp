// `tributary console` over real HTTP (issue 17): the binary started on a free
// port against the test database, requests through cpp-httplib's client (as
// test_receive.cpp). What needs no console functions in the database: the
// pages, the safety rules, the live tail over read_log, start and stop.

#include <catch2/catch.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include "support/child_process.h"
#include "support/test_database.h"
#include "support/tributary_cli.h"

using namespace tributary::testing;
using namespace std::chrono_literals;

namespace {

const std::string kToken = "console-token-17";
const std::string kListening = R"(console on \S+ \(port (\d+)\))";
const std::string kCsp =
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
    "base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

/// A console on a free port of the test database.
class ConsoleRig {
public:
    explicit ConsoleRig(std::vector<std::string> flags = {}, std::vector<std::string> env = {}) {
        std::vector<std::string> args{"console", "--listen", "127.0.0.1:0"};
        args.insert(args.end(), flags.begin(), flags.end());
        console = std::make_unique<ChildProcess>(tributary_args(db.url(), args), env);
        port = std::stoi(wait_for_log(*console, kListening));
    }

    httplib::Client client() const {
        httplib::Client c("127.0.0.1", port);
        c.set_read_timeout(30, 0);
        return c;
    }
    std::string origin() const { return "http://127.0.0.1:" + std::to_string(port); }

    /// An action as the console's page sends it (same origin), with `token`.
    httplib::Result post(const std::string& path, const std::string& token, const std::string& body = "{}",
                         httplib::Headers headers = {}) const {
        if (!headers.count("Origin")) headers.emplace("Origin", origin());
        if (!token.empty()) headers.emplace("Authorization", "Bearer " + token);
        auto c = client();
        return c.Post(path.c_str(), headers, body, "application/json");
    }

    TestDatabase db;
    std::unique_ptr<ChildProcess> console;
    int port = 0;
};

std::string error_of(const httplib::Result& result) {
    return nlohmann::json::parse(result->body).at("error").get<std::string>();
}

/// A live tail read on a thread of its own; the main thread looks at what
/// arrived (assertions stay on the main thread).
class TailReader {
public:
    TailReader(int port, std::string query, httplib::Headers headers = {}) {
        thread_ = std::thread([this, port, query, headers] {
            httplib::Client client("127.0.0.1", port);
            client.set_read_timeout(60, 0);
            auto result = client.Get(("/api/tail" + query).c_str(), headers,
                                     [this](const httplib::Response& response) {
                                         std::lock_guard<std::mutex> guard(mutex_);
                                         status_ = response.status;
                                         type_ = response.get_header_value("Content-Type");
                                         changed_.notify_all();
                                         return true;
                                     },
                                     [this](const char* data, std::size_t size) {
                                         std::lock_guard<std::mutex> guard(mutex_);
                                         received_.append(data, size);
                                         changed_.notify_all();
                                         return true;
                                     });
            std::lock_guard<std::mutex> guard(mutex_);
            if (result && status_ == 0) status_ = result->status;
            if (result && received_.empty()) received_ = result->body;
            ended_ = true;
            changed_.notify_all();
        });
    }
    ~TailReader() {
        if (thread_.joinable()) thread_.join();
    }

    /// Waits until what arrived holds `text` (or the stream ended); true when it does.
    bool wait_for(const std::string& text, std::chrono::seconds longest = 30s) {
        std::unique_lock<std::mutex> lock(mutex_);
        return changed_.wait_for(lock, longest, [&] { return received_.find(text) != std::string::npos || ended_; }) &&
               received_.find(text) != std::string::npos;
    }
    bool wait_for_end(std::chrono::seconds longest = 30s) {
        std::unique_lock<std::mutex> lock(mutex_);
        return changed_.wait_for(lock, longest, [&] { return ended_; });
    }
    std::string received() {
        std::lock_guard<std::mutex> guard(mutex_);
        return received_;
    }
    int status() {
        std::lock_guard<std::mutex> guard(mutex_);
        return status_;
    }
    std::string type() {
        std::lock_guard<std::mutex> guard(mutex_);
        return type_;
    }

private:
    std::mutex mutex_;
    std::condition_variable changed_;
    std::string received_, type_;
    int status_ = 0;
    bool ended_ = false;
    std::thread thread_;
};

/// A live tail on a plain socket, which the test can close under it as a
/// browser tab does.
class RawTail {
public:
    explicit RawTail(int port) : fd_(::socket(AF_INET, SOCK_STREAM, 0)) {
        sockaddr_in addr{};
        addr.sin_family = AF_INET;
        addr.sin_port = htons(static_cast<std::uint16_t>(port));
        addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        if (::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) throw std::runtime_error("connect");
        const std::string request = "GET /api/tail HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
        if (::send(fd_, request.data(), request.size(), 0) != static_cast<ssize_t>(request.size()))
            throw std::runtime_error("send");
    }
    ~RawTail() { close(); }
    /// Reads until `text` came (or the connection ended); true when it did.
    bool wait_for(const std::string& text) {
        char buffer[4096];
        while (received_.find(text) == std::string::npos) {
            const auto n = ::recv(fd_, buffer, sizeof buffer, 0);
            if (n <= 0) return false;
            received_.append(buffer, static_cast<std::size_t>(n));
        }
        return true;
    }
    void close() {
        if (fd_ >= 0) ::close(fd_);
        fd_ = -1;
    }

private:
    int fd_;
    std::string received_;
};

}  // namespace

TEST_CASE("console: the pages are served with their types and the security headers", "[console]") {
    ConsoleRig rig;
    auto client = rig.client();
    const std::vector<std::pair<std::string, std::string>> pages = {{"/", "text/html; charset=utf-8"},
                                                                    {"/app.js", "text/javascript; charset=utf-8"},
                                                                    {"/app.css", "text/css; charset=utf-8"},
                                                                    {"/favicon.svg", "image/svg+xml"}};
    for (const auto& [path, type] : pages) {
        const auto result = client.Get(path.c_str());
        REQUIRE(result);
        INFO(path);
        CHECK(result->status == 200);
        CHECK(result->get_header_value("Content-Type") == type);
        CHECK(result->get_header_value("Content-Security-Policy") == kCsp);
        CHECK(result->get_header_value("X-Content-Type-Options") == "nosniff");
        CHECK(result->get_header_value("Referrer-Policy") == "no-referrer");
        CHECK_FALSE(result->body.empty());
    }
    const auto session = client.Get("/api/session");
    REQUIRE(session);
    CHECK(session->status == 200);
    CHECK(session->get_header_value("Cache-Control") == "no-store");
    const auto body = nlohmann::json::parse(session->body);
    CHECK(body.at("read_only") == true);
    CHECK(body.at("database").get<std::string>().find('@') == std::string::npos);  // never a user
    const auto missing = client.Get("/api/nothing");
    REQUIRE(missing);
    CHECK(missing->status == 404);
    CHECK(missing->get_header_value("Content-Security-Policy") == kCsp);
    CHECK_FALSE(error_of(missing).empty());
    const auto bad = client.Get("/api/sources?limit=501");
    REQUIRE(bad);
    CHECK(bad->status == 400);
    // Listening on the loopback, a request naming another host is refused (DNS rebinding).
    const auto rebound = client.Get("/api/session", {{"Host", "evil.example:" + std::to_string(rig.port)}});
    REQUIRE(rebound);
    CHECK(rebound->status == 403);
}

TEST_CASE("console: without a token every action is refused 403, read-only", "[console]") {
    ConsoleRig rig;
    CHECK_THAT(rig.console->err(), Catch::Contains("read-only"));
    for (const std::string path : {"/api/session", "/api/sources/live/pause", "/api/groups/g/replay"}) {
        const auto result = rig.post(path, kToken);
        REQUIRE(result);
        CHECK(result->status == 403);
        CHECK(error_of(result) == "the console is read-only: start it with --token-env or --token-file");
    }
}

TEST_CASE("console: with a token, an action needs it (401) and the same origin (403)", "[console]") {
    const std::string token_file = "/tmp/tributary-console-token-" + std::to_string(::getpid());
    {
        std::ofstream out(token_file);
        out << kToken << "\n";  // as `echo` writes it: the newline is no part of the token
    }
    for (const auto& flags : {std::vector<std::string>{"--token-env", "CONSOLE_TOKEN"},
                              std::vector<std::string>{"--token-file", token_file}}) {
        ConsoleRig rig(flags, {"CONSOLE_TOKEN=" + kToken});
        INFO(flags[0]);
        CHECK_THAT(rig.console->err(), Catch::Contains("actions need the admin token"));
        auto result = rig.post("/api/session", "");
        REQUIRE(result);
        CHECK(result->status == 401);
        result = rig.post("/api/session", "wrong-token");
        REQUIRE(result);
        CHECK(result->status == 401);
        result = rig.post("/api/session", kToken, "{}", {{"Origin", "http://evil.example"}});
        REQUIRE(result);
        CHECK(result->status == 403);
        result = rig.post("/api/session", kToken);
        REQUIRE(result);
        CHECK(result->status == 200);
        CHECK(nlohmann::json::parse(result->body) == nlohmann::json{{"ok", true}});
        auto client = rig.client();
        const auto plain = client.Post(
            "/api/session", {{"Origin", rig.origin()}, {"Authorization", "Bearer " + kToken}}, "{}", "text/plain");
        REQUIRE(plain);
        CHECK(plain->status == 403);
        // ... with a wrong token too: 403, not 401, so a cross-site form learns nothing of the token.
        const auto plain_wrong = client.Post(
            "/api/session", {{"Origin", rig.origin()}, {"Authorization", "Bearer wrong-token"}}, "{}", "text/plain");
        REQUIRE(plain_wrong);
        CHECK(plain_wrong->status == 403);
        CHECK_FALSE(plain_wrong->has_header("WWW-Authenticate"));
        // The token is never logged.
        CHECK(rig.console->err().find(kToken) == std::string::npos);
        CHECK_THAT(rig.console->err(), Catch::Contains("console: refused token check by 127.0.0.1"));
    }
    std::remove(token_file.c_str());
}

TEST_CASE("console: an empty or missing token and a bad --listen exit 2; a port taken exits 1 naming it", "[console]") {
    TestDatabase db;
    const std::string empty_file = "/tmp/tributary-console-empty-" + std::to_string(::getpid());
    { std::ofstream out(empty_file); }
    CHECK_THAT(run_tributary(db.url(), {"console", "--token-file", empty_file}, 2).err, Catch::Contains("is empty"));
    std::remove(empty_file.c_str());
    CHECK_THAT(run_tributary(db.url(), {"console", "--token-env", "TRIBUTARY_NO_SUCH_VARIABLE"}, 2).err,
               Catch::Contains("TRIBUTARY_NO_SUCH_VARIABLE"));
    CHECK_THAT(run_tributary(db.url(), {"console", "--listen", "nonsense"}, 2).err, Catch::Contains("--listen"));
    CHECK(run_tributary(db.url(), {"console", "--token-env", "A", "--token-file", "B"}, 2).code == 2);

    ChildProcess first(tributary_args(db.url(), {"console", "--listen", "127.0.0.1:0"}));
    const auto port = wait_for_log(first, kListening);
    CHECK_THAT(run_tributary(db.url(), {"console", "--listen", "127.0.0.1:" + port}, 1).err,
               Catch::Contains("127.0.0.1:" + port));
}

TEST_CASE("console: the live tail streams an event published during the test; SIGTERM ends it and the console",
          "[console]") {
    ConsoleRig rig;
    run_tributary(rig.db.url(), {"source", "add", "live", "--published"});
    run_tributary(rig.db.url(), {"source", "add", "other", "--published"});
    auto client = rig.client();
    const auto bad = client.Get("/api/tail?pattern=a..b");
    REQUIRE(bad);
    CHECK(bad->status == 400);
    CHECK_THAT(error_of(bad), Catch::Contains("a..b"));

    TailReader tail(rig.port, "?pattern=live&from=end");
    REQUIRE(tail.wait_for(": tail live"));
    CHECK(tail.status() == 200);
    CHECK(tail.type() == "text/event-stream");
    rig.db.exec("SELECT tributary.publish('other', 'k0', '{\"a\":0}')");
    rig.db.exec("SELECT tributary.publish('live', 'k1', '{\"a\":1}')");
    REQUIRE(tail.wait_for("\n\n", 30s));
    REQUIRE(tail.wait_for("\"k1\""));
    const auto received = tail.received();
    CHECK(received.find("\"k0\"") == std::string::npos);  // not the pattern's
    const auto data = received.find("data: ");
    REQUIRE(data != std::string::npos);
    const auto event = nlohmann::json::parse(received.substr(data + 6, received.find('\n', data) - data - 6));
    CHECK(event.at("source") == "live");
    CHECK(event.at("event_key") == "k1");
    CHECK(event.at("payload") == nlohmann::json{{"a", 1}});
    CHECK(event.at("loaded_at").get<std::string>().back() == 'Z');
    CHECK_THAT(received, Catch::Contains("event: event\n"));
    const auto id_at = received.find("id: ");
    REQUIRE(id_at != std::string::npos);
    const auto id = received.substr(id_at + 4, received.find('\n', id_at) - id_at - 4);

    // A reconnect with its Last-Event-ID gets what came after, not the same again.
    rig.db.exec("SELECT tributary.publish('live', 'k2', '{\"a\":2}')");
    TailReader again(rig.port, "?pattern=live", {{"Last-Event-ID", id}});
    REQUIRE(again.wait_for("\"k2\""));
    CHECK(again.received().find("\"k1\"") == std::string::npos);

    rig.console->signal(SIGTERM);
    CHECK(tail.wait_for_end());
    CHECK(again.wait_for_end());
    CHECK(rig.console->wait_for(30s) == 0);
    CHECK_THAT(rig.console->err(), Catch::Contains("stopped"));
}

TEST_CASE("console: a tail whose session is cut says so, reconnects and goes on with the events", "[console]") {
    ConsoleRig rig;
    run_tributary(rig.db.url(), {"source", "add", "live", "--published"});
    TailReader tail(rig.port, "?pattern=live");
    REQUIRE(tail.wait_for(": tail live"));
    // The tail's own session (it has read the log once, at its start) is cut
    // under it, as a restart of PostgreSQL would.
    const std::string cut = rig.db.scalar(
        "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname = current_database() "
        "AND pid <> pg_backend_pid() AND query LIKE '%read_log%'");
    REQUIRE(cut == "1");
    rig.db.exec("SELECT tributary.publish('live', 'after-cut', '{}')");
    REQUIRE(tail.wait_for("\"after-cut\""));
    const auto received = tail.received();
    CHECK_THAT(received, Catch::Contains("event: outage\ndata: {\"error\":\"database unavailable: "));
    CHECK_THAT(received, Catch::Contains("event: resumed\n"));
    CHECK(received.find("event: resumed") < received.find("after-cut"));
    rig.console->signal(SIGTERM);
    CHECK(tail.wait_for_end());
    CHECK(rig.console->wait_for(30s) == 0);
}

TEST_CASE("console: at most 8 live tails at once, the 9th is refused 503; a tail closed frees its place", "[console]") {
    ConsoleRig rig;
    std::vector<std::unique_ptr<TailReader>> tails;
    for (int i = 0; i < 7; ++i) {
        tails.push_back(std::make_unique<TailReader>(rig.port, ""));
        REQUIRE(tails.back()->wait_for(": tail >"));
    }
    RawTail closing(rig.port);
    REQUIRE(closing.wait_for(": tail >"));
    auto client = rig.client();
    const auto ninth = client.Get("/api/tail");
    REQUIRE(ninth);
    CHECK(ninth->status == 503);
    // Pages are still served while 8 tails are open.
    const auto page = client.Get("/app.js");
    REQUIRE(page);
    CHECK(page->status == 200);
    // A page closed gives its place back (its stream notices the connection gone).
    closing.close();
    wait_for_log(*rig.console, "tail pattern=> by 127.0.0.1 ended");
    tails.push_back(std::make_unique<TailReader>(rig.port, ""));
    CHECK(tails.back()->wait_for(": tail >"));
    rig.console->signal(SIGTERM);
    for (auto& tail : tails) CHECK(tail->wait_for_end());
    CHECK(rig.console->wait_for(30s) == 0);
}

namespace {

bool has_line(const std::string& text, const std::string& line) {
    return text.find("\n" + line + "\n") != std::string::npos;
}

/// The console's /metrics until `done` says so (a read per 5 s), at most 30 s.
std::string metrics_until(const ConsoleRig& rig, const std::function<bool(const std::string&)>& done) {
    auto client = rig.client();
    std::string text;
    for (const auto until = std::chrono::steady_clock::now() + 30s; std::chrono::steady_clock::now() < until;
         std::this_thread::sleep_for(200ms)) {
        const auto result = client.Get("/metrics");
        if (!result || result->status != 200) continue;
        text = result->body;
        if (done(text)) break;
    }
    return text;
}

}  // namespace

TEST_CASE("console: /metrics serves each group's backlog and dead letters, and forgets a deleted group", "[console]") {
    ConsoleRig rig;
    auto& db = rig.db;
    db.exec("INSERT INTO tributary.sources (name, kind, publishers) VALUES ('orders.eu', 'published', '{app}')");
    db.exec(
        "INSERT INTO tributary.events (source_id, event_id, payload)"
        " SELECT s.id, i, jsonb_build_object('n', i) FROM tributary.sources s, generate_series(1, 5) i");
    db.exec("SELECT tributary.group_create('billing', 'orders.>', 'beginning')");
    db.exec("SELECT tributary.group_create('audit', 'nothing.>', 'end')");
    db.exec(
        "INSERT INTO tributary.consumer_dead_letters (group_id, seq, deliveries, last_error, tx_from, tx_to)"
        " SELECT g.id, e.seq, 5, 'consumer said no', e.tx_id, e.tx_id FROM tributary.consumer_groups g,"
        " tributary.events e WHERE g.name = 'billing' AND e.event_id = 3");

    auto client = rig.client();
    const auto first = client.Get("/metrics");
    REQUIRE(first);
    CHECK(first->status == 200);  // no token, like the pages
    CHECK(first->get_header_value("Content-Type") == "text/plain; version=0.0.4; charset=utf-8");
    CHECK(first->get_header_value("Content-Security-Policy") == kCsp);
    CHECK(first->get_header_value("X-Content-Type-Options") == "nosniff");

    const auto text = metrics_until(
        rig, [](const std::string& t) { return t.find(R"(tributary_group_dead_letters{group="billing"})") != t.npos; });
    INFO(text);
    CHECK(has_line(text, R"(tributary_group_dead_letters{group="billing"} 1)"));
    CHECK(has_line(text, R"(tributary_group_events_behind{group="billing"} 5)"));
    CHECK(has_line(text, R"(tributary_group_events_behind_capped{group="billing"} 0)"));
    CHECK(has_line(text, R"(tributary_group_batches_in_flight{group="billing"} 0)"));
    CHECK(has_line(text, R"(tributary_group_retries_waiting{group="billing"} 0)"));
    CHECK(text.find(R"(tributary_group_events_behind{group="billing"} )") != std::string::npos);
    CHECK(text.find(R"(tributary_group_oldest_unprocessed_age_seconds{group="billing"} )") != std::string::npos);
    CHECK(has_line(text, R"(tributary_group_events_behind{group="audit"} 0)"));
    CHECK(has_line(text, R"(tributary_group_oldest_unprocessed_age_seconds{group="audit"} 0)"));
    CHECK(has_line(text, R"(tributary_group_dead_letters{group="audit"} 0)"));
    CHECK(has_line(text, "tributary_console_database_up 1"));
    CHECK(text.find("tributary_build_info{version=\"") != std::string::npos);

    db.exec("DELETE FROM tributary.consumer_dead_letters");
    db.exec("SELECT tributary.group_delete('billing')");
    const auto after =
        metrics_until(rig, [](const std::string& t) { return t.find(R"(group="billing")") == std::string::npos; });
    INFO(after);
    CHECK(after.find(R"(group="billing")") == std::string::npos);
    CHECK(has_line(after, R"(tributary_group_dead_letters{group="audit"} 0)"));
}
