// The PostgreSQL adapters against a real cluster, and the contract each port
// promises, checked against the adapter and its fake alike (so the fakes the
// loader's unit tests use cannot drift from the real thing).

#include <catch2/catch.hpp>

#include <thread>

#include <pqxx/pqxx>

#include "core/errors.h"
#include "postgres/advisory_keys.h"
#include "postgres/postgres_session.h"
#include "postgres/postgres_source_registry.h"
#include "postgres/postgres_source_turn.h"
#include "support/test_database.h"

using namespace tributary;
using namespace std::chrono_literals;
using tributary::testing::TestDatabase;

namespace {

Source registered(const TestDatabase& db, const std::string& name, std::int64_t after_id = 0) {
    postgres::PostgresSession session(db.url());
    postgres::PostgresSourceRegistry registry(session);
    postgres::SourceSpec spec;
    spec.name = name;
    spec.url = "http://127.0.0.1:9/" + name;
    spec.after_id = after_id;
    registry.add(spec);
    for (const auto& s : registry.schedule({}).due)
        if (s.name == name) return s;
    throw std::runtime_error("source not registered");
}

EventBatch batch(std::int64_t first, std::int64_t last) {
    EventBatch events;
    for (auto id = first; id <= last; ++id) events.push_back({id, "{\"id\": " + std::to_string(id) + "}"});
    return events;
}

/// Advisory locks held in tributary's namespace on source `id`, by anyone.
std::string locks_on(const TestDatabase& db, int id) {
    return db.scalar("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted AND classid = " +
                     std::to_string(postgres::kAdvisoryNamespace) + " AND objid = " + std::to_string(id));
}

/// Claims `source` for a batch stored as if the cursor were `expected`.
SourceTurn::Stored append(const TestDatabase& db, SourceTurn& turn, const Source& source, std::int64_t expected,
                          const EventBatch& events) {
    db.exec("UPDATE tributary.gates SET next_allowed_at = now() WHERE source_id = " + std::to_string(source.id));
    auto claim = turn.claim(source);
    if (claim.decision != SourceTurn::Decision::pass) throw std::runtime_error("source not claimed");
    claim.cursor = Cursor::at_id(expected);
    return turn.append_and_close(source, claim, events, SourceTurn::Progress()).stored;
}

}  // namespace

TEST_CASE("a pass holds the source's lock until its slot closes; every other answer holds none") {
    TestDatabase db;
    auto source = registered(db, "gate.lock");
    source.interval = 10s;  // long: "not due" must not run out while the test runs
    postgres::PostgresSession a(db.url()), b(db.url());
    postgres::PostgresSourceTurn first(a), second(b);

    const auto one = first.claim(source);
    REQUIRE(one.decision == SourceTurn::Decision::pass);
    CHECK(locks_on(db, source.id) == "1");
    CHECK(second.claim(source).decision == SourceTurn::Decision::locked);
    first.close(source, SlotClose::succeeded(one.lease, false, std::nullopt, source.interval));
    CHECK(locks_on(db, source.id) == "0");
    CHECK(second.claim(source).decision == SourceTurn::Decision::not_due);
    CHECK(locks_on(db, source.id) == "0");

    db.exec("UPDATE tributary.gates SET next_allowed_at = now()");
    const auto two = second.claim(source);
    REQUIRE(two.decision == SourceTurn::Decision::pass);
    second.close(source, SlotClose::failed(two.lease, SlotClose::Failure::transient, "boom", 10s));
    CHECK(locks_on(db, source.id) == "0");
    CHECK(first.claim(source).decision == SourceTurn::Decision::backing_off);
    CHECK(locks_on(db, source.id) == "0");

    db.exec("UPDATE tributary.gates SET next_allowed_at = now()");
    const auto three = first.claim(source);
    REQUIRE(three.decision == SourceTurn::Decision::pass);
    first.close(source, SlotClose::released(three.lease));
    CHECK(locks_on(db, source.id) == "0");
}

