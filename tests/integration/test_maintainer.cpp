// The elected maintainer: the lease store's contract (PostgreSQL vs the fake the unit tests use),
// fenced transactions, and real `tributary maintain` / `run` processes competing for the lease,
// killed, stopped and continued. Tests wait for states (the lease row, the logs) with caps far past
// any machine's pace; nothing asserts how fast.

#include <catch2/catch.hpp>

#include <signal.h>

#include <memory>
#include <regex>
#include <string>
#include <thread>

#include "core/errors.h"
#include "postgres/maintainer_fence.h"
#include "postgres/postgres_lease_store.h"
#include "postgres/postgres_session.h"
#include "support/child_process.h"
#include "support/fake_lease_store.h"
#include "support/fakes.h"
#include "support/login_role.h"
#include "support/test_database.h"
#include "support/tributary_cli.h"

using namespace tributary;
using namespace tributary::testing;
using namespace std::chrono_literals;
using maintenance::MaintainerLease;

namespace {

/// Two maintainers' stores on one lease, and its fence.
class LeaseWorld {
public:
    virtual ~LeaseWorld() = default;
    virtual maintenance::LeaseStore& first() = 0;
    virtual maintenance::LeaseStore& second() = 0;
    /// Throws LeaseLost unless `lease` is the held one.
    virtual void fence(const MaintainerLease& lease) = 0;
    /// `by` has passed on the store's clock.
    virtual void pass(std::chrono::seconds by) = 0;
};

class FakeWorld : public LeaseWorld {
public:
    maintenance::LeaseStore& first() override { return store_; }
    maintenance::LeaseStore& second() override { return store_; }
    void fence(const MaintainerLease& lease) override { store_.fence(lease); }
    void pass(std::chrono::seconds by) override { clock_.advance(by); }

private:
    fakes::FakeClock clock_;
    fakes::FakeLeaseStore store_{clock_};
};

class PostgresWorld : public LeaseWorld {
public:
    maintenance::LeaseStore& first() override { return first_; }
    maintenance::LeaseStore& second() override { return second_; }
    void fence(const MaintainerLease& lease) override {
        fence_.run(lease, [](pqxx::work&) {});
    }
    void pass(std::chrono::seconds by) override {
        db_.exec("UPDATE tributary.maintainer_lease SET expires_at = expires_at - make_interval(secs => " +
                 std::to_string(by.count()) + ")");
    }

private:
    TestDatabase db_;
    postgres::PostgresSession a_{db_.url()}, b_{db_.url()}, c_{db_.url()};
    postgres::PostgresLeaseStore first_{a_}, second_{b_};
    postgres::MaintainerFence fence_{c_, 30s};
};

std::unique_ptr<LeaseWorld> world(const std::string& kind) {
    if (kind == "fake") return std::make_unique<FakeWorld>();
    return std::make_unique<PostgresWorld>();
}

/// Polls `done` until it holds; fails the test after `cap` (far past any machine's pace).
template <typename Done>
void wait_until(Done done, const std::string& what, std::chrono::seconds cap = 60s) {
    const auto deadline = std::chrono::steady_clock::now() + cap;
    while (!done()) {
        if (std::chrono::steady_clock::now() > deadline) FAIL("never happened: " << what);
        std::this_thread::sleep_for(50ms);
    }
}

std::string holder(const TestDatabase& db) {
    return db.scalar("SELECT holder FROM tributary.maintainer_lease WHERE expires_at > clock_timestamp()");
}

/// The holder name a process logged taking the lease with ("" if it did not).
std::string took_lease_as(const ChildProcess& p) {
    std::smatch m;
    const auto err = p.err();
    static const std::regex took("maintainer=(\\S+) took the lease");
    return std::regex_search(err, m, took) ? m[1].str() : "";
}

int count_of(const std::string& text, const std::string& what) {
    int n = 0;
    for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
}

std::vector<std::string> maintain_args(const TestDatabase& db) {
    // --no-herald: the herald, elected too, would log its own "took the lease".
    return tributary_args(db.url(), {"maintain", "--lease", "2s", "--interval", "1s", "--no-herald"});
}

}  // namespace

