// tributary.consumer_next (sql/api/42_consumer_next.sql), the batch-shaped
// read, against a real cluster: every guarantee of the consumer groups that it
// touches (the same ones test_consumer_groups.cpp checks for consumer_read),
// called the way a client would, with the previous batch acked by the next
// call. Events are inserted into tributary.events directly.
//
// Nothing here waits for a lease to run out: a test expires a lease by moving
// leased_until into the past, and a retry falls due by retry_base '0' or by
// moving next_attempt_at. Waiting is only for the cluster-wide read watermark
// (next_soon; see Consumer::read_soon), with a generous bound.

#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <pqxx/pqxx>

#include "support/concurrent_consumers.h"
#include "support/group_consumer.h"
#include "support/login_role.h"
#include "support/test_database.h"
#include "support/tributary_cli.h"

using namespace std::chrono_literals;
using namespace tributary::testing;

namespace {

/// Every batch of a drain, one after the other: one Batch holding them all.
void append(Batch& all, const Batch& batch) {
    all.seqs.insert(all.seqs.end(), batch.seqs.begin(), batch.seqs.end());
    all.sources.insert(all.sources.end(), batch.sources.begin(), batch.sources.end());
    all.event_ids.insert(all.event_ids.end(), batch.event_ids.begin(), batch.event_ids.end());
    all.event_keys.insert(all.event_keys.end(), batch.event_keys.begin(), batch.event_keys.end());
    all.payloads.insert(all.payloads.end(), batch.payloads.begin(), batch.payloads.end());
    all.deliveries.insert(all.deliveries.end(), batch.deliveries.begin(), batch.deliveries.end());
}

/// The events the pattern '>' covers, as stored, in log order (tx_id, seq).
Batch stored_log(const TestDatabase& db) {
    pqxx::connection connection(db.url());
    pqxx::nontransaction tx(connection);
    Batch log;
    for (const auto& row :
         tx.exec("SELECT e.seq, s.name, e.event_id, coalesce(e.event_key, e.event_id::text), e.payload::text "
                 "FROM tributary.events e JOIN tributary.sources s ON s.id = e.source_id ORDER BY e.tx_id, e.seq")) {
        log.seqs.push_back(row[0].as<std::int64_t>());
        log.sources.push_back(row[1].as<std::string>());
        log.event_ids.push_back(row[2].is_null() ? std::nullopt
                                                 : std::optional<std::int64_t>(row[2].as<std::int64_t>()));
        log.event_keys.push_back(row[3].as<std::string>());
        log.payloads.push_back(row[4].as<std::string>());
    }
    return log;
}

/// Compares what a consumer was handed with what is stored, field by field.
void check_same_events(const Batch& got, const Batch& expected) {
    CHECK(got.seqs == expected.seqs);
    CHECK(got.sources == expected.sources);
    CHECK(got.event_ids == expected.event_ids);
    CHECK(got.event_keys == expected.event_keys);
    // Byte for byte; a difference is shown once, cut short (one payload is 100 kB).
    REQUIRE(got.payloads.size() == expected.payloads.size());
    const auto differs = std::mismatch(got.payloads.begin(), got.payloads.end(), expected.payloads.begin());
    if (differs.first != got.payloads.end())
        FAIL_CHECK("payload of seq " << expected.seqs[differs.first - got.payloads.begin()] << ": got "
                                     << differs.first->substr(0, 200) << ", stored " << differs.second->substr(0, 200));
}

/// Drains a group with consumer_next, each call acking the batch before:
/// `expected` events in all. Returns them in the order they came. The last
/// call, with nothing left, must still ack the last batch.
Batch drain_with_next(Consumer& consumer, int max, std::size_t expected) {
    Batch all;
    auto next = consumer.next_soon(max);
    CHECK_FALSE(next.previous_acked.has_value());  // no previous batch named
    while (!next.batch.empty()) {
        const auto batch = next.batch;
        CHECK(batch.delivery == 1);
        CHECK(std::all_of(batch.deliveries.begin(), batch.deliveries.end(), [](int d) { return d == 1; }));
        CHECK(batch.seqs.size() <= static_cast<std::size_t>(max));
        append(all, batch);
        // While events are still to come, wait out the watermark; after the
        // last one, a single call must say there is nothing.
        next = all.seqs.size() < expected ? consumer.next_soon(max, &batch) : consumer.next(max, &batch);
        REQUIRE(next.previous_acked == std::optional<bool>(true));
    }
    CHECK(next.batch_id_null);
    CHECK(next.events == "[]");
    return all;
}

/// Drains a group with consumer_read and consumer_ack, for comparison.
Batch drain_with_read(Consumer& consumer, int max) {
    Batch all;
    for (auto batch = consumer.read_soon(max); !batch.empty(); batch = consumer.read_soon(max, 300ms)) {
        append(all, batch);
        REQUIRE(consumer.ack(batch));
    }
    return all;
}

/// The most batches in flight that hold one source (an ordered group: at most 1).
int most_batches_per_source(const TestDatabase& db) {
    return std::stoi(
        db.scalar("SELECT coalesce(max(n), 0) FROM (SELECT count(DISTINCT b.id) AS n "
                  "FROM tributary.consumer_batches b, unnest(b.source_ids) s GROUP BY s) x"));
}

void expire_leases(const TestDatabase& db) {
    db.exec("UPDATE tributary.consumer_batches SET leased_until = now() - interval '1 second'");
}

void check_group_empty(const TestDatabase& db, const std::string& group) {
    const auto s = status_of(db, group);
    CHECK(s.events_behind == 0);
    CHECK(s.batches_in_flight == 0);
    CHECK(s.retries_waiting == 0);
}

/// Payloads that a re-serialising step would change: escapes, non-ASCII,
/// numbers jsonb keeps exactly, scalars and arrays at the top, a big one.
std::vector<std::string> awkward_payloads() {
    return {
        R"({"id": 1, "note": "plain"})",
        R"({"text": "quote \" backslash \\ slash \/ newline \n tab \t"})",
        R"({"unicode": "é 漢字 😀", "escaped": "\u00e9\u001f"})",
        R"({"big": 123456789012345678901234567890, "precise": 1.500, "small": 1e-7, "neg": -0})",
        R"([1, "two", null, true, {"nested": [[], {}]}])",
        R"("just a string")",
        R"(42)",
        R"(null)",
        R"({})",
        R"({"html": "<script>&'</script>", "b": {"a": 2, "aa": 1}})",
        R"({"long": ")" + std::string(100000, 'x') + R"("})",
    };
}

}  // namespace

