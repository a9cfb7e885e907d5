#include <catch2/catch.hpp>

#include "core/errors.h"
#include "core/loader.h"
#include "support/fakes.h"

using namespace tributary;
using namespace tributary::fakes;
using namespace std::chrono_literals;

namespace {

/// A loader on fakes, with two sources (ids 1 and 2).
struct Rig {
    FakeClock clock;
    FakeLoaderDatabase db;
    FakeSourceTurn turn{db, clock};
    FakeEventFetcher fetcher;
    FakeSourceCatalog catalog{db, clock};
    StopSignal stop;
    Loader loader;

    Rig() : loader({catalog, turn, fetcher, clock}, options(), stop) {
        catalog.add(1, "orders.eu");
        catalog.add(2, "orders.us");
    }
    static LoaderOptions options() {
        LoaderOptions o;
        o.worker = "w1";
        return o;
    }
    const Source& source(int id) { return catalog.sources.at(static_cast<std::size_t>(id - 1)); }
    /// Moves time past every source's interval.
    PassSummary pass_later() {
        clock.advance(1s);
        return loader.run_once();
    }
};

}  // namespace

TEST_CASE("the loader stores each source's backlog in batches and advances the cursor") {
    Rig rig;
    rig.fetcher.produce(1, 1, 2500);
    rig.fetcher.produce(2, 1, 10);

    auto first = rig.loader.run_once();
    CHECK(first.events_stored == 1010);
    CHECK(rig.db.cursors[1] == 1000);
    CHECK(rig.db.cursors[2] == 10);

    rig.pass_later();
    auto third = rig.pass_later();
    CHECK(third.events_stored == 500);
    CHECK(rig.db.cursors[1] == 2500);
    REQUIRE(rig.db.events[1].size() == 2500);
    CHECK(rig.db.events[1].front().id == 1);
    CHECK(rig.db.events[1].back().payload == "{\"n\":2500}");

    auto idle = rig.pass_later();
    CHECK(idle.events_stored == 0);
    CHECK(idle.empty == 2);
    CHECK(idle.caught_up());
}

TEST_CASE("a source whose lock another worker holds is skipped without a request") {
    Rig rig;
    rig.fetcher.produce(1, 1, 5);
    rig.db.lock_as_stranger(1);

    auto turn = rig.loader.load_source(rig.source(1));
    CHECK(turn.outcome == SourceOutcome::locked);
    CHECK(rig.fetcher.fetches == 0);
    CHECK(rig.turn.passes == 0);
    CHECK(rig.db.cursors[1] == 0);
}

TEST_CASE("the gate holds a source until its interval has passed") {
    Rig rig;
    rig.fetcher.produce(1, 1, 5);
    CHECK(rig.loader.load_source(rig.source(1)).outcome == SourceOutcome::stored);
    rig.fetcher.produce(1, 6, 5);

    CHECK(rig.loader.load_source(rig.source(1)).outcome == SourceOutcome::not_due);
    CHECK(rig.fetcher.fetches == 1);
    rig.clock.advance(199ms);
    CHECK(rig.loader.load_source(rig.source(1)).outcome == SourceOutcome::not_due);
    rig.clock.advance(1ms);
    CHECK(rig.loader.load_source(rig.source(1)).outcome == SourceOutcome::stored);
    CHECK(rig.turn.locks_released == rig.turn.locks_taken);
}