TEST_CASE("a claim or a close that fails does not keep the lock") {
    TestDatabase db;
    const auto source = registered(db, "gate.claim_fails");
    postgres::PostgresSession session(db.url());
    postgres::PostgresSourceTurn gate(session);
    // Another transaction holds the gate row: the claim's UPDATE waits out
    // lock_timeout (5 s) and fails, with the advisory lock already taken.
    pqxx::connection blocker(db.url());
    pqxx::work tx(blocker);
    tx.exec("SELECT FROM tributary.gates FOR UPDATE");
    CHECK_THROWS(gate.claim(source));
    CHECK(locks_on(db, source.id) == "0");
    tx.abort();
    const auto pass = gate.claim(source);
    REQUIRE(pass.decision == SourceTurn::Decision::pass);

    // The same for a close: it fails, and the lock goes all the same.
    pqxx::work again(blocker);
    again.exec("SELECT FROM tributary.gates FOR UPDATE");
    CHECK_THROWS(gate.close(source, SlotClose::failed(pass.lease, SlotClose::Failure::transient, "boom", 1s)));
    CHECK(locks_on(db, source.id) == "0");
    again.abort();
}

TEST_CASE("a compare-and-set conflict rolls back and stores nothing") {
    TestDatabase db;
    const auto source = registered(db, "cas.conflict", 100);
    postgres::PostgresSession session(db.url());
    postgres::PostgresSourceTurn store(session);
    CHECK(append(db, store, source, 90, batch(101, 200)) == SourceTurn::Stored::conflict);
    CHECK(db.scalar("SELECT count(*) FROM tributary.events") == "0");
    CHECK(db.scalar("SELECT last_event_id FROM tributary.cursors") == "100");
}

TEST_CASE("a unique violation (ids stored behind the cursor's back) is a duplicate, nothing stored") {
    TestDatabase db;
    const auto source = registered(db, "unique.guard");
    db.exec("INSERT INTO tributary.events (source_id, event_id, payload) VALUES (" + std::to_string(source.id) +
            ", 2, '{}')");
    postgres::PostgresSession session(db.url());
    postgres::PostgresSourceTurn store(session);
    CHECK(append(db, store, source, 0, batch(1, 3)) == SourceTurn::Stored::duplicate);
    CHECK(db.scalar("SELECT count(*) FROM tributary.events") == "1");
    CHECK(db.scalar("SELECT last_event_id FROM tributary.cursors") == "0");
}

TEST_CASE("content jsonb refuses is rejected whole") {
    TestDatabase db;
    const auto source = registered(db, "jsonb.refuses");
    postgres::PostgresSession session(db.url());
    postgres::PostgresSourceTurn store(session);
    EventBatch events = batch(1, 3);
    events[2].payload = R"({"text": "nul \u0000 inside"})";
    CHECK_THROWS_AS(append(db, store, source, 0, events), BatchRejected);
    // The slot stays open, the lock held, for the loader to close as a failure.
    CHECK(locks_on(db, source.id) == "1");
    store.close(source, SlotClose::failed(std::stoll(db.scalar("SELECT lease FROM tributary.gates")),
                                          SlotClose::Failure::failing, "refused", 1s));
    CHECK(locks_on(db, source.id) == "0");
    CHECK(db.scalar("SELECT count(*) FROM tributary.events") == "0");
    CHECK(db.scalar("SELECT last_event_id FROM tributary.cursors") == "0");
    // The session is still good for the next batch.
    CHECK(append(db, store, source, 0, batch(1, 3)) == SourceTurn::Stored::appended);
}

