// Operating a running loader: /metrics (checked by promtool), /healthz
// through a database outage, JSON logs, the memory ceiling, no secrets in
// output, and the crontab line we ship as an example.

#include <catch2/catch.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <regex>
#include <sstream>
#include <thread>

#include <httplib.h>
#include <nlohmann/json.hpp>
#include <pqxx/pqxx>

#include "support/source_server.h"
#include "support/test_database.h"
#include "support/tributary_cli.h"

using namespace tributary::testing;
using namespace std::chrono_literals;

namespace {

struct Scrape {
    int status = 0;
    std::string body;
};

Scrape get(int port, const char* path) {
    httplib::Client client("127.0.0.1", port);
    client.set_read_timeout(5, 0);
    const auto res = client.Get(path);
    if (!res) return {};
    return {res->status, res->body};
}

/// The value of one sample line, e.g. `tributary_events_stored_total{source="x"}`.
double sample(const std::string& text, const std::string& series) {
    const auto at = text.find("\n" + series + " ");
    if (at == std::string::npos) return -1;
    return std::stod(text.substr(at + series.size() + 2));
}

std::string env(const char* name) {
    const char* value = std::getenv(name);
    if (!value) FAIL(name << " is not set: run the tests with scripts/test");
    return value;
}

std::string write_temp(const std::string& name, const std::string& text) {
    const std::string path = "/tmp/tributary-test-" + std::to_string(getpid()) + "-" + name;
    std::ofstream(path) << text;
    return path;
}

/// A loopback connection that has sent `start` (not a whole request).
int open_connection(int port, const std::string& start) {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<std::uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd < 0 || ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) FAIL("cannot connect");
    if (!start.empty()) ::send(fd, start.data(), start.size(), MSG_NOSIGNAL);
    return fd;
}

/// Whether `received` holds a whole answer: its head, and as many body bytes
/// as its Content-Length says (none after a HEAD).
bool whole_answer(const std::string& received, bool head_request) {
    const auto head_end = received.find("\r\n\r\n");
    if (head_end == std::string::npos) return false;
    std::string head = received.substr(0, head_end + 2);
    std::transform(head.begin(), head.end(), head.begin(), [](unsigned char c) { return std::tolower(c); });
    const auto field = head.find("\r\ncontent-length:");
    const std::size_t length = field == std::string::npos || head_request ? 0 : std::stoul(head.substr(field + 17));
    return received.size() >= head_end + 4 + length;
}

/// Sends `request` as is and returns the answer: everything the server sent
/// until it closed, or until one whole answer is in when `one_answer` (the
/// server may keep the connection open for another request); 10 s at most.
std::string raw_exchange(int port, const std::string& request, bool one_answer = true) {
    const int fd = open_connection(port, request);
    timeval timeout{10, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
    const bool head_request = request.rfind("HEAD ", 0) == 0;
    std::string answer;
    char buffer[4096];
    for (ssize_t n;
         !(one_answer && whole_answer(answer, head_request)) && (n = ::recv(fd, buffer, sizeof buffer, 0)) > 0;)
        answer.append(buffer, static_cast<std::size_t>(n));
    ::close(fd);
    return answer;
}

std::string read_file(const std::string& path) {
    std::ifstream in(path);
    return std::string(std::istreambuf_iterator<char>(in), {});
}

}  // namespace