TEST_CASE("the lock is released on every path out of a source's turn") {
    Rig rig;
    rig.fetcher.produce(1, 1, 5);

    SECTION("fetcher throws") {
        rig.fetcher.throw_on_fetch = [](int) { throw std::runtime_error("boom"); };
        CHECK(rig.loader.load_source(rig.source(1)).outcome == SourceOutcome::failed);
        CHECK(rig.db.gates[1].state == "transient");
        CHECK(rig.db.gates[1].last_error.find("boom") != std::string::npos);
    }
    SECTION("store refuses the content") {
        rig.turn.fail_next_append = [] { throw BatchRejected("unsupported Unicode escape sequence"); };
        CHECK(rig.loader.load_source(rig.source(1)).outcome == SourceOutcome::failed);
        CHECK(rig.db.gates[1].state == "failing");
        CHECK(rig.db.gates[1].last_error.find("PostgreSQL refused the batch") != std::string::npos);
    }
    SECTION("database goes away during the append") {
        rig.turn.fail_next_append = [] { throw DatabaseUnavailable("connection lost"); };
        CHECK_THROWS_AS(rig.loader.run_once(), DatabaseUnavailable);
        // The lock died with the session; the slot is closed when the
        // database is back (a fake's lock outlives it until then).
        rig.fetcher.available.clear();
        rig.loader.run_once();
    }
    SECTION("gate throws") {
        rig.turn.fail_claim = true;
        CHECK_THROWS_AS(rig.loader.load_source(rig.source(1)), DatabaseUnavailable);
    }
    CHECK_FALSE(rig.turn.holds(1));
    CHECK(rig.db.events[1].empty());
}

TEST_CASE("a privilege refused mid-run stops the worker rather than failing the source at every pass") {
    Rig rig;
    rig.fetcher.produce(1, 1, 10);
    rig.fetcher.produce(2, 1, 10);
    rig.turn.fail_next_append = [] { throw PermissionDenied("permission denied for table events"); };
    // Not recorded as the source's failure (no grant comes by backing off), and not skipped for the
    // next source: the pass, and Loader::run, end on it.
    CHECK_THROWS_AS(rig.loader.run_once(), PermissionDenied);
    CHECK(rig.turn.failures == 0);
    CHECK(rig.turn.appends == 1);

    Rig running;
    running.fetcher.produce(1, 1, 10);
    running.turn.fail_next_append = [] { throw PermissionDenied("permission denied for table events"); };
    running.clock.on_sleep = [&] {
        if (running.clock.sleeps.size() == 5) running.stop.request_stop();  // never reached, unless it retried
    };
    CHECK_THROWS_AS(running.loader.run(false), PermissionDenied);
    CHECK(running.clock.sleeps.empty());
}

TEST_CASE("a failing source backs off while the others keep loading") {
    Rig rig;
    rig.fetcher.produce(2, 1, 3000);
    rig.fetcher.scripted[1].push_back(FetchResult::failure(FetchResult::Status::failing, "HTTP 404 Not Found"));

    auto first = rig.loader.run_once();
    CHECK(first.failed == 1);
    CHECK(first.stored == 1);
    CHECK(rig.db.gates[1].state == "failing");
    CHECK(rig.db.gates[1].failures == 1);

    rig.pass_later();
    auto third = rig.pass_later();
    CHECK(third.sources == 1);  // a wrong source waits at least a minute: not even visited
    CHECK(rig.db.gates[1].failures == 1);
    CHECK(rig.db.cursors[2] == 3000);
    CHECK(rig.fetcher.fetches == 4);
}

TEST_CASE("Retry-After is honoured through the gate") {
    Rig rig;
    rig.fetcher.produce(1, 1, 5);
    rig.fetcher.scripted[1].push_back(FetchResult::failure(FetchResult::Status::throttled, "HTTP 429", 30s));

    CHECK(rig.loader.load_source(rig.source(1)).outcome == SourceOutcome::failed);
    rig.clock.advance(29s);
    CHECK(rig.loader.load_source(rig.source(1)).outcome == SourceOutcome::backing_off);
    rig.clock.advance(1s);
    CHECK(rig.loader.load_source(rig.source(1)).outcome == SourceOutcome::stored);
    CHECK(rig.db.gates[1].failures == 0);
}

