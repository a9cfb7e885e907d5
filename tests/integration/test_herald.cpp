// The herald (issue 27): the log announcer's contract (PostgreSQL vs the fake the unit tests
// use), and real processes competing for its lease: one acts, a killed or stopped one is
// replaced within its lease, a continued one acts no more, and with no herald at all consumers
// still read everything on their fallback. Tests wait for states with caps far past any
// machine's pace; nothing asserts how fast.

#include <catch2/catch.hpp>

#include <signal.h>

#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <pqxx/pqxx>

#include "maintenance/announce_step.h"
#include "maintenance/lease_store.h"
#include "postgres/postgres_lease_store.h"
#include "postgres/postgres_log_announcer.h"
#include "postgres/postgres_session.h"
#include "support/child_process.h"
#include "support/consume_rig.h"
#include "support/fake_lease_store.h"
#include "support/fake_log_announcer.h"
#include "support/fakes.h"
#include "support/source_server.h"
#include "support/test_database.h"
#include "support/tributary_cli.h"

using namespace tributary;
using namespace tributary::testing;
using namespace std::chrono_literals;
using maintenance::MaintainerLease;

namespace {

/// The log's head and the herald's lease, with writers' transactions.
class HeadWorld {
public:
    virtual ~HeadWorld() = default;
    virtual maintenance::LeaseStore& lease() = 0;
    virtual maintenance::LogAnnouncer& announcer() = 0;
    /// A writer's transaction begins (it has a transaction id, so it holds the watermark back).
    virtual int begin() = 0;
    /// It stores `events` events and commits.
    virtual void commit(int writer, int events) = 0;
    /// The lease lapses unrenewed.
    virtual void lapse() = 0;
    /// NOTIFYs heard so far, once `at_least` have been (or a cap has passed).
    virtual int notifications(int at_least) = 0;
};

class FakeWorld : public HeadWorld {
public:
    maintenance::LeaseStore& lease() override { return store_; }
    maintenance::LogAnnouncer& announcer() override { return log_; }
    int begin() override { return static_cast<int>(log_.begin()); }
    void commit(int writer, int events) override { log_.commit(static_cast<std::uint64_t>(writer), events); }
    void lapse() override { clock_.advance(1h); }
    int notifications(int) override { return log_.notifications; }

private:
    fakes::FakeClock clock_;
    fakes::FakeLeaseStore store_{clock_};
    fakes::FakeLogAnnouncer log_{store_};
};

class PostgresWorld : public HeadWorld {
public:
    PostgresWorld() {
        run_tributary(db_.url(), {"source", "add", "h.pub", "--published"});
        listener_.listen("tributary_events");
    }
    maintenance::LeaseStore& lease() override { return store_; }
    maintenance::LogAnnouncer& announcer() override { return announcer_; }
    int begin() override {
        writers_.push_back(std::make_unique<Writer>(db_.url()));
        writers_.back()->tx.exec("SELECT pg_current_xact_id()");
        return static_cast<int>(writers_.size()) - 1;
    }
    void commit(int writer, int events) override {
        auto& w = *writers_.at(static_cast<std::size_t>(writer));
        for (int i = 0; i < events; ++i)
            w.tx.exec("SELECT tributary.publish('h.pub', 'k" + std::to_string(++keys_) + "', '{}')");
        w.tx.commit();
    }
    void lapse() override { db_.exec("UPDATE tributary.herald_lease SET expires_at = clock_timestamp()"); }
    int notifications(int at_least) override {
        const auto deadline = std::chrono::steady_clock::now() + 20s;
        while (listener_.heard < at_least && std::chrono::steady_clock::now() < deadline)
            listener_.connection.await_notification(0, 100000);
        listener_.connection.await_notification(0, 200000);  // and none more on its way
        return listener_.heard;
    }

private:
    struct Writer {
        explicit Writer(const std::string& url) : connection(url), tx(connection) {}
        pqxx::connection connection;
        pqxx::work tx;
    };
    struct Listener {
        explicit Listener(const std::string& url) : connection(url) {}
        void listen(const std::string& channel) { receiver = std::make_unique<Counter>(connection, channel, heard); }
        struct Counter : pqxx::notification_receiver {
            Counter(pqxx::connection& c, const std::string& channel, int& n)
                : pqxx::notification_receiver(c, channel), n_(n) {}
            void operator()(const std::string&, int) override { ++n_; }
            int& n_;
        };
        pqxx::connection connection;
        std::unique_ptr<Counter> receiver;
        int heard = 0;
    };