TEST_CASE("/metrics moves during a run and passes promtool") {
    TestDatabase db;
    SourceServer server({"--sources", "2", "--prefix", "ops.src-", "--backlog", "3000", "--rate", "100"});
    for (int i = 0; i < 2; ++i) {
        const auto name = "ops.src-" + std::to_string(i);
        run_tributary(db.url(), {"source", "add", name, "--url", server.events_url(name)});
    }
    run_tributary(db.url(), {"source", "add", "ops.broken", "--url", server.base_url() + "/sources/nope/events"});
    ChildProcess loader(tributary_args(db.url(), {"run", "--workers", "2", "--metrics-addr", "127.0.0.1:0"}));
    const int port = std::stoi(wait_for_log(loader, R"(serving /metrics and /healthz on \S+ \(port (\d+)\))"));

    std::this_thread::sleep_for(1500ms);
    const auto first = get(port, "/metrics");
    REQUIRE(first.status == 200);
    std::this_thread::sleep_for(1500ms);
    const auto second = get(port, "/metrics");
    const std::string stored = R"(tributary_events_stored_total{source="ops.src-0"})";
    CHECK(sample(first.body, stored) >= 3000);
    CHECK(sample(second.body, stored) > sample(first.body, stored));
    CHECK(sample(second.body, "tributary_passes_total") > sample(first.body, "tributary_passes_total"));
    CHECK(sample(second.body, R"(tributary_fetch_errors_total{class="http_status",source="ops.broken"})") >= 1);
    CHECK(sample(second.body, R"(tributary_source_failing{source="ops.broken"})") == 1);
    CHECK(sample(second.body, R"(tributary_source_cursor{source="ops.src-1"})") >= 3000);
    CHECK(sample(second.body, "tributary_workers") == 2);
    CHECK(second.body.find("tributary_fetch_duration_seconds_bucket{source=\"ops.src-0\",le=\"0.005\"}") !=
          std::string::npos);
    CHECK(get(port, "/healthz").status == 200);

    const auto metrics_file = write_temp("metrics.txt", second.body);
    const auto promtool = run_program({"/bin/sh", "-c", "promtool check metrics < " + metrics_file});
    INFO(promtool.out << promtool.err);
    CHECK(promtool.code == 0);
    std::remove(metrics_file.c_str());
    loader.signal(SIGTERM);
    CHECK(loader.wait_for(15s) == 0);
}

TEST_CASE("a database outage: said once, /healthz 503 with the reason, resumed by itself") {
    TestDatabase db;
    SourceServer server({"--sources", "1", "--prefix", "ops.src-", "--backlog", "10", "--rate", "50"});
    run_tributary(db.url(), {"source", "add", "ops.src-0", "--url", server.events_url("ops.src-0")});
    ChildProcess loader(tributary_args(db.url(), {"run", "--workers", "3", "--metrics-addr", "127.0.0.1:0"}));
    const int port = std::stoi(wait_for_log(loader, R"(serving /metrics and /healthz on \S+ \(port (\d+)\))"));
    std::this_thread::sleep_for(1s);
    REQUIRE(get(port, "/healthz").status == 200);

    ChildProcess outage({env("TRIBUTARY_PG_TMP"), "restart", env("TRIBUTARY_TEST_PG_DIR"), "fast", "6"});
    wait_for_log(loader, "database unavailable");
    const auto down = get(port, "/healthz");
    CHECK(down.status == 503);
    CHECK_THAT(down.body, Catch::StartsWith("database unreachable"));
    REQUIRE(outage.wait_for(60s) == 0);
    wait_for_log(loader, "database reachable again", 30s);
    CHECK(get(port, "/healthz").status == 200);

    const auto log = loader.err();
    const auto said = [&](const std::string& what) {
        std::size_t n = 0;
        for (auto at = log.find(what); at != std::string::npos; at = log.find(what, at + 1)) ++n;
        return n;
    };
    CHECK(said("database unavailable") == 1);  // not once per worker, source or retry
    CHECK(said("database reachable again") == 1);
    const auto before = db.scalar("SELECT events_stored FROM tributary.cursors");
    std::this_thread::sleep_for(1500ms);
    CHECK(std::stol(db.scalar("SELECT events_stored FROM tributary.cursors")) > std::stol(before));
    CHECK(sample(get(port, "/metrics").body, "tributary_database_reconnects_total") >= 3);
    loader.signal(SIGTERM);
    CHECK(loader.wait_for(15s) == 0);
}

