// The consumer-group SQL API (sql/api/, sql/internal/) against a real
// cluster, called the way any client would: libpqxx, one autocommit statement
// per call. Events are inserted into tributary.events directly.
//
// The read watermark is cluster-wide: any transaction open anywhere on the
// cluster (an autovacuum ANALYZE, say) holds it back for a moment. So a test
// that expects events waits for them a little (read_soon); a test that
// expects nothing is right at once.

#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <thread>

#include <pqxx/pqxx>

#include "support/concurrent_consumers.h"
#include "support/consume_rig.h"
#include "support/group_consumer.h"
#include "support/test_database.h"
#include "support/tributary_cli.h"

using namespace std::chrono_literals;
using namespace tributary::testing;

TEST_CASE("a read never passes a transaction still open, whichever commits first", "[consumer]") {
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

        // B's events sit above A's transaction id: not readable yet, and the
        // cursor must not move past anything A may still commit.
        CHECK(consumer.read().empty());
        CHECK(db.scalar("SELECT cursor_tx <= '" + a_xid + "'::xid8 FROM tributary.consumer_groups") == "t");

        a.commit();
        const auto batch = consumer.read_soon();
        CHECK(batch.seqs == std::vector<std::int64_t>{low[0], high[0]});  // (tx_id, seq) order
        CHECK(consumer.ack(batch));
    }

    SECTION("the committed transaction is the older one: it is read, the open one later") {
        pqxx::work b(b_connection);
        b.exec("SELECT pg_current_xact_id()");  // B takes the lower transaction id
        pqxx::work a(a_connection);
        const auto low = insert_events(a, first_loader, 1, 1);  // lower seq, stays open
        const auto high = insert_events(b, second_loader, 1, 1);
        b.commit();
        REQUIRE(high[0] > low[0]);

        const auto first = consumer.read_soon();
        CHECK(first.seqs == std::vector<std::int64_t>{high[0]});
        CHECK(consumer.ack(first));
        CHECK(consumer.read().empty());

        a.commit();
        const auto second = consumer.read_soon();
        CHECK(second.seqs == std::vector<std::int64_t>{low[0]});  // not skipped
        CHECK(consumer.ack(second));
    }
    CHECK(consumer.read().empty());
    CHECK(status_of(db, "g").events_behind == 0);
}

TEST_CASE("a group from a timestamp does not start past a transaction still open", "[consumer]") {
    TestDatabase db;
    const int first_loader = add_source(db, "first");
    const int second_loader = add_source(db, "second");
    const auto since = db.scalar("SELECT now()::text");
    pqxx::connection a_connection(db.url());
    pqxx::connection b_connection(db.url());
    pqxx::work a(a_connection);
    const auto open = insert_events(a, first_loader, 1, 1);  // loaded after `since`, not committed
    pqxx::work b(b_connection);
    const auto committed = insert_events(b, second_loader, 1, 1);  // the first event anyone sees after `since`
    b.commit();
    db.exec("SELECT tributary.group_create('g', '>', '" + since + "')");
    a.commit();

    Consumer consumer(db.url(), "g", "c");
    std::vector<std::int64_t> seen;
    for (auto batch = consumer.read_soon(); !batch.empty(); batch = consumer.read_soon(1000, 300ms)) {
        seen.insert(seen.end(), batch.seqs.begin(), batch.seqs.end());
        CHECK(consumer.ack(batch));
    }
    CHECK(seen == std::vector<std::int64_t>{open[0], committed[0]});
}

TEST_CASE("every group gets exactly the events of the sources its pattern matches", "[consumer]") {
    TestDatabase db;
    const int eu = add_source(db, "orders.eu");
    const int us = add_source(db, "orders.us");
    const int returns = add_source(db, "orders.eu.returns");
    const int billing = add_source(db, "billing.eu");
    commit_events(db, eu, 1, 3);  // before the groups: 'end' (the default) skips these
    db.exec("SELECT tributary.group_create('star', 'orders.*')");
    db.exec("SELECT tributary.group_create('rest', 'orders.>')");
    db.exec("SELECT tributary.group_create('eu', '*.eu')");
    db.exec("SELECT tributary.group_create('all', '>')");

    commit_events(db, eu, 4, 2);
    commit_events(db, us, 1, 2);
    commit_events(db, returns, 1, 2);
    commit_events(db, billing, 1, 2);
    const int asia = add_source(db, "orders.asia");  // added after the groups
    commit_events(db, asia, 1, 2);

    const auto expect = [](std::initializer_list<std::string> sources) {
        std::multiset<std::string> events;
        for (const auto& s : sources)
            for (const auto id : s == "orders.eu" ? std::vector<int>{4, 5} : std::vector<int>{1, 2})
                events.insert(s + ":" + std::to_string(id));
        return events;
    };
    Consumer star(db.url(), "star", "c");
    Consumer rest(db.url(), "rest", "c");
    Consumer eu_group(db.url(), "eu", "c");
    Consumer all(db.url(), "all", "c");
    CHECK(drain(star) == expect({"orders.eu", "orders.us", "orders.asia"}));
    CHECK(drain(rest) == expect({"orders.eu", "orders.us", "orders.eu.returns", "orders.asia"}));
    CHECK(drain(eu_group) == expect({"orders.eu", "billing.eu"}));
    CHECK(drain(all) == expect({"orders.eu", "orders.us", "orders.eu.returns", "billing.eu", "orders.asia"}));
    for (const auto* group : {"star", "rest", "eu", "all"}) CHECK(status_of(db, group).events_behind == 0);
}

