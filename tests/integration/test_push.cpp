// Push, not poll (issue 7), on the loader's side: a running loader hears of
// new sources and nudges at once, never breaks a gate for a nudge, its
// commits are announced by the herald (issue 27), never by itself, and a
// stop ends its sleep at once.

#include <catch2/catch.hpp>

#include <atomic>
#include <csignal>
#include <sstream>
#include <thread>

#include <httplib.h>
#include <pqxx/pqxx>

#include "core/stop_signal.h"
#include "postgres/hint_channel.h"
#include "support/consume_rig.h"
#include "support/source_server.h"
#include "support/test_database.h"
#include "support/tributary_cli.h"

using namespace tributary::testing;
using namespace std::chrono_literals;

namespace {

std::int64_t now_us() {
    return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch())
        .count();
}

/// Arrival times (µs, wall clock) of the requests a source received.
std::vector<std::int64_t> arrivals(const SourceServer& server, const std::string& source) {
    std::vector<std::int64_t> times;
    for (const auto& r : server.requests(source)) times.push_back(r.at("arrival_us").get<std::int64_t>());
    std::sort(times.begin(), times.end());
    return times;
}

/// Waits for the first request to `source` that arrived after `after_us`; returns its delay in ms (-1: none).
double first_request_after(const SourceServer& server, const std::string& source, std::int64_t after_us,
                           std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
        for (const auto t : arrivals(server, source))
            if (t > after_us) return static_cast<double>(t - after_us) / 1000.0;
        std::this_thread::sleep_for(10ms);
    }
    return -1;
}

int post(int port, const std::string& path) {
    httplib::Client client("127.0.0.1", port);
    const auto res = client.Post(path.c_str(), "", "text/plain");
    return res ? res->status : 0;
}

}  // namespace

TEST_CASE("a running loader fetches a new source at once, without waiting for its schedule refresh", "[push]") {
    TestDatabase db;
    SourceServer server({"--sources", "2", "--prefix", "push.src-", "--backlog", "5"});
    run_tributary(db.url(), {"source", "add", "push.src-0", "--url", server.events_url("push.src-0")});
    ChildProcess loader(tributary_args(db.url(), {"run", "--workers", "2"}));
    REQUIRE(first_request_after(server, "push.src-0", 0, 10s) >= 0);
    std::this_thread::sleep_for(1500ms);  // asleep: the only source is idle

    const auto added_at = now_us();
    run_tributary(db.url(), {"source", "add", "push.src-1", "--url", server.events_url("push.src-1")});
    const auto delay_ms = first_request_after(server, "push.src-1", added_at, 10s);
    INFO("first request " << delay_ms << " ms after `source add`");
    CHECK(delay_ms >= 0);
    // What is asserted is which path woke it: the hint, not the schedule's
    // own refresh (5 s with hints). Half of that is the bound, whatever the
    // machine's speed; the same for every latency bound below.
    CHECK(delay_ms < 2500);
    loader.signal(SIGTERM);
    CHECK(loader.wait_for(15s) == 0);
}

TEST_CASE("a nudge asks an idle source at once; unknown names get 404; nudges never break the gate", "[push]") {
    TestDatabase db;
    SourceServer server({"--sources", "1", "--prefix", "nudge.src-", "--backlog", "0"});
    run_tributary(db.url(), {"source", "add", "nudge.src-0", "--url", server.events_url("nudge.src-0")});
    ChildProcess loader(tributary_args(db.url(), {"run", "--workers", "2", "--listen", "127.0.0.1:0"}));
    const int port = std::stoi(wait_for_log(loader, R"(serving /metrics and /healthz on \S+ \(port (\d+)\))"));
    // Empty answers in a row: 200, 400, 800, 1600 ms... after 3.5 s the next pause is at least 1.6 s.
    std::this_thread::sleep_for(3500ms);

    const auto nudged_at = now_us();
    CHECK(post(port, "/sources/nudge.src-0/nudge") == 200);
    const auto delay_ms = first_request_after(server, "nudge.src-0", nudged_at, 5s);
    INFO("first request " << delay_ms << " ms after the nudge");
    CHECK(delay_ms >= 0);
    CHECK(delay_ms < 1000);  // the idle pause it cut short is at least 1.6 s

    CHECK(post(port, "/sources/nudge.nobody/nudge") == 404);
    CHECK(post(port, "/sources/not%20a%20name/nudge") == 404);

    // A storm of nudges: still one request per 200 ms at most.
    const auto storm_start = now_us();
    const auto storm_end = std::chrono::steady_clock::now() + 2s;
    int nudges = 0;
    while (std::chrono::steady_clock::now() < storm_end) {
        CHECK(post(port, "/sources/nudge.src-0/nudge") == 200);
        ++nudges;
    }
    loader.signal(SIGTERM);
    CHECK(loader.wait_for(15s) == 0);
    std::vector<std::int64_t> during;
    for (const auto t : arrivals(server, "nudge.src-0"))
        if (t >= storm_start - 200000) during.push_back(t);
    INFO(nudges << " nudges, " << during.size() << " requests");
    CHECK(during.size() >= 5);
    for (std::size_t i = 1; i < during.size(); ++i) CHECK(during[i] - during[i - 1] >= 200000);
}