TEST_CASE("JSON logs carry source and worker as fields, and never a header's value") {
    TestDatabase db;
    SourceServer server({"--sources", "1", "--prefix", "ops.src-", "--fault", "ops.src-0=http-404"});
    run_tributary(db.url(), {"source", "add", "ops.src-0", "--url", server.events_url("ops.src-0") + "?token=s3cr3t-q",
                             "--header", "Authorization: Bearer s3cr3t-h"});
    const auto run = run_tributary(db.url(), {"--log-format", "json", "run", "--until-idle"});
    bool saw_warning = false;
    std::istringstream lines(run.err);
    for (std::string line; std::getline(lines, line);) {
        const auto record = nlohmann::json::parse(line);  // every line is one JSON object
        CHECK(record.contains("time"));
        CHECK(record.contains("host"));
        CHECK(record.contains("pid"));
        if (record["level"] == "warning") {
            saw_warning = true;
            CHECK(record["source"] == "ops.src-0");
            CHECK_THAT(record["worker"].get<std::string>(), Catch::StartsWith("w"));
            CHECK_THAT(record["msg"].get<std::string>(), Catch::Contains("HTTP 404"));
        }
    }
    CHECK(saw_warning);
    const auto listing =
        run_tributary(db.url(), {"source", "list", "--json"}).out + run_tributary(db.url(), {"source", "list"}).out;
    for (const auto& text : {run.err, listing, run_tributary(db.url(), {"status", "--json"}).out}) {
        CHECK(text.find("s3cr3t") == std::string::npos);
    }
    CHECK_THAT(listing, Catch::Contains("Authorization: <redacted>"));
}

TEST_CASE("--max-rss stops gracefully with exit code 3 for the supervisor") {
    TestDatabase db;
    ChildProcess loader(tributary_args(db.url(), {"run", "--max-rss", "1"}));
    REQUIRE(loader.wait_for(20s) == 3);
    CHECK_THAT(loader.err(), Catch::Contains("memory ceiling reached"));
}

TEST_CASE("bad run flags are usage errors") {
    TestDatabase db;
    CHECK(run_tributary(db.url(), {"run", "--metrics-addr", "nonsense"}, 2).err.find("HOST:PORT") != std::string::npos);
    CHECK(run_tributary(db.url(), {"run", "--max-runtime", "99999999h"}, 2).err.find("invalid duration") !=
          std::string::npos);
    run_tributary(db.url(), {"run", "--workers", "0"}, 2);
    run_tributary(db.url(), {"--log-format", "xml", "status"}, 2);
}

// The systemd units live in packaging/systemd/ and are verified from the
// package itself (ctest's "package" test); the crontab line is an example
// shipped beside them.
TEST_CASE("the example crontab line is well-formed") {
    const std::string cron = read_file(TRIBUTARY_SOURCE_DIR "/packaging/examples/tributary.cron");
    REQUIRE_FALSE(cron.empty());
    const std::regex job(R"(^\* \* \* \* \* \S+ /usr/bin/tributary run --max-runtime 55s .*$)");
    std::istringstream lines(cron);
    int jobs = 0;
    for (std::string line; std::getline(lines, line);)
        if (!line.empty() && line[0] != '#' && line.find('=') == std::string::npos) {
            CHECK(std::regex_match(line, job));
            ++jobs;
        }
    CHECK(jobs == 1);
}

TEST_CASE("run waits for a database that is not there yet, within --max-runtime") {
    // Nothing listens on port 1: like a loader started before PostgreSQL.
    const std::string nowhere = "postgresql://postgres@127.0.0.1:1/tributary?connect_timeout=1";
    const auto done = run_program(tributary_args(nowhere, {"run", "--max-runtime", "3s"}));
    CHECK(done.code == 1);
    CHECK_THAT(done.err, Catch::Contains("database unavailable at start, retrying"));
    CHECK_THAT(done.err, Catch::Contains("would pass the max runtime of 3000 ms: giving up"));

    ChildProcess waiting(tributary_args(nowhere, {"run"}));
    std::this_thread::sleep_for(1500ms);
    waiting.signal(SIGTERM);
    CHECK(waiting.wait_for(10s) == 0);
}

