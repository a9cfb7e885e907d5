// Lanes (issue 28; sql/internal/32_lanes.sql): a group of N lanes, read with
// consumer_next and consumer_read as any client would. Each source's events
// come from one lane (source id % N), in order, none skipped and none twice;
// consumers share the lanes, one holder per lane; a dead consumer's lanes are
// taken after its lease; in an ordered group a failing source holds back only
// its lane; a group of one lane has no lanes at all.
//
// Nothing here waits for a lease to run out: a test ends one by moving
// held_until, seen_until or leased_until into the past.

#include <catch2/catch.hpp>

#include <csignal>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>
#include <pqxx/pqxx>

#include "support/child_process.h"
#include "support/consume_rig.h"
#include "support/group_consumer.h"
#include "support/test_database.h"
#include "support/tributary_cli.h"

using namespace std::chrono_literals;
using namespace tributary::testing;

namespace {

constexpr int kLanes = 4;

void create_lane_group(const TestDatabase& db, const std::string& name, int lanes, bool ordered = false) {
    db.exec("SELECT tributary.group_create('" + name + "', '>', 'beginning', 5, '30 seconds', " +
            (ordered ? "true" : "false") + ", " + std::to_string(lanes) + ")");
}

/// Sources s0..s<count-1>; returns their ids by name.
std::map<std::string, int> add_sources(const TestDatabase& db, int count) {
    std::map<std::string, int> ids;
    for (int i = 0; i < count; ++i) {
        const auto name = "s" + std::to_string(i);
        ids[name] = add_source(db, name);
    }
    return ids;
}

/// Lanes held by each consumer now.
std::map<std::string, int> holders(const TestDatabase& db, const std::string& group) {
    pqxx::connection connection(db.url());
    pqxx::nontransaction tx(connection);
    std::map<std::string, int> held;
    for (const auto& row : tx.exec_params("SELECT l.holder, count(*) FROM tributary.group_lanes l "
                                          "JOIN tributary.consumer_groups g ON g.id = l.group_id "
                                          "WHERE g.name = $1 AND l.held_until > now() GROUP BY l.holder",
                                          group))
        held[row[0].as<std::string>()] = row[1].as<int>();
    return held;
}

/// Waits until `holds` is true of the lanes' holders, for up to `patience`; returns them.
std::map<std::string, int> wait_for_holders(const TestDatabase& db, const std::string& group,
                                            const std::function<bool(const std::map<std::string, int>&)>& holds,
                                            std::chrono::seconds patience = 60s) {
    const auto deadline = std::chrono::steady_clock::now() + patience;
    auto now = holders(db, group);
    while (!holds(now) && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(100ms);
        now = holders(db, group);
    }
    return now;
}

}  // namespace

TEST_CASE("a group of lanes hands out each source's events from its lane, in order, once, none skipped", "[lanes]") {
    TestDatabase db;
    const auto ids = add_sources(db, 8);
    create_lane_group(db, "g", kLanes);
    Consumer consumer(db.url(), "g", "c1");
    std::map<int, std::vector<std::int64_t>> seqs_by_source;  // as handed out
    std::map<std::int64_t, int> seen;
    // Reads and acks (each call acks the batch before) until nothing comes for a second.
    auto drain_lanes = [&] {
        Batch previous;
        for (Next next = consumer.next_soon(7); !next.batch.empty();) {
            const auto lane = next.lane;
            REQUIRE(lane);
            for (std::size_t i = 0; i < next.batch.seqs.size(); ++i) {
                ++seen[next.batch.seqs[i]];
                const int source = ids.at(next.batch.sources[i]);
                CHECK(source % kLanes == *lane);
                seqs_by_source[source].push_back(next.batch.seqs[i]);
            }
            previous = next.batch;
            next = consumer.next(7, &previous);
            if (next.batch.empty()) next = consumer.next_soon(7, nullptr, 1s);
        }
    };
    // Interleaved commits: a transaction left open while later ones commit.
    // Nothing committed after it is read until it ends (the watermark); then
    // its events and theirs come, none skipped.
    for (int round = 0; round < 2; ++round)
        for (const auto& [name, id] : ids) commit_events(db, id, round * 10 + 1, 10);
    pqxx::connection slow(db.url());
    pqxx::work open_tx(slow);
    insert_events(open_tx, ids.at("s1"), 1000, 3);
    for (int round = 2; round < 5; ++round)
        for (const auto& [name, id] : ids) commit_events(db, id, round * 10 + 1, 10);
    drain_lanes();
    CHECK(seen.size() == 8u * 20u);
    open_tx.commit();
    drain_lanes();

    CHECK(seen.size() == 8u * 50u + 3u);
    for (const auto& [seq, times] : seen) CHECK(times == 1);
    // Each source's events in log order, (tx_id, seq), as a group of one lane hands them out.
    pqxx::connection connection(db.url());
    pqxx::nontransaction tx(connection);
    std::map<int, std::vector<std::int64_t>> log_order;
    for (const auto& row : tx.exec("SELECT source_id, seq FROM tributary.events ORDER BY tx_id, seq"))
        log_order[row[0].as<int>()].push_back(row[1].as<std::int64_t>());
    CHECK(seqs_by_source == log_order);
    CHECK(db.scalar("SELECT events_behind FROM tributary.group_status WHERE name = 'g'") == "0");
}