TEST_CASE("transient failures back off exponentially with jitter, capped") {
    Rig rig;
    for (int i = 0; i < 12; ++i)
        rig.fetcher.scripted[1].push_back(FetchResult::failure(FetchResult::Status::transient, "HTTP 503"));
    for (int i = 1; i <= 12; ++i) {
        rig.clock.advance(2min);
        CHECK(rig.loader.load_source(rig.source(1)).outcome == SourceOutcome::failed);
        CHECK(rig.db.gates[1].failures == i);
        const auto wait = rig.db.gates[1].next_allowed - rig.clock.now();
        CHECK(wait >= 200ms);  // never sooner than the interval
        CHECK(wait <= 60s);
    }
}

TEST_CASE("a batch that breaks the protocol is refused whole") {
    Rig rig;
    rig.db.cursors[1] = 10;
    SECTION("ids not increasing") {
        rig.fetcher.scripted[1].push_back(FetchResult::batch({{11, "1"}, {13, "1"}, {12, "1"}}));
    }
    SECTION("id at the cursor") { rig.fetcher.scripted[1].push_back(FetchResult::batch({{10, "1"}, {11, "1"}})); }
    CHECK(rig.loader.load_source(rig.source(1)).outcome == SourceOutcome::failed);
    CHECK(rig.db.gates[1].state == "failing");
    CHECK(rig.turn.appends == 0);
    CHECK(rig.db.cursors[1] == 10);
}

TEST_CASE("a batch longer than the batch size is cut to it") {
    Rig rig;
    rig.catalog.sources[0].batch_size = 3;
    rig.fetcher.scripted[1].push_back(FetchResult::batch({{1, "1"}, {2, "1"}, {3, "1"}, {4, "1"}}));
    CHECK(rig.loader.load_source(rig.source(1)).events == 3);
    CHECK(rig.db.cursors[1] == 3);
}

TEST_CASE("a cursor moved by another writer rolls the batch back") {
    Rig rig;
    rig.fetcher.produce(1, 1, 5);
    rig.turn.before_compare_and_set = [&](int id) { rig.db.cursors[id] = 2; };
    CHECK(rig.loader.load_source(rig.source(1)).outcome == SourceOutcome::conflict);
    CHECK(rig.db.events[1].empty());
    CHECK(rig.db.cursors[1] == 2);
}

TEST_CASE("a fetch abandoned for a stop stores nothing and frees the gate") {
    Rig rig;
    rig.fetcher.scripted[1].push_back(FetchResult::failure(FetchResult::Status::stopped, "stopping"));
    CHECK(rig.loader.load_source(rig.source(1)).outcome == SourceOutcome::stopped);
    CHECK(rig.turn.appends == 0);
    CHECK(rig.db.gates[1].failures == 0);
    CHECK_FALSE(rig.turn.holds(1));
}

TEST_CASE("a request the fetcher did not send for being too late after the claim stores nothing and frees the gate") {
    Rig rig;
    rig.fetcher.scripted[1].push_back(FetchResult::failure(FetchResult::Status::late, "too long since the claim"));
    CHECK(rig.loader.load_source(rig.source(1)).outcome == SourceOutcome::conflict);
    CHECK(rig.turn.appends == 0);
    CHECK(rig.db.gates[1].failures == 0);
    CHECK_FALSE(rig.turn.holds(1));
}

TEST_CASE("an idle loader sleeps until the next source is due; empty answers stretch the pauses") {
    Rig rig;
    using ms = std::chrono::milliseconds;
    rig.clock.on_sleep = [&] {
        if (rig.clock.sleeps.size() == 5) rig.fetcher.produce(1, 1, 5);
        if (rig.clock.sleeps.size() == 9) rig.stop.request_stop();
    };
    rig.loader.run(false);
    // 200, 400, 800, then 1 600 ms, read again after at most 1 s; the
    // schedule is re-read at least once a second.
    REQUIRE(rig.clock.sleeps.size() >= 5);
    CHECK(std::vector<ms>(rig.clock.sleeps.begin(), rig.clock.sleeps.begin() + 5) ==
          std::vector<ms>{ms(200), ms(400), ms(800), ms(1000), ms(600)});
    // Events came: stored at the source's next due time; then the source is
    // asked again after its interval, and a new streak starts from there.
    CHECK(rig.db.cursors[1] == 5);
    REQUIRE(rig.clock.sleeps.size() == 9);
    CHECK(std::vector<ms>(rig.clock.sleeps.begin() + 5, rig.clock.sleeps.end()) ==
          std::vector<ms>{ms(200), ms(200), ms(400), ms(800)});
    CHECK(rig.db.gates[2].empty_streak >= 5);
}

