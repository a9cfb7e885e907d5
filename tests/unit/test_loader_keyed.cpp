// The loader with sources keyed by text (every paging style but after-id):
// what it stores, skips and moves, on the fakes.

#include <catch2/catch.hpp>

#include "core/loader.h"
#include "support/fakes.h"

using namespace tributary;
using namespace tributary::fakes;
using namespace std::chrono_literals;

namespace {

/// A loader on fakes with one source (id 1) paged by offset: the fake
/// fetcher serves records from the position's number on.
struct KeyedRig {
    FakeClock clock;
    FakeLoaderDatabase db;
    FakeSourceTurn turn{db, clock};
    FakeEventFetcher fetcher;
    FakeSourceCatalog catalog{db, clock};
    StopSignal stop;
    Loader loader;

    KeyedRig() : loader({catalog, turn, fetcher, clock}, LoaderOptions{}, stop) {
        auto& source = catalog.add(1, "tickets");
        source.paging.style = PagingStyle::offset;
        source.batch_size = 100;
    }
    const Source& source() { return catalog.sources.front(); }
    TurnReport turn_later() {
        clock.advance(1s);
        return loader.load_source(source());
    }
    /// A scripted page: these keys, and the cursor after them.
    void script(std::vector<std::string> keys, const Cursor& next, bool at_end = false) {
        EventBatch batch;
        for (auto& key : keys) batch.emplace_back(0, "{\"k\":\"" + key + "\"}", key);
        auto result = FetchResult::batch(std::move(batch));
        result.next = next;
        result.at_end = at_end;
        fetcher.scripted[1].push_back(std::move(result));
    }
};

}  // namespace

TEST_CASE("a keyed source stores its pages and moves its position with them") {
    KeyedRig rig;
    rig.fetcher.produce(1, 1, 250);
    CHECK(rig.turn_later().events == 100);
    CHECK(rig.db.positions[1] == Cursor::at("100"));
    rig.turn_later();
    rig.turn_later();
    CHECK(rig.db.positions[1] == Cursor::at("250"));
    REQUIRE(rig.db.events[1].size() == 250);
    CHECK(rig.db.events[1].back().key == "250");
    CHECK(rig.turn_later().outcome == SourceOutcome::empty);  // nothing after 250
}

TEST_CASE("records a keyed source serves again are skipped, the cursor moves all the same") {
    KeyedRig rig;
    rig.script({"a", "b"}, Cursor::at("t1"));
    rig.script({"b", "c"}, Cursor::at("t2"));  // b again: a lookback, a repeated page
    CHECK(rig.turn_later().events == 2);
    const auto second = rig.turn_later();
    CHECK(second.outcome == SourceOutcome::stored);
    CHECK(second.events == 1);
    CHECK(rig.db.events[1].size() == 3);
    CHECK(rig.db.positions[1] == Cursor::at("t2"));
}

TEST_CASE("a page with nothing new but a new cursor moves the cursor alone; the same cursor is idle") {
    KeyedRig rig;
    rig.script({}, Cursor::at("t1"));
    const auto moved = rig.turn_later();
    CHECK(moved.outcome == SourceOutcome::stored);
    CHECK(moved.events == 0);
    CHECK(rig.db.positions[1] == Cursor::at("t1"));
    CHECK(rig.turn.appends == 1);

    rig.script({}, Cursor::at("t1"), true);
    CHECK(rig.turn_later().outcome == SourceOutcome::empty);
    CHECK(rig.turn.appends == 1);  // nothing to store, nothing to move
    CHECK(rig.db.gates[1].drained);
}

TEST_CASE("a page of records all stored before that moves the cursor is progress, not idle") {
    KeyedRig rig;
    rig.script({"a", "b"}, Cursor::at("t1"));
    rig.turn_later();
    // As after a rewind: the same records again, and a cursor that moves on.
    rig.script({"a", "b"}, Cursor::at("t2"));
    const auto again = rig.turn_later();
    CHECK(again.outcome == SourceOutcome::stored);  // run --until-idle reads on
    CHECK(again.events == 0);
    CHECK(rig.db.positions[1] == Cursor::at("t2"));
    CHECK(rig.db.events[1].size() == 2);
}

TEST_CASE("a keyed page with an empty key is refused whole") {
    KeyedRig rig;
    rig.script({"a", ""}, Cursor::at("t1"));
    const auto turn = rig.turn_later();
    CHECK(turn.outcome == SourceOutcome::failed);
    CHECK(turn.failure == FailureClass::invalid_batch);
    CHECK(rig.db.events[1].empty());
    CHECK(rig.db.positions.count(1) == 0);
    CHECK(rig.db.gates[1].last_error.find("record #1 has an empty key") != std::string::npos);
}

TEST_CASE("a spent rate limit holds the source past its interval, after a batch too") {
    KeyedRig rig;
    rig.script({"a"}, Cursor::at("t1"));
    rig.fetcher.scripted[1].back().hold_off = 30s;
    rig.turn_later();
    const auto due_in = rig.db.gates[1].next_allowed - rig.clock.now();
    CHECK(due_in >= 30s);
}

TEST_CASE("a page of records all stored before that leaves the cursor where it was is an idle answer") {
    // A time source at the end of its stream: asked since its watermark, it
    // serves its last record again.
    KeyedRig rig;
    rig.script({"a", "b"}, Cursor::at("t1"));
    rig.script({"b"}, Cursor::at("t1"));
    rig.script({"b"}, Cursor::at("t1"));
    CHECK(rig.turn_later().outcome == SourceOutcome::stored);
    const auto idle = rig.turn_later();
    CHECK(idle.outcome == SourceOutcome::empty);
    CHECK(idle.events == 0);
    CHECK(rig.db.gates[1].drained);
    CHECK(rig.db.gates[1].empty_streak == 1);
    rig.turn_later();
    CHECK(rig.db.gates[1].empty_streak == 2);  // the idle pause grows as for empty answers
    CHECK(rig.db.events[1].size() == 2);
}