TEST_CASE("consumers share the lanes: one holder each, and one that joins gets its share", "[lanes]") {
    TestDatabase db;
    add_sources(db, 8);
    create_lane_group(db, "g", kLanes);
    Consumer a(db.url(), "g", "a");
    Consumer b(db.url(), "g", "b");
    a.next();
    CHECK(holders(db, "g") == std::map<std::string, int>{{"a", 4}});
    b.next();  // b is alive, but every lane is a's until a reads again
    CHECK(holders(db, "g") == std::map<std::string, int>{{"a", 4}});
    a.next();  // a gives back what is beyond its share
    CHECK(holders(db, "g") == std::map<std::string, int>{{"a", 2}});
    b.next();
    CHECK(holders(db, "g") == std::map<std::string, int>{{"a", 2}, {"b", 2}});
    // More consumers than lanes: a fifth holds none, and no lane has two holders.
    Consumer c(db.url(), "g", "c"), d(db.url(), "g", "d"), e(db.url(), "g", "e");
    for (int pass = 0; pass < 3; ++pass)
        for (auto* consumer : {&a, &b, &c, &d, &e}) consumer->next();
    int held = 0;
    for (const auto& [holder, count] : holders(db, "g")) {
        CHECK(count == 1);
        held += count;
    }
    CHECK(held == kLanes);
    CHECK(db.scalar("SELECT count(*) FROM tributary.group_lanes WHERE holder IS NULL OR held_until <= now()") == "0");
}

TEST_CASE("a dead consumer's lanes are taken one lease later, and its late ack is refused", "[lanes]") {
    TestDatabase db;
    const auto ids = add_sources(db, 4);
    create_lane_group(db, "g", kLanes);
    for (const auto& [name, id] : ids) commit_events(db, id, 1, 5);
    Consumer dead(db.url(), "g", "dead");
    Consumer heir(db.url(), "g", "heir");
    const auto batch = dead.next_soon().batch;
    REQUIRE_FALSE(batch.empty());
    heir.next();
    CHECK(holders(db, "g").count("heir") == 0);  // every lane is still the dead one's
    // Its lease runs out (no read for one lease): its lanes, its membership and its batch.
    db.exec("UPDATE tributary.group_lanes SET held_until = now() - interval '1 second' WHERE holder = 'dead'");
    db.exec("UPDATE tributary.group_consumers SET seen_until = now() - interval '1 second' WHERE consumer = 'dead'");
    db.exec("UPDATE tributary.consumer_batches SET leased_until = now() - interval '1 second'");
    std::set<std::int64_t> redelivered;
    for (int call = 0; call < 10; ++call) {
        const auto next = heir.next();
        for (std::size_t i = 0; i < next.batch.seqs.size(); ++i)
            if (next.batch.deliveries[i] == 2) redelivered.insert(next.batch.seqs[i]);
        if (!next.batch.empty()) heir.ack(next.batch);
    }
    CHECK(holders(db, "g") == std::map<std::string, int>{{"heir", kLanes}});
    CHECK(redelivered == std::set<std::int64_t>(batch.seqs.begin(), batch.seqs.end()));
    CHECK_FALSE(dead.ack(batch));
}

