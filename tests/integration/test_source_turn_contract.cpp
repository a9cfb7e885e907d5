// The turn contract (core/source_turn.h), checked against PostgresSourceTurn
// on a real cluster and against the fake the loader's unit tests use, with
// the same expectations: so the fake cannot drift from the real thing.
// Everything is observed through the port (decisions, leases, cursors) and
// the events stored; only making a source due differs (the fake's clock
// moves, the database's gate row is set due).

#include <catch2/catch.hpp>

#include <memory>

#include "core/errors.h"
#include "postgres/postgres_session.h"
#include "postgres/postgres_source_registry.h"
#include "postgres/postgres_source_turn.h"
#include "support/fakes.h"
#include "support/test_database.h"

using namespace tributary;
using namespace std::chrono_literals;
using tributary::testing::TestDatabase;
using Decision = SourceTurn::Decision;
using Stored = SourceTurn::Stored;

namespace {

EventBatch batch(std::int64_t first, std::int64_t last) {
    EventBatch events;
    for (auto id = first; id <= last; ++id) events.push_back({id, "{\"id\": " + std::to_string(id) + "}"});
    return events;
}

/// Two workers on one shared store, and what a test needs to see.
class TurnWorld {
public:
    virtual ~TurnWorld() = default;
    virtual SourceTurn& first() = 0;
    virtual SourceTurn& second() = 0;
    virtual Source add_source(const std::string& name) = 0;
    /// The source's pause (interval, backoff) is over.
    virtual void make_due(const Source& source) = 0;
    virtual std::size_t events_stored(const Source& source) = 0;
};

class FakeWorld : public TurnWorld {
public:
    SourceTurn& first() override { return first_; }
    SourceTurn& second() override { return second_; }
    Source add_source(const std::string& name) override {
        Source source;
        source.id = ++last_id_;
        source.name = name;
        return source;
    }
    void make_due(const Source&) override { clock_.advance(1h); }
    std::size_t events_stored(const Source& source) override { return db_.events[source.id].size(); }

private:
    fakes::FakeClock clock_;
    fakes::FakeLoaderDatabase db_;
    fakes::FakeSourceTurn first_{db_, clock_, 1}, second_{db_, clock_, 2};
    int last_id_ = 0;
};

class PostgresWorld : public TurnWorld {
public:
    SourceTurn& first() override { return first_; }
    SourceTurn& second() override { return second_; }
    Source add_source(const std::string& name) override {
        postgres::PostgresSession session(db_.url());
        postgres::PostgresSourceRegistry registry(session);
        postgres::SourceSpec spec;
        spec.name = name;
        spec.url = "http://127.0.0.1:9/" + name;
        // An interval no turn of a test outlasts, however slow the machine: "not due" right after
        // a close must not depend on how fast the next claim comes (make_due ends it).
        spec.interval_ms = 3'600'000;
        registry.add(spec);
        for (const auto& s : registry.schedule({}).due)
            if (s.name == name) return s;
        throw std::runtime_error("source not registered");
    }
    void make_due(const Source& source) override {
        db_.exec("UPDATE tributary.gates SET next_allowed_at = now() WHERE source_id = " + std::to_string(source.id));
    }
    std::size_t events_stored(const Source& source) override {
        return std::stoul(
            db_.scalar("SELECT count(*) FROM tributary.events WHERE source_id = " + std::to_string(source.id)));
    }

private:
    TestDatabase db_;
    postgres::PostgresSession a_{db_.url()}, b_{db_.url()};
    postgres::PostgresSourceTurn first_{a_}, second_{b_};
};

std::unique_ptr<TurnWorld> world(const std::string& kind) {
    if (kind == "fake") return std::make_unique<FakeWorld>();
    return std::make_unique<PostgresWorld>();
}

}  // namespace

TEST_CASE("turn contract: a claim holds the source until one close, which lets it go") {
    const std::string kind = GENERATE(as<std::string>{}, "fake", "PostgreSQL");
    CAPTURE(kind);
    auto w = world(kind);
    const auto source = w->add_source("contract.claim");

    const auto one = w->first().claim(source);
    REQUIRE(one.decision == Decision::pass);
    CHECK(one.cursor == Cursor::at_id(0));
    CHECK(one.consecutive_failures == 0);
    CHECK(w->second().claim(source).decision == Decision::locked);  // in flight: nobody else asks
    w->first().close(source, SlotClose::succeeded(one.lease, true, std::nullopt, source.interval));
    // Closed: the lock is free, the slot is not due yet.
    const auto gated = w->second().claim(source);
    CHECK(gated.decision == Decision::not_due);
    CHECK(gated.drained);
    CHECK(gated.empty_streak == 1);

    w->make_due(source);
    const auto two = w->second().claim(source);
    REQUIRE(two.decision == Decision::pass);
    CHECK(two.lease > one.lease);
    w->second().close(source, SlotClose::failed(two.lease, SlotClose::Failure::throttled, "HTTP 429", 30s));
    const auto waiting = w->first().claim(source);
    CHECK(waiting.decision == Decision::backing_off);
    CHECK(waiting.consecutive_failures == 1);
    CHECK_FALSE(waiting.drained);

    w->make_due(source);
    const auto three = w->first().claim(source);
    REQUIRE(three.decision == Decision::pass);
    CHECK(three.consecutive_failures == 1);
    w->first().close(source, SlotClose::released(three.lease));  // failures stay
    CHECK(w->second().claim(source).decision == Decision::backing_off);

    w->make_due(source);
    const auto four = w->second().claim(source);
    REQUIRE(four.decision == Decision::pass);
    w->second().close(source, SlotClose::succeeded(four.lease, false, 7, source.interval));
    w->make_due(source);
    const auto five = w->first().claim(source);
    CHECK(five.consecutive_failures == 0);
    CHECK(five.empty_streak == 0);
}