TEST_CASE("idle polling doubles the pause per empty answer, up to the cap") {
    IdlePolling polling(10s);
    using ms = std::chrono::milliseconds;
    std::vector<ms> pauses;
    for (int streak = 1; streak <= 8; ++streak) pauses.push_back(polling.pause(200ms, streak));
    CHECK(pauses == std::vector<ms>{ms(200), ms(400), ms(800), ms(1600), ms(3200), ms(6400), ms(10000), ms(10000)});
    CHECK(polling.pause(30s, 5) == 30s);  // an interval above the cap stays the interval
    CHECK(polling.pause(200ms, 1000) == 10s);
}

TEST_CASE("until-idle stops after a pass that found nothing") {
    Rig rig;
    rig.fetcher.produce(1, 1, 2500);
    rig.loader.run(true);
    CHECK(rig.db.cursors[1] == 2500);
}

TEST_CASE("the loader rides out a database outage") {
    Rig rig;
    rig.fetcher.produce(1, 1, 5);
    rig.turn.fail_claim = true;
    rig.clock.on_sleep = [&] {
        if (rig.clock.sleeps.size() == 3) rig.turn.fail_claim = false;
        if (rig.db.cursors[1] == 5) rig.stop.request_stop();
    };
    rig.loader.run(false);
    CHECK(rig.db.cursors[1] == 5);
    CHECK(rig.clock.sleeps.at(0) == 500ms);
    CHECK(rig.clock.sleeps.at(1) == 1000ms);
}

TEST_CASE("a slot reserved when the database went away is closed once it is back") {
    Rig rig;
    rig.fetcher.produce(1, 1, 5);
    rig.turn.fail_next_append = [] { throw DatabaseUnavailable("connection lost mid-batch"); };
    CHECK_THROWS_AS(rig.loader.run_once(), DatabaseUnavailable);
    // Without the release the source would wait out the whole lease (timeout + interval).
    CHECK(rig.db.gates[1].next_allowed > rig.clock.now() + 5s);
    rig.loader.run_once();  // the database answers: the slot is closed at the interval
    CHECK(rig.db.gates[1].next_allowed <= rig.clock.now() + rig.source(1).interval);
    const auto next = rig.pass_later();
    CHECK(rig.db.cursors[1] == 5);
    CHECK(next.stored == 1);
}

TEST_CASE("a failure's backoff survives the connection dying while it is recorded") {
    using Loss = FakeSourceTurn::CloseLoss;
    for (const auto loss : {Loss::before, Loss::after}) {
        Rig rig;
        rig.fetcher.scripted[1].push_back(FetchResult::failure(FetchResult::Status::throttled, "HTTP 429", 30s));
        rig.turn.lose_next_close = loss;
        CHECK_THROWS_AS(rig.loader.run_once(), DatabaseUnavailable);
        rig.loader.run_once();  // the database answers: the same close, replayed once
        CHECK(rig.db.gates[1].next_allowed >= rig.clock.now() + 29s);  // Retry-After kept
        CHECK(rig.db.gates[1].failures == 1);                          // counted once
        CHECK(rig.db.gates[1].state == "throttled");
    }
}

TEST_CASE("a source another worker found empty a moment ago counts as caught up") {
    Rig rig;
    rig.fetcher.produce(1, 1, 5);
    CHECK(rig.loader.load_source(rig.source(1)).outcome == SourceOutcome::stored);
    CHECK(rig.loader.load_source(rig.source(1)).outcome == SourceOutcome::not_due);  // full batch: maybe more
    rig.clock.advance(1s);
    CHECK(rig.loader.load_source(rig.source(1)).outcome == SourceOutcome::empty);
    CHECK(rig.loader.load_source(rig.source(1)).outcome == SourceOutcome::empty);  // gated, but drained
    CHECK(rig.fetcher.fetches == 2);
}