TEST_CASE("integer duration and URL flags take strictly what they say; else exit 2 naming the flag") {
    TestDatabase db;
    const auto refused = [&](std::vector<std::string> args, const std::string& flag) {
        const auto err = run_tributary(db.url(), std::move(args), 2).err;
        INFO(err);
        CHECK(err.find(flag) != std::string::npos);
        return err;
    };
    const std::vector<std::string> add = {"source", "add", "s", "--url", "http://127.0.0.1:9/events"};
    const auto with = [&](std::vector<std::string> extra) {
        auto args = add;
        args.insert(args.end(), extra.begin(), extra.end());
        return args;
    };
    // No clamping: one past the largest id is refused, not stored as the largest.
    refused(with({"--after-id", "9223372036854775808"}), "--after-id");
    refused(with({"--after-id", "-1"}), "--after-id");
    for (const char* odd : {"0x10", "+5", " 5", "5 ", "1e3", ""}) {
        refused(with({"--batch-size", odd}), "--batch-size");
        refused(with({"--interval-ms", odd}), "--interval-ms");
        refused(with({"--timeout-ms", odd}), "--timeout-ms");
    }
    for (const char* url : {"http://a.example/x\r\nInjected: 1", "http://a.example/a b", "http://a.example/\x01",
                            "http://a.example/\x7f", "ftp://a.example/", "http://", "http:///path"}) {
        const auto err = refused({"source", "add", "s", "--url", url}, "--url");
        CHECK(err.find('\r') == std::string::npos);  // the bad URL is not echoed
    }
    CHECK(db.scalar("SELECT count(*) FROM tributary.sources") == "0");
    run_tributary(db.url(), with({"--after-id", "9223372036854775807", "--batch-size", "10"}));

    refused({"run", "--max-runtime", ""}, "--max-runtime");  // an unset variable in a cron line
    refused({"run", "--max-runtime", "0x10"}, "--max-runtime");
    refused({"run", "--idle-poll-max", ""}, "--idle-poll-max");
    refused({"run", "--workers", "0x10"}, "--workers");
    refused({"run", "--workers", "+5"}, "--workers");
    refused({"run", "--max-rss", " 5"}, "--max-rss");
    refused({"consume", "g", "--exec", "true", "--max-runtime", ""}, "--max-runtime");
    refused({"consume", "g", "--exec", "true", "--batch", "0x10"}, "--batch");
    refused({"group", "create", "g", "--lease", ""}, "--lease");
    refused({"group", "create", "g", "--max-deliveries", "+3"}, "--max-deliveries");
    refused({"dlq", "replay", "g", "--seq", "9223372036854775808"}, "--seq");
}

TEST_CASE("source add's reading flags are checked together; a wrong one exits 2 naming it", "[styles]") {
    TestDatabase db;
    const auto refused = [&](std::vector<std::string> extra, const std::string& says) {
        std::vector<std::string> args = {"source", "add", "s", "--url", "http://127.0.0.1:9/api"};
        args.insert(args.end(), extra.begin(), extra.end());
        const auto err = run_tributary(db.url(), std::move(args), 2).err;
        INFO(err);
        CHECK(err.find(says) != std::string::npos);
    };
    refused({"--paginate", "pages"}, "--paginate 'pages'");
    refused({"--paginate", "cursor"}, "--next");  // where is the token?
    refused({"--paginate", "time"}, "--time-field");
    refused({"--paginate", "page", "--next", "/next"}, "--next does not apply to --paginate page");
    refused({"--lookback", "5m"}, "--lookback does not apply");
    refused({"--key", "/a", "--key", "/b"}, "composite keys");
    refused({"--records", "data"}, "--records");
    refused({"--paginate", "after-key", "--key", "/a~2"}, "--key");
    refused({"--paginate", "cursor", "--records", "/data", "--next", "/data/0/n"}, "lies within the records");
    refused({"--paginate", "after-key", "--after-id", "5"}, "--after-id");
    refused({"--paginate", "after-key", "--bearer-env", "1X"}, "--bearer-env");
    refused({"--paginate", "after-key", "--basic-env", "USER"}, "--basic-env");
    refused({"--paginate", "after-key", "--oauth2-token-url", "http://a.example/t"}, "--client-id-env");
    refused({"--paginate", "after-key", "--param", "=x"}, "--param");
    refused({"--paginate", "offset", "--inclusive"}, "--inclusive does not apply to --paginate offset");
    refused({"--inclusive", "--batch-size", "1"}, "--inclusive needs --batch-size 2 or more");
    CHECK(db.scalar("SELECT count(*) FROM tributary.sources") == "0");

    run_tributary(db.url(), {"source", "add", "s", "--url", "http://127.0.0.1:9/api", "--paginate", "cursor",
                             "--records", "/data", "--key", "/id", "--key", "/v", "--next", "/next", "--bearer-env",
                             "API_TOKEN", "--param", "channel=C1"});
    const auto listed = run_tributary(db.url(), {"source", "list", "--json"}).out;
    INFO(listed);
    CHECK(listed.find("\"paginate\": \"cursor\"") != std::string::npos);
    CHECK(listed.find("API_TOKEN") != std::string::npos);  // the variable's name, never a value
    CHECK(db.scalar("SELECT position FROM tributary.cursors") == "");

    run_tributary(db.url(), {"source", "add", "gte", "--url", "http://127.0.0.1:9/api", "--cursor-param", "id_gte",
                             "--inclusive", "--records", ""});
    CHECK(run_tributary(db.url(), {"source", "list", "--json"}).out.find("\"inclusive\": true") != std::string::npos);
}

