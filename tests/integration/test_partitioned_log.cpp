// The partitioned log (issue 16): tributary.events is cut by ranges of
// tx_id; a consumer group reads across partitions one at a time, every event
// once and in order, without stalling on partitions that hold nothing for
// it, in batches a partition's end does not cut short; a key is stored once
// whatever partition its first copy is in.

#include <catch2/catch.hpp>

#include <pqxx/pqxx>

#include "support/partitioned_log.h"
#include "support/test_database.h"
#include "support/tributary_cli.h"

using namespace tributary::testing;

TEST_CASE("a group reads a log of many partitions: every event once, in order, one partition at a time",
          "[partitions]") {
    TestDatabase db;
    cut_into_small_partitions(db, 12, 40);
    run_tributary(db.url(), {"source", "add", "a.one", "--published"});
    run_tributary(db.url(), {"source", "add", "b.one", "--published"});
    run_tributary(db.url(), {"group", "create", "only-a", "--pattern", "a.>", "--from", "beginning"});
    run_tributary(db.url(), {"group", "create", "all", "--from", "beginning"});
    run_tributary(db.url(), {"group", "create", "lanes", "--from", "beginning", "--lanes", "4"});

    // a's events in the first partitions and the last, b's alone in the
    // partitions between: one transaction (one transaction id) per publish.
    std::vector<std::string> a_keys;
    std::vector<std::string> all_keys;
    auto publish = [&](const std::string& source, const std::string& key) {
        db.exec("SELECT tributary.publish('" + source + "', '" + key + "', '{}')");
        all_keys.push_back(key);
        if (source == "a.one") a_keys.push_back(key);
    };
    for (int i = 0; i < 60; ++i) publish("a.one", "a-" + std::to_string(i));
    for (int i = 0; i < 200; ++i) publish("b.one", "b-" + std::to_string(i));
    for (int i = 60; i < 100; ++i) publish("a.one", "a-" + std::to_string(i));
    use_transaction_ids(db, 5);  // the watermark past the last publish

    const auto partitions_used = std::stoi(db.scalar("SELECT count(DISTINCT tableoid) FROM tributary.events"));
    INFO("partitions holding events: " << partitions_used);
    REQUIRE(partitions_used >= 8);
    REQUIRE(db.scalar("SELECT count(*) FROM tributary.events_default") == "0");

    SECTION("a group of every source gets every event once, in log order, in full batches across partitions") {
        const auto batches = consume_all(db, "all", 100);
        std::vector<std::string> got;
        for (const auto& b : batches) got.insert(got.end(), b.begin(), b.end());
        CHECK(got == all_keys);
        REQUIRE(batches.size() == 3);  // 300 events, each partition holding at most 40
        for (const auto& b : batches) CHECK(b.size() == 100);
    }
    SECTION("a group of lanes fills each lane's batches across partitions too") {
        REQUIRE(db.scalar("SELECT count(DISTINCT id % 4) FROM tributary.sources") == "2");  // a lane each
        const auto batches = consume_all(db, "lanes", 50);
        std::vector<std::string> got_a;
        std::vector<std::string> got_b;
        for (const auto& b : batches) {
            REQUIRE(!b.empty());
            auto& got = b.front().front() == 'a' ? got_a : got_b;
            for (const auto& key : b) CHECK(key.front() == b.front().front());  // a batch comes from one lane
            got.insert(got.end(), b.begin(), b.end());
            CHECK(b.size() == 50);
        }
        std::vector<std::string> b_keys;
        for (const auto& key : all_keys)
            if (key.front() == 'b') b_keys.push_back(key);
        CHECK(got_a == a_keys);
        CHECK(got_b == b_keys);
        CHECK(batches.size() == 6);
    }
    SECTION("a pattern group crosses the partitions that hold nothing for it without an empty answer") {
        const auto batches = consume_all(db, "only-a");
        std::vector<std::string> got;
        for (const auto& b : batches) got.insert(got.end(), b.begin(), b.end());
        CHECK(got == a_keys);
        CHECK(db.scalar("SELECT events_behind FROM tributary.group_status WHERE name = 'only-a'") == "0");
    }
    SECTION("a key published again after its partition rolled over is not stored twice") {
        CHECK(db.scalar("SELECT tributary.publish('a.one', 'a-0', '{\"again\": true}')") == "f");
        CHECK(db.scalar("SELECT tributary.publish('b.one', '[{\"key\": \"b-1\", \"payload\": 1}, "
                        "{\"key\": \"b-new\", \"payload\": 2}, {\"key\": \"b-new\", \"payload\": 3}]')") == "1");
        CHECK(db.scalar("SELECT count(*) FROM tributary.events WHERE event_key IN ('a-0', 'b-1')") == "2");
        CHECK(db.scalar("SELECT payload FROM tributary.events WHERE event_key = 'b-new'") == "2");
    }
}

TEST_CASE("events of transactions no partition covers go to the default partition and are read in order",
          "[partitions]") {
    TestDatabase db;
    cut_into_small_partitions(db, 1, 20);
    run_tributary(db.url(), {"source", "add", "p", "--published"});
    run_tributary(db.url(), {"group", "create", "g", "--from", "beginning"});
    std::vector<std::string> keys;
    for (int i = 0; i < 50; ++i) {
        keys.push_back("k" + std::to_string(i));
        db.exec("SELECT tributary.publish('p', 'k" + std::to_string(i) + "', '{}')");
    }
    use_transaction_ids(db, 3);
    REQUIRE(std::stoi(db.scalar("SELECT count(*) FROM tributary.events_default")) > 0);
    std::vector<std::string> got;
    for (const auto& b : consume_all(db, "g")) got.insert(got.end(), b.begin(), b.end());
    CHECK(got == keys);
}