TEST_CASE("a stop while a failing source is asked keeps its backoff") {
    Rig rig;
    rig.fetcher.scripted[1].push_back(FetchResult::failure(FetchResult::Status::transient, "HTTP 503"));
    rig.fetcher.scripted[1].push_back(FetchResult::failure(FetchResult::Status::stopped, "stopping"));
    CHECK(rig.loader.load_source(rig.source(1)).outcome == SourceOutcome::failed);
    rig.clock.advance(2min);
    CHECK(rig.loader.load_source(rig.source(1)).outcome == SourceOutcome::stopped);
    CHECK(rig.db.gates[1].failures == 1);
    CHECK(rig.db.gates[1].state == "transient");
}

TEST_CASE("an unexpected store error closes the slot with a backoff and a cause") {
    Rig rig;
    rig.fetcher.produce(1, 1, 5);
    rig.turn.fail_next_append = [] { throw std::runtime_error("could not serialize access"); };
    const auto turn = rig.loader.load_source(rig.source(1));
    CHECK(turn.outcome == SourceOutcome::failed);
    CHECK(turn.failure == FailureClass::store);
    CHECK(rig.db.gates[1].state == "transient");
    CHECK_THAT(rig.db.gates[1].last_error, Catch::Contains("could not serialize access"));
    CHECK_FALSE(rig.turn.holds(1));
}

TEST_CASE("a pass that fails for another reason than an outage is retried, the worker lives on") {
    Rig rig;
    rig.fetcher.produce(1, 1, 5);
    struct FlakyCatalog : SourceCatalog {
        FakeSourceCatalog& real;
        int calls = 0;
        explicit FlakyCatalog(FakeSourceCatalog& r) : real(r) {}
        SourceSchedule schedule(const ScheduleShare& share) override {
            if (++calls <= 2) throw std::runtime_error("canceling statement due to lock timeout");
            return real.schedule(share);
        }
    } catalog(rig.catalog);
    Loader loader({catalog, rig.turn, rig.fetcher, rig.clock}, Rig::options(), rig.stop);
    loader.run(true);
    CHECK(rig.db.cursors[1] == 5);
    CHECK(rig.clock.sleeps.at(0) == 500ms);
}

TEST_CASE("a worker that stalled between the gate and the request abandons it") {
    Rig rig;
    rig.fetcher.produce(1, 1, 5);
    rig.turn.after_claim = [&] { rig.clock.advance(5s); };  // e.g. SIGSTOP, or a claim that came back late
    CHECK(rig.loader.load_source(rig.source(1)).outcome == SourceOutcome::conflict);
    CHECK(rig.fetcher.fetches == 0);
    CHECK(rig.turn.appends == 0);
    CHECK_FALSE(rig.turn.holds(1));
}