TEST_CASE("consumer_next drains a group: each event once, in log order, as stored; the last call acks",
          "[consumer-next]") {
    TestDatabase db;
    const int orders = add_source(db, "orders.eu");
    run_tributary(db.url(), {"source", "add", "stripe.events", "--url", "http://127.0.0.1:9/v1/events", "--paginate",
                             "after-key", "--records", "/data", "--key", "/key"});
    const auto stripe = std::stoi(db.scalar("SELECT id FROM tributary.sources WHERE name = 'stripe.events'"));
    db.exec("SELECT tributary.group_create('next', '>', 'beginning')");
    db.exec("SELECT tributary.group_create('rows', '>', 'beginning')");
    const auto payloads = awkward_payloads();
    {
        // Three transactions: orders 1-900, then 300 events keyed by text, then orders 901-1800.
        pqxx::connection connection(db.url());
        for (int part = 0; part < 3; ++part) {
            pqxx::work tx(connection);
            for (int i = 0; i < (part == 1 ? 300 : 900); ++i) {
                const auto& payload = payloads[i % payloads.size()];
                if (part == 1)
                    tx.exec_params("INSERT INTO tributary.events (source_id, event_key, payload) VALUES ($1, $2, $3)",
                                   stripe, i == 7 ? R"(["42","2024-05-01T10:00:00Z"])" : "evt_" + std::to_string(i),
                                   payload);
                else
                    tx.exec_params("INSERT INTO tributary.events (source_id, event_id, payload) VALUES ($1, $2, $3)",
                                   orders, part * 450 + i + 1, payload);
            }
            tx.commit();
        }
    }
    const auto log = stored_log(db);
    REQUIRE(log.seqs.size() == 2100);
    REQUIRE(std::count(log.event_ids.begin(), log.event_ids.end(), std::nullopt) == 300);

    Consumer consumer(db.url(), "next", "c");
    const auto got = drain_with_next(consumer, 500, log.seqs.size());
    check_same_events(got, log);
    check_group_empty(db, "next");
    CHECK(db.scalar("SELECT count(*) FROM tributary.consumer_batches") == "0");

    // consumer_read hands out the same events, described the same way.
    Consumer rows(db.url(), "rows", "c");
    check_same_events(drain_with_read(rows, 700), got);
    check_group_empty(db, "rows");

    SECTION("nothing left: a call without a previous batch gets one row of NULLs and '[]'") {
        const auto nothing = consumer.next();
        CHECK(nothing.batch_id_null);
        CHECK(nothing.events == "[]");
        CHECK_FALSE(nothing.previous_acked.has_value());
        CHECK(db.scalar("SELECT count(*) || ' ' || count(lease_token) || ' ' || count(delivery) || ' ' || "
                        "bool_and(previous_acked IS NULL) FROM tributary.consumer_next('next', 'c')") == "1 0 0 true");
    }
}