TEST_CASE("status columns fit 19-digit cursors and counts") {
    TestDatabase db;
    run_tributary(db.url(),
                  {"source", "add", "big", "--url", "http://127.0.0.1:9/e", "--after-id", "9223372036854775807"});
    run_tributary(db.url(), {"source", "add", "small", "--url", "http://127.0.0.1:9/e"});
    db.exec("UPDATE tributary.cursors SET events_stored = 1234567890123456789");
    db.exec("UPDATE tributary.gates SET backlog = 9223372036854775807");
    const auto out = run_tributary(db.url(), {"status"}).out;
    INFO(out);
    std::vector<std::string> lines;
    std::istringstream in(out);
    // The sources' table: up to the blank line before the log's block.
    for (std::string line; std::getline(in, line) && !line.empty();) lines.push_back(line);
    REQUIRE(lines.size() == 3);
    // Right-aligned numbers: each value ends where its heading ends, with two
    // spaces before the next column.
    const auto end_of = [](const std::string& line, const std::string& text) { return line.find(text) + text.size(); };
    for (const auto& row : {lines[1], lines[2]}) {
        CHECK(row.find("9223372036854775807  ") != std::string::npos);
        CHECK(row.find("1234567890123456789  ") != std::string::npos);
    }
    const auto big = lines[1].find("big") == 0 ? lines[1] : lines[2];
    const auto small = lines[1].find("small") == 0 ? lines[1] : lines[2];
    CHECK(end_of(big, "9223372036854775807") == end_of(lines[0], "CURSOR"));
    CHECK(end_of(small, "0  ") - 2 == end_of(lines[0], "CURSOR"));
    CHECK(end_of(big, "1234567890123456789") == end_of(lines[0], "STORED"));
}