    TestDatabase db_;
    postgres::PostgresSession session_{db_.url()};
    postgres::PostgresLeaseStore store_{session_, postgres::Lease::herald};
    postgres::PostgresLogAnnouncer announcer_{session_};
    std::vector<std::unique_ptr<Writer>> writers_;
    Listener listener_{db_.url()};
    int keys_ = 0;
};

std::unique_ptr<HeadWorld> world(const std::string& kind) {
    if (kind == "fake") return std::make_unique<FakeWorld>();
    return std::make_unique<PostgresWorld>();
}

/// The herald's lease holder now ("" when nobody holds it unexpired).
std::string herald(const TestDatabase& db) {
    return db.scalar(
        "SELECT coalesce((SELECT holder FROM tributary.herald_lease WHERE expires_at > clock_timestamp()), '')");
}

/// Server pids of the sessions that sent the notifications heard on tributary_events, in order.
class SenderLog : public pqxx::notification_receiver {
public:
    SenderLog(pqxx::connection& c) : pqxx::notification_receiver(c, "tributary_events") {}
    void operator()(const std::string&, int pid) override {
        if (pids.empty() || pids.back() != pid) pids.push_back(pid);
    }
    std::vector<int> pids;  ///< consecutive repeats folded: one entry per run of one sender
};

std::vector<std::string> maintain_args(const TestDatabase& db, std::vector<std::string> extra = {}) {
    std::vector<std::string> args{"maintain", "--interval", "1h", "--herald-lease", "1s"};
    args.insert(args.end(), extra.begin(), extra.end());
    return tributary_args(db.url(), args);
}

void publish(const TestDatabase& db, const std::string& key) {
    db.exec("SELECT tributary.publish('h.pub', '" + key + "', '{}')");
}

/// Publishes until a notification from a sender other than those in `seen` arrives; its pid.
int next_sender(const TestDatabase& db, pqxx::connection& listening, SenderLog& log, const std::set<int>& seen,
                int& keys) {
    const auto deadline = std::chrono::steady_clock::now() + 60s;
    while (std::chrono::steady_clock::now() < deadline) {
        publish(db, "n" + std::to_string(++keys));
        listening.await_notification(0, 100000);
        if (!log.pids.empty() && !seen.count(log.pids.back())) return log.pids.back();
    }
    FAIL("no notification from a new herald");
    return 0;
}

}  // namespace

TEST_CASE(
    "log announcer contract: announces on a new tenure, then only events that became readable; "
    "never behind an open writer; never without the lease",
    "[herald]") {
    const std::string kind = GENERATE(as<std::string>{}, "fake", "PostgreSQL");
    SECTION(kind) {
        auto w = world(kind);
        const auto token = w->lease().acquire("h", 30s);
        REQUIRE(token);
        const MaintainerLease held{"h", *token};
        auto& log = w->announcer();

        const auto first = log.announce(held, {});
        CHECK(first.announced);  // a new tenure: announces whatever the last holder may have missed
        const auto quiet = log.announce(held, first.watermarks);
        CHECK_FALSE(quiet.announced);
        REQUIRE(first.watermarks.size() == 1);  // one node
        REQUIRE(quiet.watermarks.size() == 1);
        CHECK(quiet.watermarks[0] >= first.watermarks[0]);
        CHECK(w->notifications(1) == 1);

        const auto slow = w->begin();
        const auto fast = w->begin();
        w->commit(fast, 2);  // committed, behind `slow`'s watermark: not readable yet
        const auto held_back = log.announce(held, quiet.watermarks);
        CHECK_FALSE(held_back.announced);
        CHECK(w->notifications(1) == 1);
        w->commit(slow, 0);
        const auto readable = log.announce(held, held_back.watermarks);
        CHECK(readable.announced);
        CHECK(readable.watermarks.at(0) > held_back.watermarks.at(0));
        CHECK(w->notifications(2) == 2);

        const auto empty = w->begin();
        w->commit(empty, 0);  // a transaction that stored nothing
        CHECK_FALSE(log.announce(held, readable.watermarks).announced);

        w->lapse();
        const auto after = w->begin();
        w->commit(after, 1);
        CHECK_THROWS_AS(log.announce(held, readable.watermarks), maintenance::LeaseLost);
        CHECK_THROWS_AS(log.announce({"other", *token}, {}), maintenance::LeaseLost);
        CHECK(w->notifications(2) == 2);
        const auto again = w->lease().acquire("h", 30s);
        REQUIRE(again);
        CHECK(*again > *token);
    }
}