TEST_CASE("a lane's batch read again (taken over, retried, or as rows) holds the same events", "[lanes]") {
    TestDatabase db;
    const auto ids = add_sources(db, 4);  // ids 1..4: lanes 1, 0, 1, 0 of 2
    create_lane_group(db, "g", 2);
    // Each source's events in transactions of their own, interleaved, each with its own payload:
    // a batch of a lane is then spread among the other lane's events.
    std::map<std::int64_t, std::string> payload_of;
    for (int round = 0; round < 3; ++round)
        for (const auto& [name, id] : ids) {
            const auto payload = "{\"source\": \"" + name + "\", \"round\": " + std::to_string(round) + "}";
            for (const auto seq : commit_events(db, id, round * 10 + 1, 2, payload)) payload_of[seq] = payload;
        }
    auto check_payloads = [&](const Batch& batch) {
        for (std::size_t i = 0; i < batch.seqs.size(); ++i)
            CHECK(nlohmann::json::parse(batch.payloads[i]) == nlohmann::json::parse(payload_of.at(batch.seqs[i])));
    };
    Consumer first(db.url(), "g", "first");
    Consumer second(db.url(), "g", "second");
    // The next batch of `consumer` delivered for the `delivery`th time (the other lane's fresh
    // events may come first: they are acked).
    auto next_delivery = [](Consumer& consumer, int delivery) {
        Batch batch = consumer.next().batch;
        for (int call = 0; call < 5 && batch.delivery != delivery; ++call) {
            if (!batch.empty()) consumer.ack(batch);
            batch = consumer.next().batch;
        }
        return batch;
    };

    // A lane is held at least as long as each batch it handed out is leased: nobody else reads a
    // source's later events while one of its batches is in hand.
    auto lanes_outlast_batches = [&] {
        return db.scalar(
                   "SELECT bool_and(l.holder IS NOT NULL AND l.held_until >= b.leased_until)"
                   "  FROM tributary.consumer_batches b JOIN tributary.group_lanes l"
                   "    ON l.group_id = b.group_id AND l.lane = b.source_ids[1] % 2") == "t";
    };

    SECTION("taken over after its lease, then retried one event at a time") {
        const auto batch = first.next_soon().batch;
        REQUIRE(batch.seqs.size() == 12u);  // a lane: two sources, three rounds of two events
        check_payloads(batch);
        CHECK(lanes_outlast_batches());
        db.exec("UPDATE tributary.consumer_batches SET leased_until = now() - interval '1 second'");
        db.exec("UPDATE tributary.group_lanes SET held_until = now() - interval '1 second'");
        db.exec("UPDATE tributary.group_consumers SET seen_until = now() - interval '1 second'");
        const auto again = next_delivery(second, 2);
        REQUIRE(again.seqs == batch.seqs);
        CHECK(again.delivery == 2);
        CHECK(lanes_outlast_batches());
        check_payloads(again);
        REQUIRE(second.fail(again, "down"));
        db.exec("UPDATE tributary.consumer_retries SET next_attempt_at = now()");
        std::vector<std::int64_t> retried;
        for (int call = 0; call < 20 && retried.size() < batch.seqs.size(); ++call) {
            const auto one = next_delivery(second, 3);
            REQUIRE(one.seqs.size() == 1u);
            check_payloads(one);
            retried.push_back(one.seqs[0]);
            second.ack(one);
        }
        std::sort(retried.begin(), retried.end());
        CHECK(retried == batch.seqs);
    }
    SECTION("a read that a lane's hold had no need to renew still holds the lane as long as its batch") {
        const auto one = first.next_soon().batch;
        REQUIRE_FALSE(one.empty());
        // The hold as a read long ago left it: over half a lease left, which a read does not renew.
        db.exec("UPDATE tributary.group_lanes SET held_until = now() + interval '20 seconds'");
        const auto other = first.next().batch;
        REQUIRE_FALSE(other.empty());
        CHECK(db.scalar("SELECT l.held_until >= b.leased_until FROM tributary.consumer_batches b"
                        "  JOIN tributary.group_lanes l ON l.group_id = b.group_id AND l.lane = b.source_ids[1] % 2"
                        " WHERE b.id = " +
                        std::to_string(other.id)) == "t");
    }
    SECTION("consumer_read's rows are consumer_next's events") {
        const auto rows = first.read_soon();
        REQUIRE(rows.seqs.size() == 12u);
        check_payloads(rows);
        db.exec("UPDATE tributary.consumer_batches SET leased_until = now() - interval '1 second'");
        const auto again = next_delivery(first, 2);
        CHECK(again.seqs == rows.seqs);
        check_payloads(again);
    }
}