TEST_CASE("the gate allows one request per interval and carries backoff") {
    TestDatabase db;
    auto source = registered(db, "gate.row");
    source.interval = 10s;  // long: "not due" must not run out while the test runs
    source.endpoint.timeout = 2s;
    postgres::PostgresSession a(db.url()), b(db.url());
    postgres::PostgresSourceTurn first(a), second(b);

    const auto one = first.claim(source);
    CHECK(one.decision == SourceTurn::Decision::pass);
    CHECK(one.cursor == Cursor::at_id(0));  // read in the same round trip
    // In flight: nobody else may ask.
    CHECK(second.claim(source).decision == SourceTurn::Decision::locked);
    first.close(source, SlotClose::succeeded(one.lease, false, std::nullopt, source.interval));
    CHECK(second.claim(source).decision == SourceTurn::Decision::not_due);
    // The interval from the end of the request, on the database's clock.
    CHECK(db.scalar("SELECT next_allowed_at - last_success_at FROM tributary.gates") == "00:00:10");
    db.exec("UPDATE tributary.gates SET next_allowed_at = now()");
    const auto two = second.claim(source);
    CHECK(two.decision == SourceTurn::Decision::pass);
    CHECK(two.lease > one.lease);

    second.close(source,
                 SlotClose::failed(two.lease, SlotClose::Failure::throttled, "HTTP 429, retry after 1s", 1000ms));
    const auto waiting = first.claim(source);
    CHECK(waiting.decision == SourceTurn::Decision::backing_off);
    CHECK(waiting.consecutive_failures == 1);
    CHECK(db.scalar("SELECT state || ': ' || last_error FROM tributary.gates") ==
          "throttled: HTTP 429, retry after 1s");
    CHECK(db.scalar("SELECT next_allowed_at - last_error_at FROM tributary.gates") == "00:00:01");
    db.exec("UPDATE tributary.gates SET next_allowed_at = now()");
    const auto after = first.claim(source);
    CHECK(after.decision == SourceTurn::Decision::pass);
    CHECK(after.consecutive_failures == 1);
    first.close(source, SlotClose::succeeded(after.lease, false, std::nullopt, source.interval));
    CHECK(db.scalar("SELECT state || failures FROM tributary.gates") == "ok0");
}

TEST_CASE("the schedule lists due sources earliest first and tells when the next is due") {
    TestDatabase db;
    auto quiet = registered(db, "schedule.quiet");
    auto busy = registered(db, "schedule.busy");
    auto paused = registered(db, "schedule.paused");
    postgres::PostgresSession session(db.url());
    postgres::PostgresSourceRegistry registry(session);
    postgres::PostgresSourceTurn gate(session);
    registry.set_enabled("schedule.paused", false);

    auto all = registry.schedule({});
    REQUIRE(all.due.size() == 2);
    CHECK_FALSE(all.next_due_in);
    CHECK(all.pending == 0);

    // quiet answered with nothing for the third time: a long pause, drained.
    db.exec("UPDATE tributary.gates SET empty_streak = 2 WHERE source_id = " + std::to_string(quiet.id));
    const auto q = gate.claim(quiet);
    CHECK(q.empty_streak == 2);
    gate.close(quiet, SlotClose::succeeded(q.lease, true, std::nullopt, 5s));
    // busy had a batch: due again after its interval, and pending until then.
    const auto b = gate.claim(busy);
    gate.close(busy, SlotClose::succeeded(b.lease, false, 7, 3s));

    const auto later = registry.schedule({});
    CHECK(later.due.empty());
    REQUIRE(later.next_due_in);
    CHECK(*later.next_due_in <= 3000ms);
    // Read after the schedule, the database's own wait can only be shorter.
    CHECK(later.next_due_in->count() >=
          std::stod(db.scalar("SELECT extract(epoch FROM min(next_allowed_at) - now()) * 1000 FROM tributary.gates"
                              " WHERE next_allowed_at > now() AND next_allowed_at < 'infinity'")));
    CHECK(later.pending == 1);
    CHECK(db.scalar(
              "SELECT string_agg(empty_streak::text || drained::text, ',' ORDER BY source_id) FROM tributary.gates") ==
          "3true,0false,0false");
    {
        // While someone asks it, busy is theirs to see through, not pending
        // for the others (they would sleep past it, then ask again).
        db.exec("UPDATE tributary.gates SET next_allowed_at = now() WHERE source_id = " + std::to_string(busy.id));
        postgres::PostgresSession other_session(db.url());
        postgres::PostgresSourceTurn other(other_session);
        const auto in_flight = other.claim(busy);
        REQUIRE(in_flight.decision == SourceTurn::Decision::pass);
        CHECK(registry.schedule({}).pending == 0);
        other.close(busy, SlotClose::succeeded(in_flight.lease, false, 7, 3s));
        CHECK(registry.schedule({}).pending == 1);
    }

    db.exec("UPDATE tributary.gates SET next_allowed_at = now() - interval '1 s' WHERE source_id = " +
            std::to_string(quiet.id));
    db.exec("UPDATE tributary.gates SET next_allowed_at = now() - interval '2 s' WHERE source_id = " +
            std::to_string(busy.id));
    const auto both = registry.schedule({});
    REQUIRE(both.due.size() == 2);
    CHECK(both.due[0].name == "schedule.busy");  // earliest due first
    CHECK(both.due[1].name == "schedule.quiet");

    // Shared among two workers: another worker's source only once it is 250 ms overdue.
    db.exec("UPDATE tributary.gates SET next_allowed_at = now() - interval '100 ms' WHERE source_id = " +
            std::to_string(quiet.id));
    const ScheduleShare owner{quiet.id % 2, 2, 250ms}, helper{(quiet.id + 1) % 2, 2, 250ms};
    CHECK(registry.schedule(owner).due.size() == 2);
    const auto helped = registry.schedule(helper);
    REQUIRE(helped.due.size() == 1);
    CHECK(helped.due[0].name == "schedule.busy");
    REQUIRE(helped.next_due_in);
    CHECK(*helped.next_due_in <= 150ms);
    (void)paused;
}