TEST_CASE("consumer_next never passes a transaction still open, whichever commits first", "[consumer-next]") {
    TestDatabase db;
    const int first_loader = add_source(db, "first");
    const int second_loader = add_source(db, "second");
    db.exec("SELECT tributary.group_create('g', '>', 'beginning')");
    Consumer consumer(db.url(), "g", "c1");
    pqxx::connection a_connection(db.url());
    pqxx::connection b_connection(db.url());

    SECTION("the open transaction is the older one: nothing is read until it commits") {
        pqxx::work a(a_connection);
        const auto low = insert_events(a, first_loader, 1, 1);  // lower seq, stays open
        const auto a_xid = a.exec1("SELECT pg_current_xact_id()::text")[0].as<std::string>();
        pqxx::work b(b_connection);
        const auto high = insert_events(b, second_loader, 1, 1);  // higher seq, commits first
        b.commit();
        REQUIRE(high[0] > low[0]);

        CHECK(consumer.next().batch.empty());
        CHECK(db.scalar("SELECT cursor_tx <= '" + a_xid + "'::xid8 FROM tributary.consumer_groups") == "t");

        a.commit();
        const auto batch = consumer.next_soon().batch;
        CHECK(batch.seqs == std::vector<std::int64_t>{low[0], high[0]});  // (tx_id, seq) order
        const auto after = consumer.next(1000, &batch);
        CHECK(after.previous_acked == std::optional<bool>(true));
        CHECK(after.batch.empty());
    }

    SECTION("the committed transaction is the older one: it is read, the open one later") {
        pqxx::work b(b_connection);
        b.exec("SELECT pg_current_xact_id()");  // B takes the lower transaction id
        pqxx::work a(a_connection);
        const auto low = insert_events(a, first_loader, 1, 1);  // lower seq, stays open
        const auto high = insert_events(b, second_loader, 1, 1);
        b.commit();
        REQUIRE(high[0] > low[0]);

        const auto first = consumer.next_soon().batch;
        CHECK(first.seqs == std::vector<std::int64_t>{high[0]});
        const auto acked = consumer.next(1000, &first);  // acks, and A's event is not readable yet
        CHECK(acked.previous_acked == std::optional<bool>(true));
        CHECK(acked.batch.empty());

        a.commit();
        const auto second = consumer.next_soon().batch;
        CHECK(second.seqs == std::vector<std::int64_t>{low[0]});  // not skipped
        CHECK(consumer.next(1000, &second).previous_acked == std::optional<bool>(true));
    }
    CHECK(consumer.next().batch.empty());
    check_group_empty(db, "g");
}