TEST_CASE("a source added after a group has read reaches it: the matches a group keeps are cleared", "[consumer]") {
    TestDatabase db;
    const int eu = add_source(db, "orders.eu");
    db.exec("SELECT tributary.group_create('star', 'orders.*')");
    Consumer star(db.url(), "star", "c");
    commit_events(db, eu, 1, 2);
    CHECK(drain(star) == std::multiset<std::string>{"orders.eu:1", "orders.eu:2"});
    CHECK(db.scalar("SELECT source_bits IS NOT NULL FROM tributary.consumer_groups WHERE name = 'star'") == "t");

    // Added, then renamed into the pattern, by hand: each change clears the kept matches.
    const int us = add_source(db, "orders.us");
    CHECK(db.scalar("SELECT source_bits IS NULL FROM tributary.consumer_groups WHERE name = 'star'") == "t");
    commit_events(db, us, 1, 1);
    CHECK(drain(star) == std::multiset<std::string>{"orders.us:1"});
    const int misnamed = add_source(db, "billing.asia");
    commit_events(db, misnamed, 1, 1);
    CHECK(drain(star).empty());
    db.exec("UPDATE tributary.sources SET name = 'orders.asia' WHERE id = " + std::to_string(misnamed));
    commit_events(db, misnamed, 2, 1);
    CHECK(drain(star) == std::multiset<std::string>{"orders.asia:2"});
    // A source removed (it had no events) matches nothing any more, and breaks nothing.
    add_source(db, "orders.gone");
    db.exec("DELETE FROM tributary.sources WHERE name = 'orders.gone'");
    commit_events(db, eu, 3, 1);
    CHECK(drain(star) == std::multiset<std::string>{"orders.eu:3"});
}

namespace {

/// Whether a session runs `query_start` and waits on a heavyweight lock (an advisory one here).
bool waits_on_a_lock(const TestDatabase& db, const std::string& query_start) {
    return db.scalar(
               "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' "
               "AND query LIKE '" +
               query_start + "%'") != "0";
}

}  // namespace

// A group's kept matches are computed by its first read; a source added in a transaction that
// overlaps the group's creation is cleared from no group it cannot see, and would be missing from
// that group's matches for good (its events never read). So the two changes queue: the source's
// trigger takes the group-sources lock shared, group_create exclusive.
TEST_CASE("a group created while a source is being added gets that source's events, whichever begins first",
          "[consumer]") {
    TestDatabase db;
    const bool source_first = GENERATE(true, false);
    INFO((source_first ? "the source's transaction first" : "the group's transaction first"));
    pqxx::connection first(db.url());
    pqxx::work open(first);
    if (source_first)
        open.exec("INSERT INTO tributary.sources (name, url) VALUES ('orders.eu', 'http://127.0.0.1:9/e')");
    else open.exec("SELECT tributary.group_create('star', 'orders.*')");
    std::thread second([&] {
        if (source_first) db.exec("SELECT tributary.group_create('star', 'orders.*')");
        else add_source(db, "orders.eu");
    });
    const bool queued =
        wait_until([&] { return waits_on_a_lock(db, source_first ? "SELECT tributary.group_create" : "INSERT"); }, 30s);
    open.commit();
    second.join();
    REQUIRE(queued);

    Consumer star(db.url(), "star", "c");
    CHECK(drain(star).empty());  // the first read keeps its matches
    const int eu = std::stoi(db.scalar("SELECT id FROM tributary.sources WHERE name = 'orders.eu'"));
    commit_events(db, eu, 1, 2);
    CHECK(drain(star) == std::multiset<std::string>{"orders.eu:1", "orders.eu:2"});
}