TEST_CASE("/healthz and /metrics answer while 250 clients trickle requests that never end") {
    TestDatabase db;
    run_tributary(db.url(), {"source", "add", "s", "--url", "http://127.0.0.1:9/events"});
    ChildProcess loader(tributary_args(db.url(), {"run", "--workers", "1", "--listen", "127.0.0.1:0"}));
    const int port = std::stoi(wait_for_log(loader, R"(serving /metrics and /healthz on \S+ \(port (\d+)\))"));

    // Slow clients: a request head begun, then a byte now and then, never
    // finished. Each used to hold one of the server's 8 threads.
    std::vector<int> slow;
    for (int i = 0; i < 250; ++i) slow.push_back(open_connection(port, "GET /metrics HTTP/1.1\r\nHost: x\r\n"));
    for (const int fd : slow) ::send(fd, "X", 1, MSG_NOSIGNAL);
    const auto health = get(port, "/healthz");
    CHECK(health.status == 200);
    CHECK(health.body == "ok\n");
    const auto metrics = get(port, "/metrics");
    CHECK(metrics.status == 200);
    CHECK(metrics.body.find("tributary_passes_total") != std::string::npos);

    // A nudge without a body (`curl -X POST URL` sends no Content-Length) is
    // answered at once: no body is waited for, none is needed.
    const auto nudged = raw_exchange(port, "POST /sources/s/nudge HTTP/1.1\r\nHost: x\r\n\r\n");
    CHECK(nudged.rfind("HTTP/1.1 200 ", 0) == 0);
    CHECK(nudged.find("nudged s") != std::string::npos);
    // With an empty body, or a small one it does not use, the same.
    CHECK(raw_exchange(port, "POST /sources/s/nudge HTTP/1.1\r\nContent-Length: 0\r\n\r\n").rfind("HTTP/1.1 200 ", 0) ==
          0);
    CHECK(
        raw_exchange(port, "POST /sources/s/nudge HTTP/1.1\r\nContent-Length: 2\r\n\r\n{}").rfind("HTTP/1.1 200 ", 0) ==
        0);
    CHECK(raw_exchange(port, "GET /sources/s/nudge HTTP/1.1\r\n\r\n").rfind("HTTP/1.1 405 ", 0) == 0);
    const auto head = raw_exchange(port, "HEAD /healthz HTTP/1.1\r\n\r\n");
    CHECK(head.rfind("HTTP/1.1 200 ", 0) == 0);
    CHECK(head.find("Content-Length: 3\r\n") != std::string::npos);
    CHECK(head.substr(head.size() - 4) == "\r\n\r\n");  // no body
    CHECK(raw_exchange(port, "POST /sources/nobody/nudge HTTP/1.1\r\n\r\n").rfind("HTTP/1.1 404 ", 0) == 0);
    // A request line without a version: 400. Without even a space,
    // libmicrohttpd 0.9.75 closes the connection without a word.
    CHECK(raw_exchange(port, "GET /metrics\r\n\r\n").rfind("HTTP/1.1 400 ", 0) == 0);
    CHECK(raw_exchange(port, "nonsense\r\n\r\n").empty());
    CHECK(raw_exchange(port, "POST /sources/s/nudge HTTP/1.1\r\nContent-Length: 20000\r\n\r\n")
              .rfind("HTTP/1.1 413 ", 0) == 0);
    // Keep-alive: two requests on one connection, the second asking to close it.
    const auto two = raw_exchange(port,
                                  "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"
                                  "GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
                                  false);
    CHECK(two.rfind("HTTP/1.1 200 ", 0) == 0);
    CHECK(two.find("HTTP/1.1 200 ", 1) != std::string::npos);

    for (const int fd : slow) ::close(fd);
    loader.signal(SIGTERM);
    CHECK(loader.wait_for(15s) == 0);
}

TEST_CASE(
    "a nudge that waits on the database holds up neither /healthz nor /metrics, and is answered after, even when the "
    "loader stops") {
    TestDatabase db;
    run_tributary(db.url(), {"source", "add", "s", "--url", "http://127.0.0.1:9/events"});
    ChildProcess loader(tributary_args(db.url(), {"run", "--workers", "1", "--listen", "127.0.0.1:0"}));
    const int port = std::stoi(wait_for_log(loader, R"(serving /metrics and /healthz on \S+ \(port (\d+)\))"));

    // The nudge's UPDATE of the gate row waits for this transaction.
    pqxx::connection holder(db.url());
    pqxx::work held(holder);
    held.exec("SELECT 1 FROM tributary.gates FOR UPDATE");
    std::string nudged;
    std::thread nudger([&] { nudged = raw_exchange(port, "POST /sources/s/nudge HTTP/1.1\r\nHost: x\r\n\r\n"); });
    std::string waiting = "0";
    for (int i = 0; i < 200 && waiting == "0"; ++i, std::this_thread::sleep_for(25ms))
        waiting = db.scalar(
            "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE "
            "'%tributary.nudge_gate(%'");
    CHECK(waiting == "1");
    CHECK(get(port, "/healthz").status == 200);
    CHECK(get(port, "/metrics").status == 200);
    CHECK(nudged.empty());  // still waiting

    // Stopping while the nudge waits: its answer is not lost, and the
    // loader exits once it is sent.
    loader.signal(SIGTERM);
    wait_for_log(loader, " stopped\n");
    held.abort();
    nudger.join();
    INFO("the nudge's answer: " << nudged << "\nthe loader's log: " << loader.err());
    // Answered either way: nudged, or, when the stop took longer than a
    // session's lock_timeout (5 s: a loaded machine), refused for the lock
    // it could not get, with the usual 503 that says to try again.
    const bool answered_nudged = nudged.rfind("HTTP/1.1 200 ", 0) == 0 && nudged.find("nudged s") != std::string::npos;
    const bool answered_lock_timeout = nudged.rfind("HTTP/1.1 503 ", 0) == 0 &&
                                       nudged.find("try again") != std::string::npos &&
                                       loader.err().find("lock timeout") != std::string::npos;
    CHECK((answered_nudged || answered_lock_timeout));
    CHECK(loader.wait_for(15s) == 0);
}