TEST_CASE("consumer_next: four consumers and two loaders at once, every event acked exactly once, none skipped",
          "[consumer-next]") {
    TestDatabase db;
    ConcurrentTally tally;
    run_two_loaders_four_consumers(
        db,
        [](Consumer& consumer, const std::atomic<bool>& stop, ConcurrentTally& tally) {
            std::optional<Batch> held;
            while (!stop) {
                const auto next = consumer.next(50, held ? &*held : nullptr);
                if (held) {
                    if (next.previous_acked != std::optional<bool>(true))
                        tally.problem("ack refused for batch " + std::to_string(held->id));
                    else tally.acked(*held);
                }
                held.reset();
                if (next.batch.empty()) {
                    std::this_thread::sleep_for(2ms);
                    continue;
                }
                if (next.batch.delivery != 1)
                    tally.problem("delivery " + std::to_string(next.batch.delivery) + " without a failure");
                held = next.batch;
            }
            if (held) {
                if (consumer.ack(*held)) tally.acked(*held);
                else tally.problem("last ack refused for batch " + std::to_string(held->id));
            }
        },
        tally);

    for (const auto& p : tally.problems()) UNSCOPED_INFO(p);
    CHECK(tally.problems().empty());
    auto acked = tally.acked_seqs();
    std::sort(acked.begin(), acked.end());
    CHECK(std::adjacent_find(acked.begin(), acked.end()) == acked.end());  // no duplicates
    CHECK(acked.size() == static_cast<std::size_t>(kEventsLoaded));
    auto stored = stored_log(db).seqs;
    std::sort(stored.begin(), stored.end());
    CHECK(stored == acked);  // none skipped
    check_group_empty(db, "g");
}

TEST_CASE("consumer_next: an expired batch is taken over; the old holder's ack through consumer_next is refused",
          "[consumer-next]") {
    TestDatabase db;
    const int source = add_source(db, "s");
    db.exec("SELECT tributary.group_create('g', '>', 'beginning', p_lease => '1 hour')");
    commit_events(db, source, 1, 5);
    Consumer a(db.url(), "g", "a");
    Consumer b(db.url(), "g", "b");

    const auto first = a.next_soon().batch;
    REQUIRE(first.seqs.size() == 5);
    CHECK(first.delivery == 1);
    CHECK(b.next().batch.empty());  // leased to A

    SECTION("taken over: delivery + 1, a new token; A's consumer_next(prev) acks nothing") {
        expire_leases(db);  // A stalls past its lease
        const auto second = b.next().batch;
        REQUIRE(second.id == first.id);  // B takes the batch over
        CHECK(second.delivery == 2);
        CHECK(second.deliveries == std::vector<int>(5, 2));
        CHECK(second.token != first.token);
        CHECK(second.seqs == first.seqs);
        CHECK(second.payloads == first.payloads);

        const auto late = a.next(1000, &first);
        CHECK(late.previous_acked == std::optional<bool>(false));
        CHECK(late.batch.empty());  // and nothing else to do
        // The events stay with B, under B's token.
        CHECK(db.scalar("SELECT consumer || ' ' || lease_token || ' ' || delivery FROM tributary.consumer_batches") ==
              "b " + second.token + " 2");
        auto s = status_of(db, "g");
        CHECK(s.batches_in_flight == 1);
        CHECK(s.retries_waiting == 0);
        CHECK(s.events_behind == 0);  // handed out, not acked
        CHECK(s.oldest_age_s >= 0);

        const auto done = b.next(1000, &second);
        CHECK(done.previous_acked == std::optional<bool>(true));
        CHECK(done.batch.empty());
        check_group_empty(db, "g");
        CHECK(status_of(db, "g").dead_letters == 0);
    }

    SECTION("taken over by the old holder itself, through consumer_next: its old token no longer acks") {
        expire_leases(db);
        const auto again = a.next().batch;
        REQUIRE(again.id == first.id);
        CHECK(again.delivery == 2);
        CHECK(a.next(1000, &first).previous_acked == std::optional<bool>(false));
        CHECK(status_of(db, "g").batches_in_flight == 1);
        CHECK(a.next(1000, &again).previous_acked == std::optional<bool>(true));
        check_group_empty(db, "g");
    }

    SECTION("an ack after the lease ran out still counts while no one took the batch over") {
        expire_leases(db);
        const auto acked = a.next(1000, &first);
        CHECK(acked.previous_acked == std::optional<bool>(true));
        CHECK(acked.batch.empty());  // the expired batch was acked before anything was taken over
        CHECK(b.next().batch.empty());
        check_group_empty(db, "g");
    }
}