TEST_CASE(
    "maintainer lease contract: one holder; renewal keeps the token; a lapsed or released lease "
    "goes to the next with a greater one",
    "[maintainer]") {
    const std::string kind = GENERATE(as<std::string>{}, "fake", "PostgreSQL");
    SECTION(kind) {
        auto w = world(kind);
        const auto a = w->first().acquire("a", 30s);
        REQUIRE(a);
        CHECK_FALSE(w->second().acquire("b", 30s));
        CHECK(w->first().acquire("a", 30s) == a);
        CHECK_NOTHROW(w->fence({"a", *a}));
        CHECK_THROWS_AS(w->fence({"b", *a}), maintenance::LeaseLost);

        w->pass(31s);  // a's lease lapsed unrenewed
        CHECK_THROWS_AS(w->fence({"a", *a}), maintenance::LeaseLost);
        const auto b = w->second().acquire("b", 30s);
        REQUIRE(b);
        CHECK(*b > *a);
        CHECK_FALSE(w->first().acquire("a", 30s));
        w->first().release({"a", *a});  // not a's any more: nothing happens
        CHECK_FALSE(w->first().acquire("a", 30s));
        CHECK_NOTHROW(w->fence({"b", *b}));

        w->second().release({"b", *b});
        CHECK_THROWS_AS(w->fence({"b", *b}), maintenance::LeaseLost);
        const auto again = w->first().acquire("a", 30s);
        REQUIRE(again);
        CHECK(*again > *b);
    }
}

TEST_CASE("maintainer: a fenced transaction left idle (a stalled maintainer) is ended by the server", "[maintainer]") {
    TestDatabase db;
    postgres::PostgresSession lease_session(db.url()), session(db.url());
    postgres::PostgresLeaseStore store(lease_session);
    postgres::MaintainerFence fence(session, 3s);  // idle in a transaction: 1 s at most
    const auto token = store.acquire("stalled", 3s);
    REQUIRE(token);
    CHECK_THROWS_AS(
        fence.run({"stalled", *token},
                  [&](pqxx::work& tx) {
                      const auto pid = tx.exec1("SELECT pg_backend_pid()")[0].as<std::string>();
                      wait_until(
                          [&] { return db.scalar("SELECT count(*) FROM pg_stat_activity WHERE pid = " + pid) == "0"; },
                          "the idle fenced transaction's session ended");
                      tx.exec("SELECT 1");
                  }),
        DatabaseUnavailable);
}

TEST_CASE("maintain: of two processes one holds the lease; killed, the other takes over", "[maintainer]") {
    TestDatabase db;
    ChildProcess one(maintain_args(db)), two(maintain_args(db));
    wait_until([&] { return !took_lease_as(one).empty() || !took_lease_as(two).empty(); },
               "a maintainer took the lease");
    wait_until([&] { return holder(db) != ""; }, "the lease row names a holder");
    const bool one_holds = !took_lease_as(one).empty();
    ChildProcess& holding = one_holds ? one : two;
    ChildProcess& waiting = one_holds ? two : one;
    CHECK(holder(db) == took_lease_as(holding));
    CHECK(took_lease_as(waiting).empty());
    wait_for_log(waiting, "another maintainer holds the lease");

    holding.signal(SIGKILL);
    wait_until([&] { return !took_lease_as(waiting).empty(); }, "the other maintainer took over");
    CHECK(holder(db) == took_lease_as(waiting));

    waiting.signal(SIGTERM);
    REQUIRE(waiting.wait_for(60s) == 0);
    CHECK_THAT(waiting.err(), Catch::Contains("released the lease"));
    CHECK(holder(db) == "");  // released: free for the next at once
}

TEST_CASE("maintain: a stopped holder is replaced after its lease, and continued it acts no more", "[maintainer]") {
    TestDatabase db;
    ChildProcess first(maintain_args(db));
    wait_until([&] { return !took_lease_as(first).empty(); }, "the first maintainer took the lease");
    const auto first_token = db.scalar("SELECT token FROM tributary.maintainer_lease");
    ChildProcess second(maintain_args(db));
    wait_for_log(second, "another maintainer holds the lease");

    first.signal(SIGSTOP);
    wait_until([&] { return !took_lease_as(second).empty(); }, "the second took over");
    const auto second_token = db.scalar("SELECT token FROM tributary.maintainer_lease");
    CHECK(std::stoll(second_token) > std::stoll(first_token));
    wait_for_log(second, "step=partitions-ahead ok");

    first.signal(SIGCONT);
    wait_for_log(first, "lost the lease");
    // The lease stays the second's: the first neither took it back nor acted under its old token
    // (every action of a step is fenced with the token; the contract test shows a stale one refused).
    CHECK(holder(db) == took_lease_as(second));
    CHECK(db.scalar("SELECT token FROM tributary.maintainer_lease") == second_token);
    CHECK(count_of(first.err(), "took the lease") == 1);
    first.signal(SIGTERM);
    second.signal(SIGTERM);
    CHECK(first.wait_for(60s) == 0);
    CHECK(second.wait_for(60s) == 0);
}