TEST_CASE("pattern_matches: '*' is one segment, '>' the rest; bad patterns are refused", "[consumer]") {
    TestDatabase db;
    struct Case {
        const char* pattern;
        const char* name;
        bool matches;
    };
    const Case cases[] = {
        {">", "orders", true},
        {">", "orders.eu.x", true},
        {"orders", "orders", true},
        {"orders", "orders.eu", false},
        {"orders.*", "orders.eu", true},
        {"orders.*", "orders", false},
        {"orders.*", "orders.eu.x", false},
        {"orders.>", "orders.eu", true},
        {"orders.>", "orders.eu.x", true},
        {"orders.>", "orders", false},
        {"*.eu", "orders.eu", true},
        {"*.eu", "billing.eu", true},
        {"*.eu", "eu", false},
        {"*.eu", "orders.us", false},
        {"*.*", "a.b", true},
        {"*.*", "a.b.c", false},
        {"*.>", "a.b.c", true},
        {"*", "orders", true},
        {"orders.eu", "orders.eux", false},
        {"Orders", "orders", false},
        {"a-b_c.*", "a-b_c.1", true},
        {"orders.*", "ordersXeu", false},
    };
    pqxx::connection connection(db.url());
    for (const auto& c : cases) {
        pqxx::nontransaction tx(connection);
        INFO(c.pattern << " vs " << c.name);
        CHECK(tx.exec_params("SELECT tributary.pattern_matches($1, $2)", c.pattern, c.name)[0][0].as<bool>() ==
              c.matches);
    }
    for (const auto* bad : {"", "orders..eu", ".orders", "orders.", "orders*", "or>ders", "a.>.b", "> .x", "a b",
                            "orders.**", ">>", "a.>x", "é"}) {
        INFO("pattern '" << bad << "'");
        CHECK(sqlstate_of([&] {
                  pqxx::nontransaction tx(connection);
                  tx.exec_params("SELECT tributary.group_create('g', $1)", std::string(bad));
              }) == "22023");
        CHECK(sqlstate_of([&] {
                  pqxx::nontransaction tx(connection);
                  tx.exec_params("SELECT tributary.pattern_matches($1, 'x')", std::string(bad));
              }) == "22023");
    }
    CHECK(db.scalar("SELECT count(*) FROM tributary.consumer_groups") == "0");
    // The message says how to write one.
    try {
        db.exec("SELECT tributary.group_create('g', 'orders.>.eu')");
        FAIL("expected an error");
    } catch (const pqxx::sql_error& e) {
        CHECK_THAT(e.what(), Catch::Contains("'>' may only be the last segment"));
    }
}

TEST_CASE("a consumer that lost its lease cannot ack, fail or extend the new delivery", "[consumer]") {
    TestDatabase db;
    const int source = add_source(db, "s");
    db.exec("SELECT tributary.group_create('g', '>', 'beginning', p_lease => '200 ms')");
    commit_events(db, source, 1, 5);
    Consumer a(db.url(), "g", "a");
    Consumer b(db.url(), "g", "b");

    const auto first = a.read_soon();
    REQUIRE(first.seqs.size() == 5);
    CHECK(first.delivery == 1);
    CHECK(b.read().empty());             // leased to A
    std::this_thread::sleep_for(300ms);  // A stalls past its lease

    const auto second = b.read();
    REQUIRE(second.id == first.id);  // B takes the batch over
    CHECK(second.delivery == 2);
    CHECK(second.token != first.token);
    CHECK(second.seqs == first.seqs);
    CHECK(db.scalar("SELECT consumer FROM tributary.consumer_batches") == "b");

    CHECK(sqlstate_of([&] { b.ack(second, {first.seqs[0], 999999}); }) == "22023");  // not in the batch
    CHECK_FALSE(a.ack(first));                                                       // late: changes nothing
    CHECK_FALSE(a.fail(first, "late"));
    CHECK_FALSE(a.extend(first, "1 hour"));
    CHECK(status_of(db, "g").batches_in_flight == 1);
    CHECK(status_of(db, "g").retries_waiting == 0);
    CHECK(db.scalar("SELECT lease_token::text FROM tributary.consumer_batches") == second.token);

    CHECK(b.extend(second, "1 minute"));
    CHECK(b.ack(second));
    CHECK_FALSE(b.ack(second));  // once
    const auto s = status_of(db, "g");
    CHECK(s.batches_in_flight == 0);
    CHECK(s.retries_waiting == 0);
    CHECK(s.dead_letters == 0);
    CHECK(s.events_behind == 0);

    SECTION("an ack after the lease ran out still counts while no one took the batch over") {
        commit_events(db, source, 6, 1);
        const auto third = a.read_soon();
        REQUIRE(third.seqs.size() == 1);
        std::this_thread::sleep_for(300ms);
        CHECK(a.ack(third));
        CHECK(b.read().empty());
    }
}