TEST_CASE("consumer_next refuses late acks and wrong tokens, and bad arguments without acking anything",
          "[consumer-next]") {
    TestDatabase db;
    const int source = add_source(db, "s");
    db.exec("SELECT tributary.group_create('g', '>', 'beginning', p_lease => '1 hour')");
    commit_events(db, source, 1, 4);
    Consumer consumer(db.url(), "g", "c");
    const auto batch = consumer.next_soon(2).batch;
    REQUIRE(batch.event_ids == ids({1, 2}));
    const auto in_flight = [&] { return status_of(db, "g").batches_in_flight; };

    SECTION("a wrong token acks nothing") {
        auto forged = batch;
        forged.token = db.scalar("SELECT gen_random_uuid()::text");
        const auto next = consumer.next(2, &forged);
        CHECK(next.previous_acked == std::optional<bool>(false));
        CHECK(next.batch.event_ids == ids({3, 4}));  // the call still leases the next batch
        CHECK(db.scalar("SELECT count(*) FROM tributary.consumer_batches WHERE id = " + std::to_string(batch.id) +
                        " AND lease_token = '" + batch.token + "'") == "1");
        auto unknown = batch;
        unknown.id = 999999;
        CHECK(consumer.next(2, &unknown).previous_acked == std::optional<bool>(false));
        CHECK(in_flight() == 2);
    }

    SECTION("a batch is acked once: the second ack is late") {
        const auto next = consumer.next(2, &batch);
        CHECK(next.previous_acked == std::optional<bool>(true));
        CHECK(consumer.next(2, &batch).previous_acked == std::optional<bool>(false));
        CHECK_FALSE(consumer.ack(batch));
        CHECK(in_flight() == 1);  // only the batch of 3-4
    }

    SECTION("after group_reset the old batch's ack is late") {
        db.exec("SELECT tributary.group_reset('g', 'end')");
        const auto next = consumer.next(2, &batch);
        CHECK(next.previous_acked == std::optional<bool>(false));
        CHECK(next.batch.empty());
        check_group_empty(db, "g");
    }

    SECTION("only one of prev_batch_id and prev_lease_token is 22023, and acks nothing") {
        pqxx::connection connection(db.url());
        pqxx::nontransaction tx(connection);
        CHECK(sqlstate_of([&] {
                  tx.exec_params("SELECT * FROM tributary.consumer_next('g', 'c', 2, $1, NULL)", batch.id);
              }) == "22023");
        CHECK(sqlstate_of([&] {
                  tx.exec_params("SELECT * FROM tributary.consumer_next('g', 'c', 2, NULL, $1::uuid)", batch.token);
              }) == "22023");
        CHECK(in_flight() == 1);
    }

    SECTION("a bad max, an empty consumer, an unknown group: errors, and the previous batch stays leased") {
        pqxx::connection connection(db.url());
        pqxx::nontransaction tx(connection);
        const auto state_of = [&](const std::string& group, const std::optional<std::string>& name,
                                  std::optional<int> max) {
            return sqlstate_of([&] {
                tx.exec_params("SELECT * FROM tributary.consumer_next($1, $2, $3, $4, $5::uuid)", group, name, max,
                               batch.id, batch.token);
            });
        };
        CHECK(state_of("g", "c", 0) == "22023");
        CHECK(state_of("g", "c", 100001) == "22023");
        CHECK(state_of("g", "c", std::nullopt) == "22023");
        CHECK(state_of("g", "", 2) == "22023");
        CHECK(state_of("g", std::nullopt, 2) == "22023");
        CHECK(state_of("nope", "c", 2) == "P0002");
        // An error rolls the whole call back: the ack it began with too.
        CHECK(db.scalar("SELECT count(*) FROM tributary.consumer_batches WHERE lease_token = '" + batch.token + "'") ==
              "1");
        CHECK(sqlstate_of([&] { tx.exec("SELECT * FROM tributary.consumer_next('nope', 'c')"); }) == "P0002");
        CHECK(sqlstate_of([&] { tx.exec("SELECT * FROM tributary.consumer_next('g', 'c', -1)"); }) == "22023");
        CHECK(consumer.next(2, &batch).previous_acked == std::optional<bool>(true));
    }

    SECTION("a batch of another group is refused (22023), and stays leased") {
        db.exec("SELECT tributary.group_create('other', '>', 'beginning')");
        Consumer other(db.url(), "other", "c");
        CHECK(sqlstate_of([&] { other.next(2, &batch); }) == "22023");
        CHECK(in_flight() == 1);
        CHECK(consumer.next(2, &batch).previous_acked == std::optional<bool>(true));
    }

    SECTION("a deleted group: the batch is gone with it, and the call says the group is unknown") {
        CHECK(db.scalar("SELECT tributary.group_delete('g')") == "t");
        CHECK(sqlstate_of([&] { consumer.next(2, &batch); }) == "P0002");
    }
}