namespace {

/// Counts notifications on one channel of its own connection.
struct ChannelCounter : pqxx::notification_receiver {
    int received = 0;
    ChannelCounter(pqxx::connection_base& c, const std::string& channel) : pqxx::notification_receiver(c, channel) {}
    void operator()(const std::string&, int) override { ++received; }
};

double seconds_until_due(const TestDatabase& db, int source_id) {
    return std::stod(
        db.scalar("SELECT extract(epoch FROM next_allowed_at - now()) FROM tributary.gates WHERE source_id = " +
                  std::to_string(source_id)));
}

}  // namespace

TEST_CASE("a nudge brings an idle source forward, never past its gate, and wakes the loaders") {
    TestDatabase db;
    auto idle = registered(db, "nudge.idle");
    auto busy = registered(db, "nudge.busy");
    auto failing = registered(db, "nudge.failing");
    postgres::PostgresSession session(db.url());
    postgres::PostgresSourceRegistry registry(session);
    postgres::PostgresSourceTurn gate(session);
    pqxx::connection listener(db.url());
    ChannelCounter control(listener, "tributary_control");

    // idle answered with nothing a while ago and waits 30 s: a nudge makes it due now.
    const auto i = gate.claim(idle);
    gate.close(idle, SlotClose::succeeded(i.lease, true, std::nullopt, 30s));
    db.exec(
        "UPDATE tributary.gates SET last_request = now() - interval '6 s', last_success_at = now() - interval '5 s'"
        " WHERE source_id = " +
        std::to_string(idle.id));
    CHECK(seconds_until_due(db, idle.id) > 0);
    CHECK(registry.nudge("nudge.idle"));
    CHECK(seconds_until_due(db, idle.id) <= 0.01);
    CHECK(db.scalar("SELECT empty_streak FROM tributary.gates WHERE source_id = " + std::to_string(idle.id)) == "0");

    // Just answered: the nudge cannot beat the interval after that answer.
    const auto again = gate.claim(idle);
    REQUIRE(again.decision == SourceTurn::Decision::pass);
    gate.close(idle, SlotClose::succeeded(again.lease, true, std::nullopt, 30s));
    CHECK(registry.nudge("nudge.idle"));
    CHECK(db.scalar("SELECT next_allowed_at >= last_success_at + interval '200 ms' AND"
                    " next_allowed_at <= greatest(nudged_at, last_success_at + interval '200 ms')"
                    " FROM tributary.gates WHERE source_id = " +
                    std::to_string(idle.id)) == "t");

    // busy has a request in flight: its lease stands; the answer then brings the next at the interval.
    const auto b = gate.claim(busy);
    const auto leased =
        db.scalar("SELECT next_allowed_at FROM tributary.gates WHERE source_id = " + std::to_string(busy.id));
    CHECK(registry.nudge("nudge.busy"));
    CHECK(db.scalar("SELECT next_allowed_at FROM tributary.gates WHERE source_id = " + std::to_string(busy.id)) ==
          leased);
    gate.close(busy, SlotClose::succeeded(b.lease, true, std::nullopt, 30s));
    CHECK(seconds_until_due(db, busy.id) <= 0.2);
    CHECK(db.scalar("SELECT empty_streak FROM tributary.gates WHERE source_id = " + std::to_string(busy.id)) == "0");

    // failing keeps its backoff.
    const auto f = gate.claim(failing);
    gate.close(failing, SlotClose::failed(f.lease, SlotClose::Failure::transient, "HTTP 503", 10s));
    CHECK(registry.nudge("nudge.failing"));
    CHECK(db.scalar("SELECT next_allowed_at - last_error_at FROM tributary.gates WHERE source_id = " +
                    std::to_string(failing.id)) == "00:00:10");

    CHECK_FALSE(registry.nudge("nudge.unknown"));

    // Every nudge that found its source, and every change, told the loaders.
    listener.await_notification(1, 0);
    listener.get_notifs();
    CHECK(control.received >= 1);
    const int before = control.received;
    registry.set_enabled("nudge.busy", false);
    listener.await_notification(1, 0);
    CHECK(control.received > before);
}