TEST_CASE("a poison event goes to the dead letters after exactly max_deliveries; its neighbours do not", "[consumer]") {
    TestDatabase db;
    const int source = add_source(db, "s");
    db.exec("SELECT tributary.group_create('g', '>', 'beginning', p_max_deliveries => 3)");
    commit_events(db, source, 1, 4);
    const auto poison = commit_events(db, source, 5, 1, R"({"poison": true})")[0];
    commit_events(db, source, 6, 5);
    Consumer consumer(db.url(), "g", "c");
    const bool partial_acks = GENERATE(false, true);
    INFO((partial_acks ? "acks with the failed seq" : "fails whole batches"));

    // The first delivery: all ten in one batch, which fails because of the poison.
    db.exec("UPDATE tributary.consumer_groups SET retry_base = '1 hour'");  // a backoff the test can see
    auto batch = consumer.read_soon();
    REQUIRE(batch.seqs.size() == 10);
    REQUIRE(batch.holds(poison));
    if (partial_acks) CHECK(consumer.ack(batch, {poison}, "poison"));
    else CHECK(consumer.fail(batch, "poison"));

    // Backoff: the retries are due later, within retry_base for a first failure, each at its own time.
    const auto waiting = std::to_string(partial_acks ? 1 : 10);
    CHECK(db.scalar("SELECT count(*) FROM tributary.consumer_retries WHERE next_attempt_at > now() "
                    "AND next_attempt_at <= now() + interval '1 hour' AND deliveries = 1") == waiting);
    CHECK(db.scalar("SELECT count(DISTINCT next_attempt_at) FROM tributary.consumer_retries") == waiting);
    CHECK(consumer.read().empty());  // nothing due yet, nothing fresh
    db.exec("UPDATE tributary.consumer_groups SET retry_base = '1 ms'");
    db.exec("UPDATE tributary.consumer_retries SET next_attempt_at = now()");

    // Then one at a time: the neighbours pass, the poison fails until it is dead.
    std::map<std::int64_t, int> deliveries;
    for (const auto seq : batch.seqs) deliveries[seq] = 1;
    const auto deadline = std::chrono::steady_clock::now() + 20s;
    while (std::chrono::steady_clock::now() < deadline) {
        batch = consumer.read_soon(1000, 200ms);
        if (batch.empty()) break;
        REQUIRE(batch.seqs.size() == 1);  // retried singly
        ++deliveries[batch.seqs[0]];
        CHECK(batch.delivery == deliveries[batch.seqs[0]]);
        if (batch.seqs[0] == poison) CHECK(consumer.fail(batch, "poison again"));
        else CHECK(consumer.ack(batch));
    }
    CHECK(deliveries[poison] == 3);
    for (const auto& [seq, count] : deliveries)
        if (seq != poison) CHECK(count == (partial_acks ? 1 : 2));

    CHECK(db.scalar(
              "SELECT string_agg(seq || ':' || deliveries || ':' || last_error, ',') FROM tributary.dead_letters") ==
          std::to_string(poison) + ":3:poison again");
    auto s = status_of(db, "g");
    CHECK(s.dead_letters == 1);
    CHECK(s.retries_waiting == 0);
    CHECK(s.batches_in_flight == 0);
    CHECK(s.events_behind == 0);
    CHECK(s.oldest_age_s == -1);  // a dead letter blocks nothing

    // Replay brings it back, as a first delivery.
    CHECK(db.scalar("SELECT tributary.dead_letter_replay('g', 999999)") == "0");
    CHECK(db.scalar("SELECT tributary.dead_letter_replay('g')") == "1");
    CHECK(status_of(db, "g").dead_letters == 0);
    batch = consumer.read_soon();
    CHECK(batch.seqs == std::vector<std::int64_t>{poison});
    CHECK(batch.delivery == 1);
    CHECK(batch.payloads[0] == R"({"poison": true})");
    CHECK(consumer.ack(batch));
    s = status_of(db, "g");
    CHECK(s.dead_letters == 0);
    CHECK(s.retries_waiting == 0);
}