TEST_CASE("a loader's commits are announced by the herald with a watermark above them, never by the loader", "[push]") {
    TestDatabase db;
    SourceServer server({"--sources", "1", "--prefix", "hint.src-", "--backlog", "0", "--rate", "20"});
    run_tributary(db.url(), {"source", "add", "hint.src-0", "--url", server.events_url("hint.src-0")});
    pqxx::connection listener(db.url());
    struct Hints : pqxx::notification_receiver {
        std::vector<std::pair<std::string, int>> heard;  // payload, sender's server pid
        using pqxx::notification_receiver::notification_receiver;
        void operator()(const std::string& payload, int pid) override { heard.emplace_back(payload, pid); }
    } hints(listener, "tributary_events");
    ChildProcess loader(tributary_args(db.url(), {"run", "--workers", "1"}));
    const auto deadline = std::chrono::steady_clock::now() + 20s;
    while (hints.heard.size() < 3 && std::chrono::steady_clock::now() < deadline) listener.await_notification(1, 0);
    // Every hint came from the herald's session, and announced events that were readable.
    const auto herald_pid = db.scalar(
        "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND query LIKE '%herald_announce%'"
        " AND pid <> pg_backend_pid()");  // this query's own text matches too
    loader.signal(SIGTERM);
    CHECK(loader.wait_for(15s) == 0);
    REQUIRE(hints.heard.size() >= 3);
    std::size_t announcing_events = 0;  // the first may be the herald's start, before any event
    for (const auto& [watermark, pid] : hints.heard) {
        CHECK(std::to_string(pid) == herald_pid);
        if (db.scalar("SELECT count(*) FROM tributary.events WHERE tx_id < '" + watermark + "'::xid8") != "0")
            ++announcing_events;
    }
    CHECK(announcing_events >= hints.heard.size() - 1);
}

TEST_CASE("a loader alone sends no hints (run --no-herald)", "[push]") {
    TestDatabase db;
    SourceServer server({"--sources", "1", "--prefix", "quiet.src-", "--backlog", "0", "--rate", "20"});
    run_tributary(db.url(), {"source", "add", "quiet.src-0", "--url", server.events_url("quiet.src-0")});
    pqxx::connection listener(db.url());
    struct Hints : pqxx::notification_receiver {
        int received = 0;
        using pqxx::notification_receiver::notification_receiver;
        void operator()(const std::string&, int) override { ++received; }
    } hints(listener, "tributary_events");
    ChildProcess loader(tributary_args(db.url(), {"run", "--workers", "1", "--no-herald"}));
    const auto deadline = std::chrono::steady_clock::now() + 2s;
    while (std::chrono::steady_clock::now() < deadline) listener.await_notification(0, 200000);
    loader.signal(SIGTERM);
    CHECK(loader.wait_for(15s) == 0);
    CHECK(hints.received == 0);
    CHECK(std::stol(db.scalar("SELECT count(*) FROM tributary.events")) > 0);
}

TEST_CASE("SIGTERM ends a sleeping loader at once", "[push]") {
    TestDatabase db;
    SourceServer server({"--sources", "1", "--prefix", "sleep.src-", "--backlog", "0"});
    run_tributary(db.url(), {"source", "add", "sleep.src-0", "--url", server.events_url("sleep.src-0")});
    ChildProcess loader(tributary_args(db.url(), {"run", "--workers", "4"}));
    REQUIRE(first_request_after(server, "sleep.src-0", 0, 10s) >= 0);
    std::this_thread::sleep_for(2s);  // every worker asleep, for up to 5 s
    const auto start = std::chrono::steady_clock::now();
    loader.signal(SIGTERM);
    CHECK(loader.wait_for(15s) == 0);
    const auto took = std::chrono::steady_clock::now() - start;
    INFO("stopped in " << std::chrono::duration_cast<std::chrono::milliseconds>(took).count() << " ms");
    CHECK(took < 2500ms);  // woken by the stop, not by its timer (up to 5 s)
}