TEST_CASE("a stale lease cannot close a newer reservation nor release its lock (a zombie cannot shorten a lease)") {
    TestDatabase db;
    auto source = registered(db, "gate.zombie");
    source.interval = 10s;  // long: "not due" must not run out while the test runs
    source.endpoint.timeout = 1s;
    postgres::PostgresSession a(db.url()), b(db.url());
    postgres::PostgresSourceTurn zombie(a), live(b);
    const auto stale = zombie.claim(source);
    REQUIRE(stale.decision == SourceTurn::Decision::pass);
    // The zombie loses its lock with its session, its lease runs out (here:
    // forced) and another worker takes the slot.
    db.exec("SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory' AND objid = " +
            std::to_string(source.id));
    db.exec("UPDATE tributary.gates SET next_allowed_at = now()");
    const auto fresh = live.claim(source);
    REQUIRE(fresh.decision == SourceTurn::Decision::pass);
    const auto leased_until = db.scalar("SELECT next_allowed_at FROM tributary.gates");

    CHECK_THROWS_AS(zombie.close(source, SlotClose::succeeded(stale.lease, false, std::nullopt, source.interval)),
                    DatabaseUnavailable);
    zombie.close(source, SlotClose::succeeded(stale.lease, false, std::nullopt, source.interval));
    zombie.close(source, SlotClose::released(stale.lease));
    zombie.close(source, SlotClose::failed(stale.lease, SlotClose::Failure::transient, "late", 0ms));
    CHECK(db.scalar("SELECT next_allowed_at FROM tributary.gates") == leased_until);
    CHECK(db.scalar("SELECT failures FROM tributary.gates") == "0");
    CHECK(locks_on(db, source.id) == "1");  // the live holder's, untouched
    CHECK(zombie.claim(source).decision == SourceTurn::Decision::locked);
    live.close(source, SlotClose::released(fresh.lease));
    CHECK(locks_on(db, source.id) == "0");
    CHECK(zombie.claim(source).decision == SourceTurn::Decision::not_due);
}

TEST_CASE("a slot closes once: a close replayed after a lost connection changes nothing") {
    TestDatabase db;
    auto source = registered(db, "gate.replay");
    postgres::PostgresSession session(db.url());
    postgres::PostgresSourceTurn gate(session);
    const auto pass = gate.claim(source);
    gate.close(source, SlotClose::failed(pass.lease, SlotClose::Failure::throttled, "HTTP 429", 30s));
    const auto until = db.scalar("SELECT next_allowed_at FROM tributary.gates");
    gate.close(source, SlotClose::failed(pass.lease, SlotClose::Failure::throttled, "HTTP 429", 30s));
    gate.close(source, SlotClose::released(pass.lease));
    gate.close(source, SlotClose::succeeded(pass.lease, false, std::nullopt, source.interval));
    CHECK(db.scalar("SELECT failures || state FROM tributary.gates") == "1throttled");
    CHECK(db.scalar("SELECT next_allowed_at FROM tributary.gates") == until);
}