TEST_CASE("an expired batch at max_deliveries is split into single retries, a single event dead-lettered",
          "[consumer]") {
    TestDatabase db;
    const int source = add_source(db, "s");
    db.exec("SELECT tributary.group_create('g', '>', 'beginning', p_max_deliveries => 2)");
    const auto seqs = commit_events(db, source, 1, 3);
    Consumer consumer(db.url(), "g", "c");
    const auto expire = [&] { db.exec("UPDATE tributary.consumer_batches SET leased_until = now() - interval '1 s'"); };

    auto batch = consumer.read_soon();
    REQUIRE(batch.seqs == seqs);
    expire();
    batch = consumer.read();
    CHECK(batch.delivery == 2);
    CHECK(batch.seqs == seqs);
    expire();
    // Delivered twice and expired: each event gets its own delivery now.
    batch = consumer.read();
    CHECK(batch.seqs.size() == 1);
    CHECK(batch.delivery == 3);
    CHECK(status_of(db, "g").retries_waiting == 2);
    expire();
    // A single event past max_deliveries whose lease expires is dead.
    auto next = consumer.read();
    CHECK(next.seqs.size() == 1);
    CHECK(next.seqs != batch.seqs);
    CHECK(db.scalar("SELECT deliveries || ' ' || last_error FROM tributary.dead_letters") ==
          "3 lease expired 3 times (last held by c)");
    CHECK(consumer.ack(next));
    CHECK(consumer.ack(consumer.read()));
    CHECK(consumer.read().empty());
    const auto s = status_of(db, "g");
    CHECK(s.dead_letters == 1);
    CHECK(s.batches_in_flight == 0);
    CHECK(s.retries_waiting == 0);
}

TEST_CASE("an ordered group never has two batches of one source in flight, and keeps each source's order",
          "[consumer]") {
    TestDatabase db;
    std::vector<int> sources;
    for (const auto* name : {"a", "b", "c"}) sources.push_back(add_source(db, name));
    int expected = 0;
    for (int round = 0; round < 4; ++round)
        for (const int source : sources) {
            commit_events(db, source, round * 5 + 1, 5);
            expected += 5;
        }
    db.exec("SELECT tributary.group_create('g', '>', 'beginning', p_max_deliveries => 1000, p_ordered => true)");
    db.exec("UPDATE tributary.consumer_groups SET retry_base = '0'");
    std::vector<std::unique_ptr<Consumer>> consumers;
    for (int i = 0; i < 3; ++i) consumers.push_back(std::make_unique<Consumer>(db.url(), "g", "c" + std::to_string(i)));

    SECTION("the prefix rule: a fresh read stops at the first event of a busy source") {
        const auto first = consumers[0]->read_soon(3);  // a1..a3
        CHECK(first.sources == std::vector<std::string>{"a", "a", "a"});
        CHECK(consumers[1]->read(3).empty());  // a4 comes next: a is busy
        CHECK(consumers[0]->ack(first));
        const auto second = consumers[1]->read(3);
        CHECK(second.event_ids == ids({4, 5, 1}));
        CHECK(second.sources == std::vector<std::string>{"a", "a", "b"});
    }

    SECTION("random reads, acks and failures by three consumers") {
        std::mt19937 random(6);
        std::vector<std::pair<Consumer*, Batch>> held;
        std::map<std::string, std::vector<std::int64_t>> done;  // source -> event ids, in ack order
        int acked = 0;
        for (int step = 0; step < 3000 && acked < expected; ++step) {
            if (held.size() < 3 && random() % 2 == 0) {
                auto* consumer = consumers[random() % 3].get();
                auto batch = consumer->read(1 + random() % 6);
                if (!batch.empty()) held.emplace_back(consumer, std::move(batch));
            } else if (!held.empty()) {
                const auto pick = random() % held.size();
                auto [consumer, batch] = held[pick];
                held.erase(held.begin() + pick);
                const auto roll = random() % 10;
                std::vector<std::int64_t> failed;
                if (roll == 0) {
                    failed = batch.seqs;
                } else if (roll == 1) {
                    // An ordered consumer that fails an event stops its source there.
                    const auto at = random() % batch.seqs.size();
                    for (std::size_t i = at; i < batch.seqs.size(); ++i)
                        if (batch.sources[i] == batch.sources[at]) failed.push_back(batch.seqs[i]);
                }
                REQUIRE(consumer->ack(batch, failed));
                for (std::size_t i = 0; i < batch.seqs.size(); ++i)
                    if (std::find(failed.begin(), failed.end(), batch.seqs[i]) == failed.end()) {
                        done[batch.sources[i]].push_back(batch.event_ids[i].value());
                        ++acked;
                    }
            }
            REQUIRE(std::stoi(db.scalar("SELECT coalesce(max(n), 0) FROM (SELECT count(DISTINCT b.id) AS n "
                                        "FROM tributary.consumer_batches b, unnest(b.source_ids) s GROUP BY s) x")) <=
                    1);
        }
        CHECK(acked == expected);
        for (const auto& [source, ids] : done) {
            INFO("source " << source);
            std::vector<std::int64_t> in_order(ids.size());
            for (std::size_t i = 0; i < in_order.size(); ++i) in_order[i] = static_cast<std::int64_t>(i) + 1;
            CHECK(ids == in_order);
        }
    }
}