TEST_CASE("a lane with a batch in flight stays with its consumer when it gives back its share or leaves", "[lanes]") {
    TestDatabase db;
    const auto ids = add_sources(db, 2);  // ids 1, 2: lanes 1, 0 of 2
    create_lane_group(db, "g", 2);
    for (const auto& [name, id] : ids) commit_events(db, id, 1, 3);
    Consumer a(db.url(), "g", "a");
    Consumer b(db.url(), "g", "b");
    const auto batch = a.next_soon().batch;  // a holds both lanes, and a batch of one of them
    REQUIRE_FALSE(batch.empty());
    const auto busy = std::to_string(ids.at(batch.sources[0]) % 2);
    const auto holder_of = [&](const std::string& lane) {
        return db.scalar("SELECT coalesce(holder, '') FROM tributary.group_lanes WHERE lane = " + lane);
    };
    b.next();                           // b is alive: a's share is one lane now
    const auto other = a.next().batch;  // a gives back a lane, not the busy one; it may lease the other's
    CHECK(holder_of(busy) == "a");
    if (!other.empty()) a.ack(other);
    CHECK(db.scalar("SELECT tributary.consumer_leave('g', 'a')") == "0");  // its one lane is busy
    CHECK(holder_of(busy) == "a");
    REQUIRE(a.ack(batch));
    CHECK(db.scalar("SELECT tributary.consumer_leave('g', 'a')") == "1");
    CHECK(holder_of(busy).empty());
}

TEST_CASE("an ordered group of lanes: a failing source holds back only its own lane", "[lanes]") {
    TestDatabase db;
    const auto ids = add_sources(db, 4);  // ids 1..4: lanes 1, 0, 1, 0 of 2
    create_lane_group(db, "g", 2, /*ordered=*/true);
    const int failing = ids.at("s0");
    const int failing_lane = failing % 2;
    for (const auto& [name, id] : ids) commit_events(db, id, 1, 3);
    Consumer consumer(db.url(), "g", "c");
    // The failing source's first batch fails: it waits an hour for its retry.
    bool failed = false;
    std::map<int, int> handed;  // source -> events acked
    for (int call = 0; call < 20; ++call) {
        auto next = call == 0 ? consumer.next_soon(1) : consumer.next(1);
        if (next.batch.empty()) continue;
        const int source = ids.at(next.batch.sources[0]);
        if (source == failing && !failed) {
            consumer.fail(next.batch, "upstream down");
            db.exec("UPDATE tributary.consumer_retries SET next_attempt_at = now() + interval '1 hour'");
            failed = true;
            continue;
        }
        handed[source] += static_cast<int>(next.batch.seqs.size());
        consumer.ack(next.batch);
    }
    REQUIRE(failed);
    CHECK(handed.count(failing) == 0);
    for (const auto& [name, id] : ids) {
        INFO(name << " (lane " << id % 2 << ")");
        if (id == failing) continue;
        // Another lane flows in full; the failing source's lane-mate may wait behind it or not,
        // but nothing of the failing source itself comes before its retry.
        if (id % 2 != failing_lane) CHECK(handed[id] == 3);
    }
}