TEST_CASE("hostile error texts are stored safely") {
    TestDatabase db;
    const auto source = registered(db, "gate.text");
    postgres::PostgresSession session(db.url());
    postgres::PostgresSourceTurn gate(session);
    const auto pass = gate.claim(source);
    gate.close(source, SlotClose::failed(pass.lease, SlotClose::Failure::transient,
                                         std::string("bad \xff\xfe bytes\n\0x", 16) + std::string(2000, 'a'), 1s));
    const auto stored = db.scalar("SELECT last_error FROM tributary.gates");
    CHECK(stored.rfind("bad ?? bytes?", 0) == 0);
    CHECK(stored.size() <= 503);
}

TEST_CASE("a session that lost its server raises DatabaseUnavailable, then reconnects") {
    TestDatabase db;
    const auto source = registered(db, "session.reconnect");
    postgres::PostgresSession session(db.url());
    postgres::PostgresSourceTurn turn(session);
    REQUIRE(append(db, turn, source, 0, batch(1, 2)) == SourceTurn::Stored::appended);
    const auto generation = session.generation();
    db.exec(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'tributary'"
        " AND datname = current_database() AND pid <> pg_backend_pid()");
    CHECK_THROWS_AS(append(db, turn, source, 2, batch(3, 4)), DatabaseUnavailable);
    CHECK(append(db, turn, source, 2, batch(3, 4)) == SourceTurn::Stored::appended);
    CHECK(session.generation() == generation + 1);
    CHECK(locks_on(db, source.id) == "0");
}

TEST_CASE("payloads round-trip byte for byte through COPY: escapes, non-ASCII, big numbers") {
    TestDatabase db;
    const auto source = registered(db, "copy.roundtrip");
    postgres::PostgresSession session(db.url());
    postgres::PostgresSourceTurn store(session);
    const std::vector<std::string> payloads = {
        R"({"name": "Zoë – 東京 🚀", "tab": "a\tb", "nl": "x\ny", "bs": "c:\\dir", "q": "\"quoted\""})",
        R"({"big": 12345678901234567890123, "exact": 0.1000000000000000055511151231257827})",
        R"(["\u00e9", "\\N", "\\.", null, true, -0, 1E2])",
        "\"just a string with \\\\ and \\u0001\"",
        // Whitespace COPY's text format must escape, outside strings.
        "{\n\t\"a\":\r\n [1,\t2]\n}",
        "\"\\\\\\\\\\\\\"",
    };
    // More events than one statement takes, so that they go by COPY.
    std::vector<std::string> sent;
    for (std::size_t i = 0; i < 60; ++i) sent.push_back(payloads[i % payloads.size()]);
    EventBatch events;
    for (std::size_t i = 0; i < sent.size(); ++i) events.push_back({static_cast<std::int64_t>(i + 1), sent[i]});
    REQUIRE(append(db, store, source, 0, events) == SourceTurn::Stored::appended);
    pqxx::connection c(db.url());
    pqxx::nontransaction tx(c);
    for (std::size_t i = 0; i < sent.size(); ++i) {
        // jsonb normalises whitespace and key order, so compare as jsonb.
        const auto same = tx.exec_params1("SELECT payload = $1::jsonb FROM tributary.events WHERE event_id = $2",
                                          sent[i], static_cast<std::int64_t>(i + 1))[0]
                              .as<bool>();
        INFO(sent[i]);
        CHECK(same);
    }
    CHECK(db.scalar("SELECT payload->>'big' FROM tributary.events WHERE event_id = 2") == "12345678901234567890123");
}