TEST_CASE("turn contract: a batch is stored with its close, or not at all") {
    const std::string kind = GENERATE(as<std::string>{}, "fake", "PostgreSQL");
    // Both ways the real adapter stores: one statement (small), COPY (large).
    const std::int64_t size = GENERATE(as<std::int64_t>{}, 3, 120);
    CAPTURE(kind, size);
    auto w = world(kind);
    const auto source = w->add_source("contract.append");

    auto claim = w->first().claim(source);
    REQUIRE(claim.decision == Decision::pass);
    CHECK(w->first().append_and_close(source, claim, batch(1, size), SourceTurn::Progress(42)) == Stored::appended);
    CHECK(w->events_stored(source) == static_cast<std::size_t>(size));
    // Closed as a success at the interval, lock released.
    CHECK(w->second().claim(source).decision == Decision::not_due);
    w->make_due(source);
    claim = w->second().claim(source);
    REQUIRE(claim.decision == Decision::pass);
    CHECK(claim.cursor == Cursor::at_id(size));
    CHECK_FALSE(claim.drained);

    SECTION("a stale cursor: nothing stored, the slot closed all the same") {
        auto stale = claim;
        stale.cursor = Cursor::at_id(0);
        CHECK(w->second().append_and_close(source, stale, batch(size + 1, size + 2), SourceTurn::Progress()) ==
              Stored::conflict);
        CHECK(w->events_stored(source) == static_cast<std::size_t>(size));
        CHECK(w->first().claim(source).decision == Decision::not_due);
    }
    SECTION("events another writer stored first: nothing stored, the slot closed all the same") {
        auto behind = claim;
        behind.cursor = Cursor::at_id(size - 1);  // as if a writer had lost its lock
        CHECK(w->second().append_and_close(source, behind, batch(size, size + 1), SourceTurn::Progress()) ==
              Stored::conflict);
        CHECK(w->events_stored(source) == static_cast<std::size_t>(size));
        CHECK(w->first().claim(source).decision == Decision::not_due);
    }
    SECTION("content PostgreSQL refuses: nothing stored, the slot left open for the caller to close") {
        auto bad = batch(size + 1, size + 3);
        bad[1].payload = R"({"text": "\u0000"})";
        CHECK_THROWS_AS(w->second().append_and_close(source, claim, bad, SourceTurn::Progress()), BatchRejected);
        CHECK(w->events_stored(source) == static_cast<std::size_t>(size));
        CHECK(w->first().claim(source).decision == Decision::locked);
        w->second().close(source, SlotClose::failed(claim.lease, SlotClose::Failure::failing, "refused", 1s));
        CHECK(w->first().claim(source).decision == Decision::backing_off);
        // The session is still good for the next batch.
        w->make_due(source);
        const auto again = w->second().claim(source);
        REQUIRE(again.decision == Decision::pass);
        CHECK(w->second().append_and_close(source, again, batch(size + 1, size + 3), SourceTurn::Progress()) ==
              Stored::appended);
    }
}

TEST_CASE("turn contract: a close applies once, and only under the slot's own lease") {
    const std::string kind = GENERATE(as<std::string>{}, "fake", "PostgreSQL");
    CAPTURE(kind);
    auto w = world(kind);
    const auto source = w->add_source("contract.lease");

    const auto old = w->first().claim(source);
    REQUIRE(old.decision == Decision::pass);
    w->first().close(source, SlotClose::failed(old.lease, SlotClose::Failure::transient, "HTTP 503", 1s));
    // Replayed (after a lost connection): counted once.
    w->first().close(source, SlotClose::failed(old.lease, SlotClose::Failure::transient, "HTTP 503", 1s));
    w->first().close(source, SlotClose::succeeded(old.lease, false, std::nullopt, source.interval));
    w->make_due(source);
    const auto fresh = w->second().claim(source);
    REQUIRE(fresh.decision == Decision::pass);
    CHECK(fresh.consecutive_failures == 1);
    // A zombie's close under the old lease neither closes the new slot nor
    // lets the new holder's lock go.
    w->first().close(source, SlotClose::released(old.lease));
    CHECK(w->first().claim(source).decision == Decision::locked);
    w->second().close(source, SlotClose::released(fresh.lease));
    CHECK(w->first().claim(source).decision == Decision::backing_off);
}