TEST_CASE("group_status, from, reset and delete", "[consumer]") {
    TestDatabase db;
    const int source = add_source(db, "s");
    db.exec(
        "INSERT INTO tributary.events (source_id, event_id, payload, loaded_at) "
        "SELECT " +
        std::to_string(source) + ", i, '{}', now() - interval '1 hour' FROM generate_series(1, 5) i");
    commit_events(db, source, 6, 5);

    SECTION("the figures match what is in flight, waiting and dead") {
        db.exec("SELECT tributary.group_create('g', 's', 'beginning', p_max_deliveries => 1)");
        db.exec("UPDATE tributary.consumer_groups SET retry_base = '1 hour'");
        Consumer consumer(db.url(), "g", "c");
        auto s = status_of(db, "g");
        CHECK(s.events_behind == 10);
        CHECK(s.oldest_age_s > 3590);  // events 1-5, loaded an hour ago

        const auto first = consumer.read_soon(3);  // in flight: 1-3
        const auto second = consumer.read(3);      // 4-6, failed: waiting for a retry
        CHECK(consumer.fail(second, "no"));
        const auto third = consumer.read(1);  // 7, failed alone at max_deliveries: dead
        CHECK(consumer.fail(third, "no"));
        s = status_of(db, "g");
        CHECK(s.events_behind == 3);
        CHECK(s.batches_in_flight == 1);
        CHECK(s.retries_waiting == 3);
        CHECK(s.dead_letters == 1);
        CHECK(s.oldest_age_s > 3590);

        CHECK(consumer.ack(first));
        db.exec("DELETE FROM tributary.consumer_retries");
        s = status_of(db, "g");
        CHECK(s.oldest_age_s >= 0);
        CHECK(s.oldest_age_s < 1800);  // 8-10 were loaded just now, not an hour ago

        SECTION("reset drops batches and retries, keeps dead letters; late acks fail") {
            const auto fourth = consumer.read(1);
            REQUIRE(fourth.seqs.size() == 1);
            db.exec("SELECT tributary.group_reset('g', 'beginning')");
            CHECK_FALSE(consumer.ack(fourth));
            s = status_of(db, "g");
            CHECK(s.events_behind == 10);
            CHECK(s.batches_in_flight == 0);
            CHECK(s.retries_waiting == 0);
            CHECK(s.dead_letters == 1);
            db.exec("SELECT tributary.group_reset('g', 'end')");
            CHECK(status_of(db, "g").events_behind == 0);
            CHECK(consumer.read().empty());
        }
    }

    SECTION("from beginning, end and a timestamp") {
        db.exec("SELECT tributary.group_create('b', '>', 'beginning')");
        db.exec("SELECT tributary.group_create('e', '>', 'end')");
        db.exec("SELECT tributary.group_create('t', '>', (now() - interval '10 minutes')::text)");
        db.exec("SELECT tributary.group_create('later', '>', (now() + interval '1 day')::text)");
        CHECK(status_of(db, "b").events_behind == 10);
        CHECK(status_of(db, "e").events_behind == 0);
        CHECK(status_of(db, "t").events_behind == 5);
        CHECK(status_of(db, "later").events_behind == 0);
        commit_events(db, source, 11, 2);
        CHECK(status_of(db, "b").events_behind == 12);
        CHECK(status_of(db, "e").events_behind == 2);
        CHECK(status_of(db, "later").events_behind == 2);
        Consumer consumer(db.url(), "t", "c");
        const auto batch = consumer.read_soon();
        CHECK(batch.event_ids == ids({6, 7, 8, 9, 10, 11, 12}));
        CHECK(sqlstate_of([&] { db.exec("SELECT tributary.group_create('x', '>', 'yesterday-ish')"); }) == "22023");
        CHECK(sqlstate_of([&] { db.exec("SELECT tributary.group_reset('b', 'nowhere')"); }) == "22023");
    }

    SECTION("delete, and what an unknown group says") {
        db.exec("SELECT tributary.group_create('g')");
        CHECK(sqlstate_of([&] { db.exec("SELECT tributary.group_create('g')"); }) == "23505");
        CHECK(db.scalar("SELECT tributary.group_delete('g')") == "t");
        CHECK(db.scalar("SELECT tributary.group_delete('g')") == "f");
        CHECK(db.scalar("SELECT count(*) FROM tributary.group_status") == "0");
        CHECK(sqlstate_of([&] { db.exec("SELECT * FROM tributary.consumer_read('g', 'c')"); }) == "P0002");
        CHECK(sqlstate_of([&] { db.exec("SELECT tributary.group_reset('g', 'end')"); }) == "P0002");
        CHECK(sqlstate_of([&] { db.exec("SELECT tributary.dead_letter_replay('g')"); }) == "P0002");
        CHECK(sqlstate_of([&] { db.exec("SELECT tributary.group_create('bad name')"); }) == "22023");
        CHECK(sqlstate_of([&] { db.exec("SELECT tributary.group_create('g', p_max_deliveries => 0)"); }) == "22023");
        CHECK(sqlstate_of([&] { db.exec("SELECT tributary.group_create('g', p_lease => '0 s')"); }) == "22023");
        db.exec("SELECT tributary.group_create('g')");
        CHECK(sqlstate_of([&] { db.exec("SELECT * FROM tributary.consumer_read('g', 'c', 0)"); }) == "22023");
        CHECK(sqlstate_of([&] { db.exec("SELECT * FROM tributary.consumer_read('g', '')"); }) == "22023");
    }
}