TEST_CASE("workers of a process ask their own due sources, and take others' only when overdue and idle") {
    Rig rig;
    rig.fetcher.produce(1, 1, 5);
    rig.fetcher.produce(2, 1, 5);
    LoaderOptions second = Rig::options();
    second.worker = "w2";
    second.worker_index = 1;
    second.worker_count = 2;
    Loader w2({rig.catalog, rig.turn, rig.fetcher, rig.clock}, second, rig.stop);
    // Both sources were due "forever" (never asked): w2 asks its own first,
    // then, with nothing of its own due, the other.
    CHECK(w2.run_once().stored == 1);
    CHECK(rig.db.cursors[1] == 5);
    CHECK(w2.run_once().stored == 1);
    CHECK(rig.db.cursors[2] == 5);

    rig.fetcher.produce(1, 6, 5);
    rig.fetcher.produce(2, 6, 5);
    rig.clock.advance(300ms);  // due for 100 ms: source 2 is w1's (2 % 2 == 0), not yet overdue
    const auto own_only = w2.run_once();
    CHECK(own_only.sources == 1);
    CHECK(rig.db.cursors[1] == 10);
    CHECK(rig.db.cursors[2] == 5);
    CHECK(own_only.pending == 1);
    REQUIRE(own_only.next_due_in);
    CHECK(*own_only.next_due_in <= 250ms);

    rig.clock.advance(300ms);  // now overdue: its owner is busy or gone
    rig.fetcher.produce(1, 11, 5);
    const auto busy = w2.run_once();  // but w2 has its own work: it races nobody
    CHECK(busy.sources == 1);
    // ... and looks again straight away, not idle while the other waits.
    CHECK(busy.next_due_in == std::optional<std::chrono::milliseconds>(0));
    CHECK_FALSE(busy.caught_up());
    CHECK(rig.db.cursors[1] == 15);
    CHECK(rig.db.cursors[2] == 5);
    const auto idle = w2.run_once();  // its own is done: it helps
    CHECK(idle.sources == 1);
    CHECK(rig.db.cursors[2] == 10);
}

namespace {

/// A source whose lock a stranger holds: every claim says locked.
class StrangerLockedTurn : public FakeSourceTurn {
public:
    using FakeSourceTurn::FakeSourceTurn;
    Claim claim(const Source& source) override {
        if (!locked) return FakeSourceTurn::claim(source);
        ++claims;
        Claim locked_claim;
        locked_claim.decision = Decision::locked;
        return locked_claim;
    }
    std::optional<LockHolder> stranger_holding(const Source&) override {
        ++asked;
        if (!locked) return std::nullopt;
        return LockHolder{4242, "eve", "psql", "2026-01-01T00:00:00Z", "its role cannot run a loader"};
    }
    bool locked = true;
    int asked = 0;
};

struct StrangerLog : LoaderObserver {
    void lock_stranger(const Source&, const std::optional<LockHolder>& holder) override {
        reports.push_back(holder ? holder->pid : 0);
    }
    std::vector<int> reports;  ///< the holder's pid, 0 for "no longer"
};

}  // namespace

TEST_CASE("a source locked on every claim is looked into after a second, then once a minute") {
    FakeClock clock;
    FakeLoaderDatabase db;
    StrangerLockedTurn turn{db, clock};
    FakeEventFetcher fetcher;
    FakeSourceCatalog catalog{db, clock};
    catalog.add(1, "held");
    StopSignal stop;
    StrangerLog log;
    LoaderOptions options;
    options.worker = "w1";
    Loader loader({catalog, turn, fetcher, clock}, options, stop, log);
    const Source& source = catalog.sources.front();

    // Locked for less than a second: someone's turn, not worth a query.
    for (int i = 0; i < 9; ++i, clock.advance(100ms))
        CHECK(loader.load_source(source).outcome == SourceOutcome::locked);
    CHECK(turn.asked == 0);
    clock.advance(100ms);
    loader.load_source(source);
    CHECK(turn.asked == 1);
    CHECK(log.reports == std::vector<int>{4242});
    // Many claims later, within the minute: no more queries, no more reports.
    for (int i = 0; i < 500; ++i, clock.advance(100ms)) loader.load_source(source);
    CHECK(turn.asked == 1);
    clock.advance(10s);
    loader.load_source(source);
    CHECK(turn.asked == 2);
    CHECK(log.reports == std::vector<int>{4242, 4242});
    // Unlocked: the next claim passes, the report is withdrawn once.
    turn.locked = false;
    fetcher.produce(1, 1, 3);
    CHECK(loader.load_source(source).outcome == SourceOutcome::stored);
    CHECK(log.reports == std::vector<int>{4242, 4242, 0});
    clock.advance(1s);
    loader.load_source(source);
    CHECK(log.reports.size() == 3);
}