TEST_CASE("maintain --once: acts when the lease is free, exits 0 without acting when it is held", "[maintainer]") {
    TestDatabase db;
    const auto free_run = run_tributary(db.url(), {"maintain", "--once"});
    CHECK_THAT(free_run.err, Catch::Contains("step=partitions-ahead ok"));
    CHECK_THAT(free_run.err, Catch::Contains("released the lease"));
    CHECK(holder(db) == "");

    db.exec("SELECT tributary.maintainer_acquire('elsewhere', '1 hour')");
    const auto token = db.scalar("SELECT token FROM tributary.maintainer_lease");
    const auto partitions = db.scalar("SELECT count(*) FROM tributary.partitions");
    const auto held_run = run_tributary(db.url(), {"maintain", "--once"});
    CHECK_THAT(held_run.err, Catch::Contains("another maintainer holds the lease"));
    CHECK_THAT(held_run.err, !Catch::Contains("step="));
    CHECK(holder(db) == "elsewhere");
    CHECK(db.scalar("SELECT token FROM tributary.maintainer_lease") == token);
    CHECK(db.scalar("SELECT count(*) FROM tributary.partitions") == partitions);
}

TEST_CASE("run takes the lease when it is free, and releases it when it stops; --no-maintain does not",
          "[maintainer]") {
    TestDatabase db;
    {
        ChildProcess opted_out(tributary_args(db.url(), {"run", "--no-maintain", "--workers", "1"}));
        wait_for_log(opted_out, "starting 1 worker");
        ChildProcess run(tributary_args(db.url(), {"run", "--workers", "1", "--maintainer-lease", "2s"}));
        wait_until([&] { return !took_lease_as(run).empty(); }, "run took the lease");
        CHECK(holder(db) == took_lease_as(run));
        CHECK(holder(db).find(":" + std::to_string(run.pid()) + ":") != std::string::npos);
        CHECK_THAT(opted_out.err(), !Catch::Contains("maintainer="));
        run.signal(SIGTERM);
        REQUIRE(run.wait_for(60s) == 0);
        CHECK(holder(db) == "");
        opted_out.signal(SIGTERM);
        CHECK(opted_out.wait_for(60s) == 0);
    }
}

TEST_CASE("run as a role outside tributary_maintainer loads as ever, and warns once", "[maintainer]") {
    TestDatabase db;
    LoginRole loader(db, "loader");
    run_tributary(db.url(), {"grant", "loader", loader.name()});
    ChildProcess run(tributary_args(as_user(db.url(), loader.name()), {"run", "--workers", "1"}));
    wait_for_log(run, "takes no part in maintaining the log");
    wait_for_log(run, "starting 1 worker");
    run.signal(SIGTERM);
    REQUIRE(run.wait_for(60s) == 0);
    CHECK(count_of(run.err(), "takes no part in maintaining the log") == 1);
    CHECK(holder(db) == "");

    // Granted the role, the same login maintains.
    run_tributary(db.url(), {"grant", "maintainer", loader.name()});
    const auto once = run_tributary(as_user(db.url(), loader.name()), {"maintain", "--once"});
    CHECK_THAT(once.err, Catch::Contains("step=partitions-ahead ok"));
}

TEST_CASE(
    "maintain: a holder stopped inside its fenced transaction loses it to the server, and the other "
    "takes over; continued, it commits nothing and acts no more",
    "[maintainer]") {
    TestDatabase db;
    // Hold the row observe_partitions locks first, so that the first maintainer's first pass waits
    // inside its fenced transaction (the lease row share-locked) until the test lets it go on.
    pqxx::connection blocker(db.url());
    pqxx::work blocking(blocker);
    blocking.exec("SELECT * FROM tributary.log_settings FOR UPDATE");
    const auto args = tributary_args(db.url(), {"maintain", "--lease", "6s", "--interval", "1s", "--no-herald"});
    ChildProcess first(args);
    std::string backend;
    wait_until(
        [&] {
            backend = db.scalar(
                "SELECT coalesce(min(pid)::text, '') FROM pg_stat_activity WHERE wait_event_type = "
                "'Lock' AND query LIKE '%observe_partitions%'");
            return !backend.empty();
        },
        "the first maintainer waits inside its fenced transaction");
    first.signal(SIGSTOP);
    blocking.commit();  // its statement finishes; its transaction now idles in a stopped process
    wait_until([&] { return db.scalar("SELECT count(*) FROM pg_stat_activity WHERE pid = " + backend) == "0"; },
               "the server ended the stopped maintainer's idle transaction");

    ChildProcess second(args);
    wait_until([&] { return !took_lease_as(second).empty(); }, "the second took over");
    const auto second_token = db.scalar("SELECT token FROM tributary.maintainer_lease");
    wait_for_log(second, "step=partitions-ahead ok");

    first.signal(SIGCONT);
    wait_for_log(first, "lost the lease");
    CHECK_THAT(first.err(), Catch::Contains("step=observe failed"));  // its COMMIT found the session gone
    CHECK(holder(db) == took_lease_as(second));
    CHECK(db.scalar("SELECT token FROM tributary.maintainer_lease") == second_token);
    CHECK(count_of(first.err(), "took the lease") == 1);
    first.signal(SIGTERM);
    second.signal(SIGTERM);
    CHECK(first.wait_for(60s) == 0);
    CHECK(second.wait_for(60s) == 0);
}