TEST_CASE("read_log and log_position: stateless reads under the same watermark", "[consumer]") {
    TestDatabase db;
    const int eu = add_source(db, "orders.eu");
    const int us = add_source(db, "orders.us");
    commit_events(db, eu, 1, 3);
    commit_events(db, us, 1, 3);
    pqxx::connection connection(db.url());
    pqxx::nontransaction tx(connection);
    const auto start = tx.exec("SELECT tx_id, seq FROM tributary.log_position('beginning')");
    auto rows =
        tx.exec_params("SELECT tx_id::text, seq, source, event_id FROM tributary.read_log('*.eu', $1::xid8, $2, 2)",
                       start[0][0].as<std::string>(), start[0][1].as<std::int64_t>());
    REQUIRE(rows.size() == 2);
    CHECK(rows[1][3].as<int>() == 2);
    rows = tx.exec_params("SELECT tx_id::text, seq, source, event_id FROM tributary.read_log('*.eu', $1::xid8, $2)",
                          rows[1][0].as<std::string>(), rows[1][1].as<std::int64_t>());
    REQUIRE(rows.size() == 1);
    CHECK(rows[0][2].as<std::string>() == "orders.eu");
    CHECK(rows[0][3].as<int>() == 3);
    CHECK(tx.exec("SELECT * FROM tributary.read_log('>', NULL, NULL)").size() == 6);
    const auto end = tx.exec("SELECT tx_id::text, seq FROM tributary.log_position('end')");
    CHECK(tx.exec_params("SELECT * FROM tributary.read_log('>', $1::xid8, $2)", end[0][0].as<std::string>(),
                         end[0][1].as<std::int64_t>())
              .empty());
    CHECK(sqlstate_of([&] { tx.exec("SELECT * FROM tributary.read_log('a..b', NULL, NULL)"); }) == "22023");
}