TEST_CASE("consumer_next: a poison event comes back alone until max_deliveries, then the group moves on",
          "[consumer-next]") {
    TestDatabase db;
    const int source = add_source(db, "s");
    db.exec("SELECT tributary.group_create('g', '>', 'beginning', p_max_deliveries => 3)");
    db.exec("UPDATE tributary.consumer_groups SET retry_base = '0'");  // a retry is due at once
    {
        pqxx::connection connection(db.url());
        pqxx::work tx(connection);
        insert_events(tx, source, 1, 4);
        insert_events(tx, source, 5, 1, R"({"poison": true})");
        insert_events(tx, source, 6, 5);
        tx.commit();
    }
    const auto poison = std::stoll(db.scalar("SELECT seq FROM tributary.events WHERE event_id = 5"));
    Consumer consumer(db.url(), "g", "c");

    auto batch = consumer.next_soon().batch;
    REQUIRE(batch.seqs.size() == 10);
    REQUIRE(batch.holds(poison));
    CHECK(consumer.ack(batch, {poison}, "poison"));  // the neighbours are done
    CHECK(status_of(db, "g").retries_waiting == 1);

    for (int delivery = 2; delivery <= 3; ++delivery) {
        INFO("delivery " << delivery);
        batch = consumer.next_soon().batch;
        REQUIRE(batch.seqs == std::vector<std::int64_t>{poison});  // alone
        CHECK(batch.delivery == delivery);
        CHECK(batch.deliveries == std::vector<int>{delivery});
        CHECK(batch.payloads == std::vector<std::string>{R"({"poison": true})"});
        CHECK(consumer.ack(batch, {poison}, "poison " + std::to_string(delivery)));
    }
    CHECK(db.scalar("SELECT string_agg(seq || ':' || deliveries || ':' || last_error, ',') "
                    "FROM tributary.dead_letters") == std::to_string(poison) + ":3:poison 3");

    // Nothing comes back; later events flow.
    CHECK(consumer.next().batch.empty());
    const auto later = commit_events(db, source, 11, 2);
    batch = consumer.next_soon().batch;
    CHECK(batch.seqs == later);
    CHECK(batch.delivery == 1);
    CHECK(consumer.next(1000, &batch).previous_acked == std::optional<bool>(true));
    check_group_empty(db, "g");
    CHECK(status_of(db, "g").dead_letters == 1);
}