namespace {

/// What a loader does after a commit, done by hand: the events, then the hint.
void commit_and_hint(ConsumeRig& rig, const std::string& source, int count) {
    rig.add_events(source, count);
    rig.db().exec("SELECT pg_notify('tributary_events', '" + source + "')");
}

/// `consume` whose command records when it started, then the batch.
std::unique_ptr<ChildProcess> start_recording_consumer(ConsumeRig& rig, std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {"consume", "g", "--exec",
                                     "date +%s%6N >> " + rig.path("starts") + "; cat >> " + rig.path("out")};
    args.insert(args.end(), extra.begin(), extra.end());
    return std::make_unique<ChildProcess>(tributary_args(rig.url(), args));
}

/// Handler start times (µs) written by the recording consumer.
std::vector<std::int64_t> handler_starts(const ConsumeRig& rig) {
    std::vector<std::int64_t> starts;
    std::istringstream in(rig.read("starts"));
    for (std::string line; std::getline(in, line);)
        if (!line.empty()) starts.push_back(std::stoll(line));
    return starts;
}

}  // namespace

TEST_CASE("a consumer blocked in its wait starts the handler soon after a commit's hint", "[push]") {
    ConsumeRig rig;
    rig.add_sources({"p.one"});
    run_tributary(rig.url(), {"group", "create", "g", "--from", "beginning"});
    auto consumer = start_recording_consumer(rig);
    std::this_thread::sleep_for(3s);  // idle: its fallback timer has grown past 1 s
    for (int round = 1; round <= 3; ++round) {
        const auto committed_at = now_us();
        commit_and_hint(rig, "p.one", 5);
        REQUIRE(wait_until([&] { return handler_starts(rig).size() == static_cast<std::size_t>(round); }, 10s));
        const auto delay_ms = static_cast<double>(handler_starts(rig).back() - committed_at) / 1000.0;
        INFO("handler started " << delay_ms << " ms after the commit");
        CHECK(delay_ms < 800);  // about 20 ms here; its fallback timer has grown past 1 s
        std::this_thread::sleep_for(2s);
    }
    consumer->signal(SIGTERM);
    CHECK(consumer->wait_for(15s) == 0);
}

TEST_CASE("a hint lost while the consumer's listener was cut off is made up by the read on reconnect", "[push]") {
    ConsumeRig rig;
    rig.add_sources({"p.one"});
    run_tributary(rig.url(), {"group", "create", "g", "--from", "beginning"});
    auto consumer = start_recording_consumer(rig);
    std::this_thread::sleep_for(2s);
    // Cut the LISTEN connection; the hint sent meanwhile reaches nobody.
    rig.db().exec(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
        " WHERE datname = current_database() AND query LIKE 'LISTEN%'");
    const auto committed_at = now_us();
    commit_and_hint(rig, "p.one", 5);
    REQUIRE(wait_until([&] { return !handler_starts(rig).empty(); }, 10s));
    const auto delay_ms = static_cast<double>(handler_starts(rig).front() - committed_at) / 1000.0;
    INFO("handler started " << delay_ms << " ms after the commit");
    CHECK(delay_ms < 2500);  // reconnect after 0.5 s, then a read; the fallback would take 5 s
    consumer->signal(SIGTERM);
    CHECK(consumer->wait_for(15s) == 0);
}

TEST_CASE("SIGTERM ends a blocked consumer and a following tail at once", "[push]") {
    ConsumeRig rig;
    rig.add_sources({"p.one"});
    run_tributary(rig.url(), {"group", "create", "g"});
    auto consumer = start_recording_consumer(rig);
    ChildProcess tail(tributary_args(rig.url(), {"tail", "--follow"}));
    std::this_thread::sleep_for(2500ms);
    for (ChildProcess* child : {consumer.get(), &tail}) {
        const auto start = std::chrono::steady_clock::now();
        child->signal(SIGTERM);
        CHECK(child->wait_for(15s) == 0);
        const auto took = std::chrono::steady_clock::now() - start;
        INFO("stopped in " << std::chrono::duration_cast<std::chrono::milliseconds>(took).count() << " ms");
        CHECK(took < 2500ms);  // woken by the stop, not by its timer (up to 5 s)
    }
}