TEST_CASE("herald: of two processes one announces; killed -9, the other takes over within its lease", "[herald]") {
    TestDatabase db;
    run_tributary(db.url(), {"source", "add", "h.pub", "--published"});
    pqxx::connection listening(db.url());
    SenderLog log(listening);
    listening.get_notifs();
    ChildProcess a(maintain_args(db)), b(maintain_args(db));
    REQUIRE(wait_until([&] { return !herald(db).empty(); }, 30s));
    int keys = 0;
    const int first = next_sender(db, listening, log, {}, keys);
    // Only the holder sends: more events, still one sender.
    for (int i = 0; i < 20; ++i) {
        publish(db, "more" + std::to_string(i));
        listening.await_notification(0, 20000);
    }
    CHECK(log.pids == std::vector<int>{first});

    const auto holder = herald(db);
    ChildProcess& killed = a.err().find("herald=" + holder + " took the lease") != std::string::npos ? a : b;
    ChildProcess& standby = &killed == &a ? b : a;
    killed.signal(SIGKILL);
    killed.wait_for(10s);
    const int second = next_sender(db, listening, log, {first}, keys);
    CHECK(second != first);
    CHECK(log.pids == std::vector<int>{first, second});
    CHECK(herald(db) != holder);
    CHECK(standby.err().find("took the lease") != std::string::npos);
    standby.signal(SIGTERM);
    CHECK(standby.wait_for(15s) == 0);
}

TEST_CASE("herald: a stopped holder is replaced after its lease and, continued, announces no more", "[herald]") {
    TestDatabase db;
    run_tributary(db.url(), {"source", "add", "h.pub", "--published"});
    pqxx::connection listening(db.url());
    SenderLog log(listening);
    listening.get_notifs();
    ChildProcess a(maintain_args(db, {"--no-herald"}));  // a maintainer only: the lease is b's or c's
    ChildProcess b(maintain_args(db, {"--no-herald"}));
    b.signal(SIGTERM);
    b.wait_for(15s);
    ChildProcess first_herald(maintain_args(db));
    REQUIRE(wait_until([&] { return !herald(db).empty(); }, 30s));
    int keys = 0;
    const int first = next_sender(db, listening, log, {}, keys);

    first_herald.signal(SIGSTOP);
    ChildProcess second_herald(maintain_args(db));
    const int second = next_sender(db, listening, log, {first}, keys);
    first_herald.signal(SIGCONT);
    // Continued, it finds the lease gone at its next beat (or renewal) and says so.
    REQUIRE(wait_until([&] { return first_herald.err().find("lost the lease") != std::string::npos; }, 30s));
    for (int i = 0; i < 20; ++i) {
        publish(db, "after" + std::to_string(i));
        listening.await_notification(0, 20000);
    }
    CHECK(log.pids == std::vector<int>{first, second});  // never the stopped one again
    for (ChildProcess* p : {&a, &first_herald, &second_herald}) {
        p->signal(SIGTERM);
        CHECK(p->wait_for(15s) == 0);
    }
}