TEST_CASE("a source with stored events cannot be removed, not even by hand or while its first batch commits") {
    TestDatabase db;
    const auto empty = registered(db, "remove.empty");
    const auto full = registered(db, "remove.full");
    const auto racing = registered(db, "remove.racing");
    postgres::PostgresSession session(db.url());
    postgres::PostgresSourceRegistry registry(session);
    postgres::PostgresSourceTurn store(session);
    REQUIRE(append(db, store, full, 0, batch(1, 3)) == SourceTurn::Stored::appended);

    CHECK_NOTHROW(registry.remove("remove.empty"));
    CHECK_THROWS_WITH(registry.remove("remove.full"), Catch::Contains("never deletes events"));
    // By hand, the trigger says so (no foreign key any more: see migration 0005).
    CHECK_THROWS_WITH(db.exec("DELETE FROM tributary.sources WHERE name = 'remove.full'"),
                      Catch::Contains("never deletes events"));

    // A batch being stored (cursor moved, rows in, not committed) while the source is removed.
    pqxx::connection loader(db.url());
    pqxx::work batch_tx(loader);
    batch_tx.exec("UPDATE tributary.cursors SET last_event_id = 2, events_stored = 2 WHERE source_id = " +
                  std::to_string(racing.id));
    batch_tx.exec("INSERT INTO tributary.events (source_id, event_id, payload) VALUES (" + std::to_string(racing.id) +
                  ", 1, '{}'), (" + std::to_string(racing.id) + ", 2, '{}')");
    std::string removal_error;
    std::thread remover([&] {
        try {
            postgres::PostgresSession other(db.url());
            postgres::PostgresSourceRegistry(other).remove("remove.racing");
        } catch (const std::exception& e) {
            removal_error = e.what();
        }
    });
    std::this_thread::sleep_for(300ms);  // the removal waits on the cursor row
    batch_tx.commit();
    remover.join();
    CHECK_THAT(removal_error, Catch::Contains("never deletes events"));
    CHECK(db.scalar("SELECT count(*) FROM tributary.events e LEFT JOIN tributary.sources s ON s.id = e.source_id"
                    " WHERE s.id IS NULL") == "0");
    (void)empty;
}

TEST_CASE("a batch closes its slot and releases the lock in its own transaction, stored or not") {
    // Both ways a batch is stored: one statement (small), COPY (large).
    const std::int64_t size = GENERATE(as<std::int64_t>{}, 5, 150);
    CAPTURE(size);
    TestDatabase db;
    auto source = registered(db, "store.close");
    source.interval = 300ms;
    postgres::PostgresSession session(db.url());
    postgres::PostgresSourceTurn turn(session);
    const auto claim = [&](std::int64_t expected) {
        db.exec("UPDATE tributary.gates SET next_allowed_at = now()");
        auto pass = turn.claim(source);
        REQUIRE(pass.decision == SourceTurn::Decision::pass);
        REQUIRE(locks_on(db, source.id) == "1");
        pass.cursor = Cursor::at_id(expected);
        return pass;
    };
    const auto closed_under = [&](std::int64_t lease) {
        return db.scalar("SELECT closed_lease FROM tributary.gates") == std::to_string(lease) &&
               locks_on(db, source.id) == "0";
    };

    auto pass = claim(0);
    CHECK(turn.append_and_close(source, pass, batch(1, size), SourceTurn::Progress(42)) ==
          SourceTurn::Stored::appended);
    CHECK(closed_under(pass.lease));
    CHECK(db.scalar("SELECT backlog || state || failures FROM tributary.gates") == "42ok0");
    // The next request after the interval, counted from the commit (both
    // times are the transaction's own clock: no window to race).
    CHECK(db.scalar("SELECT next_allowed_at - last_success_at FROM tributary.gates") == "00:00:00.3");
    // Stored in id order: seq follows event_id.
    CHECK(db.scalar("SELECT bool_and(ok) FROM (SELECT event_id = row_number() OVER (ORDER BY seq) AS ok"
                    " FROM tributary.events) x") == "t");

    SECTION("the cursor moved meanwhile: nothing stored, the slot closed all the same") {
        pass = claim(0);
        CHECK(turn.append_and_close(source, pass, batch(1, size), SourceTurn::Progress()) ==
              SourceTurn::Stored::conflict);
        CHECK(closed_under(pass.lease));
    }
    SECTION("another writer stored these ids first: nothing stored, the slot closed all the same") {
        db.exec("UPDATE tributary.cursors SET last_event_id = 0");  // as if a writer had lost its lock
        pass = claim(0);
        CHECK(turn.append_and_close(source, pass, batch(1, size + 1), SourceTurn::Progress()) ==
              SourceTurn::Stored::duplicate);
        CHECK(closed_under(pass.lease));
        CHECK(db.scalar("SELECT last_event_id FROM tributary.cursors") == "0");
    }
    SECTION("a payload PostgreSQL refuses: the slot stays for the caller to close as a failure") {
        pass = claim(size);
        auto bad = batch(size + 1, size + 3);
        bad[1].payload = R"({"text": "\u0000"})";
        CHECK_THROWS_AS(turn.append_and_close(source, pass, bad, SourceTurn::Progress()), BatchRejected);
        CHECK(locks_on(db, source.id) == "1");
        CHECK(db.scalar("SELECT closed_lease FROM tributary.gates") != std::to_string(pass.lease));
        turn.close(source, SlotClose::failed(pass.lease, SlotClose::Failure::failing, "refused", 1s));
        CHECK(closed_under(pass.lease));
    }
    CHECK(db.scalar("SELECT count(*) FROM tributary.events") == std::to_string(size));
}