TEST_CASE("a NOTIFY flood costs a listening worker one wake-up per 50 ms and not one per notification", "[push]") {
    TestDatabase db;
    tributary::StopSignal stop;
    tributary::postgres::HintChannel hints(db.url(), {{"tributary_control"}, 50ms}, stop);
    // A worker's loop: each wake-up is one read of the schedule.
    std::atomic<std::uint64_t> reads{0};
    std::thread worker([&] {
        while (!stop.stop_requested()) {
            hints.wait(5s);
            ++reads;
        }
    });
    const auto deadline = std::chrono::steady_clock::now() + 20s;
    while (hints.wakeups() == 0 && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(10ms);
    REQUIRE(hints.wakeups() == 1);  // listening
    std::this_thread::sleep_for(100ms);
    const auto reads_before = reads.load();
    const auto wakeups_before = hints.wakeups();

    constexpr int kFlood = 20000;
    const auto start = std::chrono::steady_clock::now();
    {
        // Distinct payloads: PostgreSQL folds identical ones within a transaction.
        pqxx::connection stranger(db.url());
        pqxx::nontransaction tx(stranger);
        tx.exec("SELECT pg_notify('tributary_control', g::text) FROM generate_series(1, " + std::to_string(kFlood) +
                ") g");
    }
    while (hints.received() < kFlood && std::chrono::steady_clock::now() < deadline + 40s)
        std::this_thread::sleep_for(5ms);
    std::this_thread::sleep_for(100ms);  // the burst's last wake-up, owed at the end of its window
    const auto elapsed = std::chrono::steady_clock::now() - start;
    stop.request_stop();
    worker.join();

    REQUIRE(hints.received() == kFlood);
    const auto windows = static_cast<std::uint64_t>(elapsed / 50ms) + 1;
    const auto woken = hints.wakeups() - wakeups_before;
    const auto read = reads.load() - reads_before - 1;  // the stop's wake-up is not the flood's
    INFO(kFlood << " notifications in " << std::chrono::duration_cast<std::chrono::milliseconds>(elapsed).count()
                << " ms: " << woken << " wake-ups, " << read << " schedule reads");
    CHECK(woken >= 1);
    CHECK(woken <= windows);
    CHECK(read <= woken + static_cast<std::uint64_t>(elapsed / 5s));  // plus the wait's own timer
}

TEST_CASE("a NOTIFY flood costs a running loader one schedule read per 50 ms", "[push]") {
    TestDatabase db;
    ChildProcess loader(tributary_args(db.url(), {"run", "--workers", "2", "--listen", "127.0.0.1:0"}));
    const int port = std::stoi(wait_for_log(loader, R"(serving /metrics and /healthz on \S+ \(port (\d+)\))"));
    // Schedule reads: one per pass.
    const auto passes = [&] {
        httplib::Client client("127.0.0.1", port);
        const auto res = client.Get("/metrics");
        REQUIRE(res);
        const std::string series = "\ntributary_passes_total ";
        const auto at = res->body.find(series);
        REQUIRE(at != std::string::npos);
        return std::stod(res->body.substr(at + series.size()));
    };
    std::this_thread::sleep_for(500ms);  // started, asleep: there are no sources
    const double before = passes();
    const auto start = std::chrono::steady_clock::now();
    {
        pqxx::connection stranger(db.url());
        pqxx::nontransaction tx(stranger);
        tx.exec("SELECT pg_notify('tributary_control', g::text) FROM generate_series(1, 20000) g");
    }
    std::this_thread::sleep_for(500ms);
    const double after = passes();
    const auto elapsed = std::chrono::steady_clock::now() - start;
    loader.signal(SIGTERM);
    CHECK(loader.wait_for(15s) == 0);
    // Two workers, each woken at most once per 100 ms window: one read per
    // 50 ms for the process, plus the first wake-up and each worker's own
    // timer (5 s).
    const double bound = static_cast<double>(elapsed / 50ms) + 2 + 2.0 * (static_cast<double>(elapsed / 5s) + 1);
    INFO("20000 notifications: " << after - before << " schedule reads in "
                                 << std::chrono::duration_cast<std::chrono::milliseconds>(elapsed).count() << " ms");
    CHECK(after - before >= 1);
    CHECK(after - before <= bound);
}