TEST_CASE("herald: with none at all (every process --no-herald), consumers read every event on their fallback",
          "[herald]") {
    ConsumeRig rig;
    run_tributary(rig.url(), {"source", "add", "h.pub", "--published"});
    run_tributary(rig.url(), {"group", "create", "g", "--pattern", "h.pub", "--from", "beginning"});
    ChildProcess consumer(tributary_args(
        rig.url(), {"consume", "g", "--no-herald", "--idle-poll", "1s", "--exec", "cat >> " + rig.path("out")}));
    pqxx::connection listening(rig.url());
    SenderLog log(listening);
    listening.get_notifs();
    for (int i = 0; i < 5; ++i) {
        rig.db().exec("SELECT tributary.publish('h.pub', 'k" + std::to_string(i) + "', '{}')");
        REQUIRE(wait_until([&] { return rig.lines("out").size() == static_cast<std::size_t>(i + 1); }, 60s));
    }
    listening.await_notification(0, 100000);
    CHECK(log.pids.empty());  // nobody announced: the fallback read them
    CHECK(rig.db().scalar("SELECT count(*) FROM tributary.herald_lease WHERE holder IS NOT NULL") == "0");
    consumer.signal(SIGTERM);
    CHECK(consumer.wait_for(15s) == 0);
}

TEST_CASE("herald: bad flags are usage errors", "[herald]") {
    TestDatabase db;
    for (const auto& flags : std::vector<std::vector<std::string>>{
             {"--herald-lease", "500ms"}, {"--herald-interval", "0s"}, {"--herald-interval", "1s"}}) {
        std::vector<std::string> args{"maintain"};
        args.insert(args.end(), flags.begin(), flags.end());
        const auto r = run_tributary(db.url(), args, 2);
        INFO(flags[0] << " " << flags[1] << ": " << r.err);
        CHECK(r.err.find(flags[0]) != std::string::npos);
    }
}

TEST_CASE("herald: consumers with an hour's fallback are woken for pulled and published events", "[herald]") {
    ConsumeRig rig;
    SourceServer server({"--sources", "1", "--prefix", "hp.src-", "--backlog", "3", "--rate", "0"});
    run_tributary(rig.url(), {"source", "add", "h.pub", "--published"});
    run_tributary(rig.url(), {"group", "create", "g", "--from", "beginning"});
    // Only the herald (in `maintain`) may wake the consumer: its fallback is an hour, it heralds
    // not itself, and the loader neither.
    ChildProcess herald_process(maintain_args(rig.db()));
    REQUIRE(wait_until([&] { return !herald(rig.db()).empty(); }, 30s));
    ChildProcess consumer(tributary_args(
        rig.url(), {"consume", "g", "--no-herald", "--idle-poll", "1h", "--exec", "cat >> " + rig.path("out")}));
    REQUIRE(wait_until(
        [&] {
            return rig.db().scalar(
                       "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
                       " AND query LIKE 'LISTEN%'") != "0";
        },
        20s));
    // Published: one at a time, each read before the next (the consumer's start-up read is over).
    for (int i = 0; i < 3; ++i) {
        rig.db().exec("SELECT tributary.publish('h.pub', 'p" + std::to_string(i) + "', '{}')");
        REQUIRE(wait_until([&] { return rig.lines("out").size() == static_cast<std::size_t>(i + 1); }, 60s));
    }
    // Pulled: a loader that heralds not.
    run_tributary(rig.url(), {"source", "add", "hp.src-0", "--url", server.events_url("hp.src-0")});
    ChildProcess loader(tributary_args(rig.url(), {"run", "--workers", "1", "--no-herald", "--no-maintain"}));
    REQUIRE(wait_until([&] { return rig.lines("out").size() == 6; }, 60s));
    for (ChildProcess* p : {&loader, &consumer, &herald_process}) {
        p->signal(SIGTERM);
        CHECK(p->wait_for(15s) == 0);
    }
}