TEST_CASE("a batch with a large event is stored row by row, and its session recycled") {
    TestDatabase db;
    const auto source = registered(db, "store.large");
    postgres::PostgresSession session(db.url());
    int reconnects = 0;
    session.on_new_session([&](std::uint64_t generation) { reconnects += generation > 1; });
    postgres::PostgresSourceTurn turn(session);
    auto events = batch(1, 3);
    events[1].payload = "{\"big\": \"" + std::string(3 << 20, 'x') + "\"}";
    REQUIRE(append(db, turn, source, 0, events) == SourceTurn::Stored::appended);
    CHECK(db.scalar("SELECT string_agg(event_id || ':' || length(payload::text), ',' ORDER BY seq)"
                    " FROM tributary.events") == "1:9,2:" + std::to_string((3 << 20) + 11) + ",3:9");
    CHECK(db.scalar("SELECT last_event_id || ',' || events_stored FROM tributary.cursors") == "3,3");
    CHECK(locks_on(db, source.id) == "0");
    CHECK_FALSE(session.connected());  // recycled: libpq's buffers went with it
    const auto generation = session.generation();
    REQUIRE(append(db, turn, source, 3, batch(4, 5)) == SourceTurn::Stored::appended);
    CHECK(session.generation() == generation + 1);
    CHECK(reconnects == 0);  // a recycle is no reconnect after a failure
    // Stale cursor: nothing stored, closed all the same.
    events = batch(6, 7);
    events[0].payload = events[1].payload = "\"" + std::string(2 << 20, 'y') + "\"";
    CHECK(append(db, turn, source, 0, events) == SourceTurn::Stored::conflict);
    CHECK(db.scalar("SELECT count(*) FROM tributary.events") == "5");
    CHECK(locks_on(db, source.id) == "0");
}

TEST_CASE("a one-statement batch of 1 MiB or more in all is stored whole from its JSON array") {
    TestDatabase db;
    const auto source = registered(db, "store.heavy");
    postgres::PostgresSession session(db.url());
    postgres::PostgresSourceTurn turn(session);
    // Each event under the row-by-row size, together over it: the payloads
    // go into the statement's array and are released on the way.
    auto events = batch(1, 3);
    for (auto& event : events) event.payload = "{\"part\": \"" + std::string(400 << 10, 'z') + "\"}";
    REQUIRE(append(db, turn, source, 0, events) == SourceTurn::Stored::appended);
    const auto length = std::to_string((400 << 10) + 12);
    CHECK(db.scalar("SELECT string_agg(event_id || ':' || length(payload::text), ',' ORDER BY seq)"
                    " FROM tributary.events") == "1:" + length + ",2:" + length + ",3:" + length);
    CHECK(db.scalar("SELECT last_event_id || ',' || events_stored FROM tributary.cursors") == "3,3");
    CHECK(locks_on(db, source.id) == "0");
}