TEST_CASE("consumer_next in an ordered group: never a source's later events while its earlier batch or retry is out",
          "[consumer-next]") {
    TestDatabase db;
    const int a = add_source(db, "a");
    const int b = add_source(db, "b");
    commit_events(db, a, 1, 3);
    commit_events(db, b, 1, 3);
    commit_events(db, a, 4, 3);
    commit_events(db, b, 4, 3);
    db.exec("SELECT tributary.group_create('g', '>', 'beginning', p_max_deliveries => 1000, p_ordered => true)");
    db.exec("UPDATE tributary.consumer_groups SET retry_base = '1 hour'");  // retries wait until the test says
    Consumer c0(db.url(), "g", "c0");
    Consumer c1(db.url(), "g", "c1");
    Consumer c2(db.url(), "g", "c2");
    std::map<std::string, std::vector<std::int64_t>> done;  // source -> event ids, in ack order
    const auto acked = [&](const Batch& batch, const std::vector<std::int64_t>& failed = {}) {
        for (std::size_t i = 0; i < batch.seqs.size(); ++i)
            if (std::find(failed.begin(), failed.end(), batch.seqs[i]) == failed.end())
                done[batch.sources[i]].push_back(batch.event_ids[i].value());
    };

    const auto first = c0.next_soon(3).batch;  // a1-a3
    CHECK(first.sources == std::vector<std::string>{"a", "a", "a"});
    const auto second = c1.next(4).batch;  // b1-b3, and stops before a4: a is busy
    CHECK(second.sources == std::vector<std::string>{"b", "b", "b"});
    CHECK(second.event_ids == ids({1, 2, 3}));
    CHECK(c2.next(10).batch.empty());  // a4 comes next
    CHECK(most_batches_per_source(db) == 1);

    // c0 fails a2 (and so a3 after it): a stays busy while they wait.
    const std::vector<std::int64_t> failed = {first.seqs[1], first.seqs[2]};
    CHECK(c0.ack(first, failed));
    acked(first, failed);
    const auto after_b = c1.next(10, &second);  // acks b1-b3; a4 still may not go
    CHECK(after_b.previous_acked == std::optional<bool>(true));
    acked(second);
    CHECK(after_b.batch.empty());
    CHECK(c2.next(10).batch.empty());

    db.exec("UPDATE tributary.consumer_retries SET next_attempt_at = now()");
    const auto retry_a2 = c2.next(10).batch;
    CHECK(retry_a2.event_ids == ids({2}));
    CHECK(retry_a2.delivery == 2);
    CHECK(c0.next(10).batch.empty());  // not a3 while a2 is out, nor a4
    CHECK(most_batches_per_source(db) == 1);

    const auto retry_a3 = c2.next(10, &retry_a2);  // acks a2; a3 is next for a, alone
    CHECK(retry_a3.previous_acked == std::optional<bool>(true));
    acked(retry_a2);
    CHECK(retry_a3.batch.event_ids == ids({3}));
    CHECK(retry_a3.batch.delivery == 2);

    const auto rest = c2.next(10, &retry_a3.batch);  // acks a3; a4-a6 and b4-b6 are free
    CHECK(rest.previous_acked == std::optional<bool>(true));
    acked(retry_a3.batch);
    CHECK(rest.batch.sources == std::vector<std::string>{"a", "a", "a", "b", "b", "b"});
    CHECK(rest.batch.event_ids == ids({4, 5, 6, 4, 5, 6}));
    CHECK(c2.next(10, &rest.batch).previous_acked == std::optional<bool>(true));
    acked(rest.batch);

    const std::vector<std::int64_t> in_order = {1, 2, 3, 4, 5, 6};
    CHECK(done["a"] == in_order);
    CHECK(done["b"] == in_order);
    check_group_empty(db, "g");
}

TEST_CASE("consumer_next: tributary_consumer may call it, PUBLIC and the other roles may not", "[consumer-next]") {
    TestDatabase db;
    const int source = add_source(db, "s");
    db.exec("SELECT tributary.group_create('g', '>', 'beginning')");
    commit_events(db, source, 1, 3);
    LoginRole consumer_role(db, "consumer"), loader(db, "loader"), admin(db, "admin"), stranger(db, "stranger"),
        nobody(db, "nobody");
    run_tributary(db.url(), {"grant", "consumer", consumer_role.name()});
    run_tributary(db.url(), {"grant", "loader", loader.name()});
    run_tributary(db.url(), {"grant", "admin", admin.name()});
    db.exec("GRANT USAGE ON SCHEMA tributary TO " + stranger.name());

    CHECK(db.scalar("SELECT has_function_privilege('public', "
                    "'tributary.consumer_next(text, text, int, bigint, uuid)', 'EXECUTE')") == "f");
    // nobody holds what PUBLIC holds; stranger may use the schema, no more.
    for (const auto* role : {&nobody, &stranger, &loader, &admin}) {
        INFO(role->name());
        CHECK(denied(as_user(db.url(), role->name()), "SELECT * FROM tributary.consumer_next('g', 'x')"));
    }
    CHECK(status_of(db, "g").batches_in_flight == 0);

    Consumer consumer(as_user(db.url(), consumer_role.name()), "g", "c");
    const auto batch = consumer.next_soon().batch;
    CHECK(batch.event_ids == ids({1, 2, 3}));
    const auto after = consumer.next(1000, &batch);
    CHECK(after.previous_acked == std::optional<bool>(true));
    CHECK(after.batch.empty());
    check_group_empty(db, "g");
}