TEST_CASE("a group of one lane is a group as before, and bad lane counts are refused", "[lanes]") {
    TestDatabase db;
    const auto ids = add_sources(db, 2);
    run_tributary(db.url(), {"group", "create", "one", "--from", "beginning"});
    CHECK(db.scalar("SELECT lanes FROM tributary.consumer_groups WHERE name = 'one'") == "1");
    CHECK(db.scalar("SELECT count(*) FROM tributary.group_lanes") == "0");
    commit_events(db, ids.at("s0"), 1, 3);
    Consumer consumer(db.url(), "one", "c");
    const auto next = consumer.next_soon();
    REQUIRE(next.batch.seqs.size() == 3u);
    CHECK_FALSE(next.lane);

    const auto bad = run_tributary(db.url(), {"group", "create", "bad", "--lanes", "0"}, 2);
    CHECK(bad.code == 2);
    const auto many = run_tributary(db.url(), {"group", "create", "many", "--lanes", "300"}, 2);
    CHECK(many.code == 2);

    // --lanes from the CLI: the lanes, their index, and `group list` saying so; deleting the last
    // group of that count drops the index.
    const auto made = run_tributary(db.url(), {"group", "create", "four", "--lanes", "4", "--from", "beginning"});
    REQUIRE(made.code == 0);
    CHECK(db.scalar("SELECT count(*) FROM tributary.group_lanes") == "4");
    CHECK(db.scalar("SELECT to_regclass('tributary.events_lanes_4') IS NOT NULL") == "t");
    // Its readers (lane_readers_sql), for tributary's roles alone.
    CHECK(db.scalar("SELECT count(*) FROM pg_proc WHERE proname ~ '^lane_(fresh_arrays|batch_json|batch_events)_4$'") ==
          "3");
    CHECK(db.scalar("SELECT bool_or(has_function_privilege('public', oid, 'EXECUTE')) FROM pg_proc "
                    "WHERE proname ~ '^lane_.*_4$'") == "f");
    const auto listed = run_tributary(db.url(), {"group", "list"});
    CHECK(listed.out.find("lanes=4") != std::string::npos);
    // Nobody holds its lanes yet: a warning, per group and per lane.
    CHECK(listed.err.find("warning: group four: 4 of 4 lanes held by no consumer") != std::string::npos);
    for (const auto& g : nlohmann::json::parse(run_tributary(db.url(), {"group", "list", "--json"}).out))
        CHECK(g["unheld_lanes"] == (g["name"] == "four" ? 4 : 0));
    Consumer reader(db.url(), "four", "reader");
    reader.next();
    const auto lanes = nlohmann::json::parse(run_tributary(db.url(), {"group", "lanes", "four", "--json"}).out);
    REQUIRE(lanes.size() == 4u);
    for (const auto& lane : lanes) CHECK(lane["holder"] == "reader");
    CHECK(lanes[static_cast<std::size_t>(ids.at("s0") % 4)]["events_behind"] == 0);  // handed out
    const auto table = run_tributary(db.url(), {"group", "lanes", "four"});
    CHECK(table.out.find("reader") != std::string::npos);
    CHECK(table.err.find("warning") == std::string::npos);
    CHECK(run_tributary(db.url(), {"group", "lanes", "one"}).out.find("has one lane") != std::string::npos);
    CHECK(run_tributary(db.url(), {"group", "lanes", "nosuch"}, 1).code == 1);
    run_tributary(db.url(), {"group", "delete", "four"});
    CHECK(db.scalar("SELECT to_regclass('tributary.events_lanes_4') IS NULL") == "t");
    CHECK(db.scalar("SELECT count(*) FROM pg_proc WHERE proname ~ '^lane_.*_4$'") == "0");
}

TEST_CASE("migrate makes the readers of every lane count in use again", "[lanes]") {
    TestDatabase db;
    const auto ids = add_sources(db, 3);
    create_lane_group(db, "g", 3);
    // As a release whose readers differ, or none, left them (the definitions' digest tells
    // migrate to apply them again).
    db.exec("DROP FUNCTION tributary.lane_fresh_arrays_3, tributary.lane_batch_json_3, tributary.lane_batch_events_3");
    db.exec("UPDATE tributary.schema_definitions SET digest = 'from another build'");
    REQUIRE(run_tributary(db.url(), {"migrate"}).code == 0);
    CHECK(db.scalar("SELECT count(*) FROM pg_proc WHERE proname ~ '^lane_.*_3$'") == "3");
    CHECK(db.scalar("SELECT bool_or(has_function_privilege('public', oid, 'EXECUTE')) FROM pg_proc "
                    "WHERE proname ~ '^lane_.*_3$'") == "f");
    for (const auto& [name, id] : ids) commit_events(db, id, 1, 2);
    Consumer consumer(db.url(), "g", "c");
    CHECK(drain(consumer).size() == 6u);
}

TEST_CASE("group reset moves every lane", "[lanes]") {
    TestDatabase db;
    const auto ids = add_sources(db, 4);
    create_lane_group(db, "g", kLanes);
    for (const auto& [name, id] : ids) commit_events(db, id, 1, 2);
    Consumer consumer(db.url(), "g", "c");
    auto drained = drain(consumer);
    CHECK(drained.size() == 8u);
    run_tributary(db.url(), {"group", "reset", "g", "--to", "beginning"});
    drained = drain(consumer);
    CHECK(drained.size() == 8u);
}