TEST_CASE("past its room, the listen server closes the connection waiting longest, and /healthz still answers") {
    TestDatabase db;
    run_tributary(db.url(), {"source", "add", "s", "--url", "http://127.0.0.1:9/events"});
    // 128 descriptors: at most 64 connections, and past 48 each new one
    // closes the one that has waited longest for a request.
    auto args = tributary_args(db.url(), {"run", "--workers", "1", "--listen", "127.0.0.1:0"});
    args.insert(args.begin(), {"/bin/sh", "-c", "ulimit -n 128 && exec \"$@\"", "sh"});
    ChildProcess loader(args);
    const int port = std::stoi(wait_for_log(loader, R"(serving /metrics and /healthz on \S+ \(port (\d+)\))"));

    std::vector<int> slow;
    for (int i = 0; i < 100; ++i) slow.push_back(open_connection(port, "GET /metrics HTTP/1.1\r\nHost: x\r\n"));
    // Without room made, connections past 64 (this one too) would be refused.
    const auto health = get(port, "/healthz");
    CHECK(health.status == 200);
    CHECK(health.body == "ok\n");
    // The 100 were accepted before the probe: the first 53 made room.
    int closed = 0;
    for (int i = 0; i < 53; ++i) {
        timeval timeout{10, 0};
        ::setsockopt(slow[i], SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
        char byte;
        const auto n = ::recv(slow[i], &byte, 1, 0);
        closed += n == 0 || (n < 0 && errno == ECONNRESET);
    }
    CHECK(closed == 53);
    for (const int fd : slow) ::close(fd);
    loader.signal(SIGTERM);
    CHECK(loader.wait_for(15s) == 0);
}

TEST_CASE(
    "a session that is not a loader holds a source's lock: status and the log and the metric and /healthz say so") {
    TestDatabase db;
    run_tributary(db.url(), {"source", "add", "held", "--url", "http://127.0.0.1:9/events"});
    run_tributary(db.url(), {"source", "add", "free", "--url", "http://127.0.0.1:9/events"});
    // A role with no privilege on the schema, calling itself "tributary":
    // anyone can take an advisory lock, and set an application_name.
    db.exec(
        "DO $$ BEGIN CREATE ROLE tributary_stranger LOGIN; "
        "EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL; END $$");
    std::string url = db.url();
    url.replace(url.find("://") + 3, url.find('@') - url.find("://") - 3, "tributary_stranger");
    pqxx::connection stranger(url + (url.find('?') == std::string::npos ? "?" : "&") + "application_name=tributary");
    pqxx::nontransaction tx(stranger);
    // It cannot read our tables; the ids are small numbers, easily guessed.
    tx.exec("SELECT pg_advisory_lock(1953655138, " + db.scalar("SELECT id FROM tributary.sources WHERE name = 'held'") +
            ")");
    const int pid = stranger.backendpid();

    const auto status = status_by_name(db.url());
    INFO(status.dump(2));
    REQUIRE(status["held"]["locked_by"].is_object());
    CHECK(status["held"]["locked_by"]["pid"] == pid);
    CHECK(status["held"]["locked_by"]["user"] == "tributary_stranger");
    CHECK(status["held"]["locked_by"]["application"] == "tributary");
    CHECK(status["held"]["locked_by"]["since"].is_string());
    CHECK(status["held"]["locked_by"]["reason"] == "its role cannot run a loader");
    CHECK(status["free"]["locked_by"].is_null());
    const auto table = run_tributary(db.url(), {"status"}).out;
    CHECK_THAT(table, Catch::Contains("WARNING: held is locked by a session that is not a tributary loader") &&
                          Catch::Contains("pid " + std::to_string(pid)) &&
                          Catch::Contains("pg_terminate_backend(" + std::to_string(pid) + ")"));

    ChildProcess loader(tributary_args(db.url(), {"run", "--workers", "1", "--listen", "127.0.0.1:0"}));
    const int port = std::stoi(wait_for_log(loader, R"(serving /metrics and /healthz on \S+ \(port (\d+)\))"));
    const auto warned = wait_for_log(loader,
                                     "source=held worker=w1 locked by a session that is not a tributary "
                                     "loader \\(its role cannot run a loader\\): pid (\\d+), user "
                                     "tributary_stranger, application 'tributary'");
    CHECK(warned == std::to_string(pid));
    const std::string gauge = "tributary_source_locked_by_stranger{source=\"held\"}";
    double locked = -1;
    for (int i = 0; i < 100 && locked != 1; ++i, std::this_thread::sleep_for(50ms))
        locked = sample(get(port, "/metrics").body, gauge);
    CHECK(locked == 1);
    const auto health = get(port, "/healthz");
    CHECK(health.status == 200);  // the process is fine: restarting it would not help
    CHECK_THAT(health.body, Catch::StartsWith("ok\n") &&
                                Catch::Contains("warning: source held locked by pid " + std::to_string(pid)));

    // Unlocked: the next claim passes, and everything says so.
    tx.exec("SELECT pg_advisory_unlock_all()");
    for (int i = 0; i < 200 && locked != 0; ++i, std::this_thread::sleep_for(50ms))
        locked = sample(get(port, "/metrics").body, gauge);
    CHECK(locked == 0);
    CHECK(get(port, "/healthz").body == "ok\n");
    CHECK(status_by_name(db.url())["held"]["locked_by"].is_null());
    loader.signal(SIGTERM);
    CHECK(loader.wait_for(15s) == 0);
}

TEST_CASE("ids already stored behind the cursor: counted in tributary_store_conflicts_total and logged") {
    TestDatabase db;
    SourceServer server({"--sources", "1", "--prefix", "dup.src-", "--backlog", "5"});
    run_tributary(db.url(), {"source", "add", "dup.src-0", "--url", server.events_url("dup.src-0")});
    const auto truth = server.truth("dup.src-0");
    REQUIRE(truth.size() >= 2);
    // A writer that bypassed the loaders stored the second event already.
    db.exec("INSERT INTO tributary.events (source_id, event_id, payload) SELECT id, " + truth[1]["id"].dump() +
            ", '{}' FROM tributary.sources");
    ChildProcess loader(tributary_args(db.url(), {"run", "--workers", "1", "--listen", "127.0.0.1:0"}));
    const int port = std::stoi(wait_for_log(loader, R"(serving /metrics and /healthz on \S+ \(port (\d+)\))"));
    wait_for_log(loader, R"(source=dup\.src-0 worker=w1 store conflict \(duplicate_ids\))");
    const std::string series = "tributary_store_conflicts_total{reason=\"duplicate_ids\",source=\"dup.src-0\"}";
    double conflicts = -1;
    for (int i = 0; i < 100 && conflicts < 1; ++i, std::this_thread::sleep_for(50ms))
        conflicts = sample(get(port, "/metrics").body, series);
    CHECK(conflicts >= 1);
    CHECK(sample(get(port, "/metrics").body,
                 "tributary_store_conflicts_total{reason=\"cursor_moved\",source=\"dup.src-0\"}") == 0);
    CHECK(db.scalar("SELECT last_event_id FROM tributary.cursors") == "0");  // nothing stored
    loader.signal(SIGTERM);
    CHECK(loader.wait_for(15s) == 0);
}