TEST_CASE("a source keyed by text: every read gives its key as event_key and a NULL event_id; after-id unchanged",
          "[consumer]") {
    TestDatabase db;
    const int orders = add_source(db, "orders.eu");
    run_tributary(db.url(), {"source", "add", "stripe.events", "--url", "http://127.0.0.1:9/v1/events", "--paginate",
                             "after-key", "--records", "/data", "--key", "/key"});
    const auto stripe = db.scalar("SELECT id FROM tributary.sources WHERE name = 'stripe.events'");
    const std::string composite = R"(["42","2024-05-01T10:00:00Z"])";
    {
        // One transaction: every read sees all four events or none.
        pqxx::connection connection(db.url());
        pqxx::work tx(connection);
        tx.exec_params(
            "INSERT INTO tributary.events (source_id, event_key, payload)"
            " VALUES ($1, 'evt_1', '{\"id\": \"evt_1\"}'), ($1, $2, '{}')",
            std::stoi(stripe), composite);
        insert_events(tx, orders, 7, 2);
        tx.commit();
    }
    // What consumers are told of each event, in log order.
    const std::vector<std::string> expected = {"stripe.events evt_1 NULL", "stripe.events " + composite + " NULL",
                                               "orders.eu 7 7", "orders.eu 8 8"};
    const auto described = [](const Batch& batch) {
        std::vector<std::string> out;
        for (std::size_t i = 0; i < batch.seqs.size(); ++i)
            out.push_back(batch.sources[i] + " " + batch.event_keys[i] + " " +
                          (batch.event_ids[i] ? std::to_string(*batch.event_ids[i]) : "NULL"));
        return out;
    };

    SECTION("fresh reads") {
        db.exec("SELECT tributary.group_create('g', '>', 'beginning')");
        Consumer consumer(db.url(), "g", "c");
        const auto batch = consumer.read_soon();
        CHECK(described(batch) == expected);
        CHECK(batch.payloads[0] == R"({"id": "evt_1"})");
        CHECK(consumer.ack(batch));
    }

    SECTION("retries and expired batches, which are read again from the batch") {
        db.exec("SELECT tributary.group_create('g', '>', 'beginning', p_max_deliveries => 5, p_lease => '1 hour')");
        db.exec("UPDATE tributary.consumer_groups SET retry_base = '0'");
        Consumer consumer(db.url(), "g", "c");
        const auto first = consumer.read_soon(1);
        REQUIRE(first.seqs.size() == 1);
        CHECK(consumer.fail(first, "again"));
        const auto retried = consumer.read_soon(1);
        CHECK(retried.delivery == 2);
        CHECK(described(retried) == std::vector<std::string>{expected[0]});

        const auto rest = consumer.read_soon(3);
        db.exec("UPDATE tributary.consumer_batches SET leased_until = now() - interval '1 second' WHERE id = " +
                std::to_string(rest.id));
        const auto taken_over = consumer.read(3);
        CHECK(taken_over.id == rest.id);
        CHECK(taken_over.delivery == 2);
        CHECK(described(taken_over) == std::vector<std::string>(expected.begin() + 1, expected.end()));
    }

    SECTION("dead letters") {
        db.exec("SELECT tributary.group_create('g', 'stripe.*', 'beginning', p_max_deliveries => 1)");
        Consumer consumer(db.url(), "g", "c");
        const auto batch = consumer.read_soon(1);
        REQUIRE(batch.seqs.size() == 1);
        CHECK(consumer.fail(batch, "no"));
        CHECK(db.scalar("SELECT source || ' ' || event_key || ' ' || coalesce(event_id::text, 'NULL')"
                        " FROM tributary.dead_letters WHERE group_name = 'g'") == expected[0]);
    }

    SECTION("read_log") {
        pqxx::connection connection(db.url());
        pqxx::nontransaction tx(connection);
        std::vector<std::string> read;
        for (const auto& row : tx.exec("SELECT source || ' ' || event_key || ' ' || coalesce(event_id::text, 'NULL')"
                                       " FROM tributary.read_log('>', NULL, NULL)"))
            read.push_back(row[0].as<std::string>());
        CHECK(read == expected);
    }
}

TEST_CASE("four consumers and two loaders at once: every event acked exactly once, none skipped", "[consumer]") {
    TestDatabase db;
    ConcurrentTally tally;
    run_two_loaders_four_consumers(
        db,
        [](Consumer& consumer, const std::atomic<bool>& stop, ConcurrentTally& tally) {
            while (!stop) {
                const auto batch = consumer.read(50);
                if (batch.empty()) {
                    std::this_thread::sleep_for(2ms);
                    continue;
                }
                if (batch.delivery != 1)
                    tally.problem("delivery " + std::to_string(batch.delivery) + " without a failure");
                if (!consumer.ack(batch)) tally.problem("ack refused for batch " + std::to_string(batch.id));
                tally.acked(batch);
            }
        },
        tally);

    for (const auto& p : tally.problems()) UNSCOPED_INFO(p);
    CHECK(tally.problems().empty());
    auto acked = tally.acked_seqs();
    std::sort(acked.begin(), acked.end());
    CHECK(std::adjacent_find(acked.begin(), acked.end()) == acked.end());  // no duplicates
    CHECK(acked.size() == static_cast<std::size_t>(kEventsLoaded));
    pqxx::connection connection(db.url());
    pqxx::nontransaction tx(connection);
    std::vector<std::int64_t> stored;
    for (const auto& row : tx.exec("SELECT seq FROM tributary.events ORDER BY seq"))
        stored.push_back(row[0].as<std::int64_t>());
    CHECK(stored == acked);  // none skipped
    const auto s = status_of(db, "g");
    CHECK(s.events_behind == 0);
    CHECK(s.batches_in_flight == 0);
    CHECK(s.retries_waiting == 0);
}