TEST_CASE("consumer_next and consumer_read/ack/fail/extend mix: a batch leased by one is closed by the other",
          "[consumer-next]") {
    TestDatabase db;
    const int source = add_source(db, "s");
    db.exec("SELECT tributary.group_create('g', '>', 'beginning', p_lease => '1 hour')");
    db.exec("UPDATE tributary.consumer_groups SET retry_base = '0'");
    commit_events(db, source, 1, 6);
    Consumer consumer(db.url(), "g", "c");

    const auto by_read = consumer.read_soon(2);
    REQUIRE(by_read.event_ids == ids({1, 2}));
    const auto by_next = consumer.next(2, &by_read);  // consumer_read's batch acked by consumer_next
    CHECK(by_next.previous_acked == std::optional<bool>(true));
    CHECK(by_next.batch.event_ids == ids({3, 4}));
    CHECK(consumer.extend(by_next.batch, "2 hours"));  // consumer_next's batch: extended and acked by the row API
    CHECK(consumer.ack(by_next.batch));

    const auto to_fail = consumer.next(1).batch;
    REQUIRE(to_fail.event_ids == ids({5}));
    CHECK(consumer.fail(to_fail, "no"));         // consumer_next's batch failed by consumer_fail ...
    const auto retried = consumer.read_soon(1);  // ... comes back through consumer_read
    CHECK(retried.event_ids == ids({5}));
    CHECK(retried.delivery == 2);

    const auto last = consumer.next(10, &retried);
    CHECK(last.previous_acked == std::optional<bool>(true));
    CHECK(last.batch.event_ids == ids({6}));
    expire_leases(db);
    const auto taken_over = consumer.read(10);  // consumer_next's expired batch taken over by consumer_read
    CHECK(taken_over.id == last.batch.id);
    CHECK(taken_over.delivery == 2);
    CHECK_FALSE(consumer.ack(last.batch));  // the old token
    const auto end = consumer.next(10, &taken_over);
    CHECK(end.previous_acked == std::optional<bool>(true));
    CHECK(end.batch.empty());
    check_group_empty(db, "g");
    CHECK(status_of(db, "g").dead_letters == 0);
}

TEST_CASE("consumer_next: an expired batch at max_deliveries is split into single retries, a single event dead",
          "[consumer-next]") {
    TestDatabase db;
    const int source = add_source(db, "s");
    db.exec("SELECT tributary.group_create('g', '>', 'beginning', p_max_deliveries => 2)");
    const auto seqs = commit_events(db, source, 1, 3);
    Consumer consumer(db.url(), "g", "c");

    auto batch = consumer.next_soon().batch;
    REQUIRE(batch.seqs == seqs);
    expire_leases(db);
    batch = consumer.next().batch;
    CHECK(batch.delivery == 2);
    CHECK(batch.seqs == seqs);
    expire_leases(db);
    // Delivered twice and expired: each event gets its own delivery now.
    batch = consumer.next().batch;
    REQUIRE(batch.seqs.size() == 1);
    CHECK(batch.delivery == 3);
    CHECK(batch.deliveries == std::vector<int>{3});
    CHECK(status_of(db, "g").retries_waiting == 2);
    expire_leases(db);
    // A single event past max_deliveries whose lease expires is dead; the call goes on to the next.
    const auto next = consumer.next(1000, &batch);
    CHECK(next.previous_acked == std::optional<bool>(true));  // acked before any take-over: it counts
    REQUIRE(next.batch.seqs.size() == 1);
    CHECK(next.batch.seqs != batch.seqs);
    CHECK(status_of(db, "g").dead_letters == 0);

    // This time the lease runs out before the ack: the take-over of another call dead-letters it.
    expire_leases(db);
    const auto other = consumer.next().batch;
    REQUIRE(other.seqs.size() == 1);
    CHECK(other.seqs != next.batch.seqs);
    CHECK(db.scalar("SELECT seq || ' ' || deliveries || ' ' || last_error FROM tributary.dead_letters") ==
          std::to_string(next.batch.seqs[0]) + " 3 lease expired 3 times (last held by c)");
    CHECK(consumer.next(1000, &next.batch).previous_acked == std::optional<bool>(false));
    const auto end = consumer.next(1000, &other);
    CHECK(end.previous_acked == std::optional<bool>(true));
    CHECK(end.batch.empty());
    check_group_empty(db, "g");
    CHECK(status_of(db, "g").dead_letters == 1);
}