TEST_CASE("consume processes share the lanes, take a killed one's, and give theirs back when stopped", "[lanes]") {
    ConsumeRig rig;
    rig.add_sources({"p.a", "p.b", "p.c", "p.d"});
    run_tributary(rig.url(), {"group", "create", "g", "--lanes", "4", "--lease", "2s", "--from", "beginning"});
    const auto consume = [&](const std::string& name) {
        return std::make_unique<ChildProcess>(tributary_args(
            rig.url(),
            {"consume", "g", "--consumer", name, "--idle-poll", "200ms", "--exec", "cat >> " + rig.path("out")}));
    };
    auto first = consume("first");
    for (const auto* source : {"p.a", "p.b", "p.c", "p.d"}) rig.add_events(source, 5);
    auto held = wait_for_holders(rig.db(), "g", [](const auto& h) { return h.size() == 1 && h.begin()->second == 4; });
    CHECK(held == std::map<std::string, int>{{"first", 4}});

    auto second = consume("second");
    held = wait_for_holders(rig.db(), "g", [](const auto& h) { return h.size() == 2; });
    CHECK(held == std::map<std::string, int>{{"first", 2}, {"second", 2}});

    // kill -9: its lanes are the first's one lease (2 s) after its last read.
    second->signal(SIGKILL);
    second->wait_for(10s);
    held = wait_for_holders(rig.db(), "g", [](const auto& h) { return h.size() == 1 && h.begin()->second == 4; });
    CHECK(held == std::map<std::string, int>{{"first", 4}});
    for (const auto* source : {"p.a", "p.b", "p.c", "p.d"}) rig.add_events(source, 5);

    // Everything, once: the killed one's batches in flight came again to the first.
    const auto deadline = std::chrono::steady_clock::now() + 60s;
    while (rig.seq_counts("out").size() < 40u && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(100ms);
    CHECK(rig.seq_counts("out").size() == 40u);

    // SIGTERM: it gives its lanes back as it stops.
    first->signal(SIGTERM);
    REQUIRE(first->wait_for(30s) == std::optional<int>(0));
    CHECK(first->err().find("gave back its 4 lane(s)") != std::string::npos);
    CHECK(rig.db().scalar("SELECT count(*) FROM tributary.group_lanes WHERE holder IS NOT NULL") == "0");
    CHECK(rig.db().scalar("SELECT count(*) FROM tributary.group_consumers WHERE seen_until > now()") == "0");
}

TEST_CASE("consume --until-idle that finds every lane held waits for its share, and exits once it is caught up",
          "[lanes]") {
    ConsumeRig rig;
    rig.add_sources({"p.a", "p.b", "p.c", "p.d"});  // ids in a row: one source a lane
    run_tributary(rig.url(), {"group", "create", "g", "--lanes", "4", "--from", "beginning"});
    for (const auto* source : {"p.a", "p.b", "p.c", "p.d"}) rig.add_events(source, 5);
    // The first consumer holds every lane (alone when it read), with a batch in hand.
    Consumer first(rig.db().url(), "g", "first");
    const auto batch = first.next_soon(1).batch;
    REQUIRE_FALSE(batch.empty());

    auto second = std::make_unique<ChildProcess>(tributary_args(
        rig.url(), {"consume", "g", "--consumer", "second", "--until-idle", "--exec", "cat >> " + rig.path("out")}));
    // Its reads find every lane held: it waits (before, it exited at once, having done nothing).
    const auto deadline = std::chrono::steady_clock::now() + 30s;
    while (rig.db().scalar("SELECT count(*) FROM tributary.group_consumers WHERE consumer = 'second'") != "1" &&
           std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(50ms);
    CHECK_FALSE(second->wait_for(0ms).has_value());

    // The first reads again: it gives back the lanes beyond its share, and the second reads them to the end.
    first.next(1, &batch);
    REQUIRE(second->wait_for(60s) == std::optional<int>(0));
    CHECK(rig.seq_counts("out").size() == 10u);  // two lanes of one source and 5 events each
    CHECK(holders(rig.db(), "g") == std::map<std::string, int>{{"first", 2}});
}
