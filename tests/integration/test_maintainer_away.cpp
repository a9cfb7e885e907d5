// The maintainer back after an absence, under a sustained publish load (issue 26): the transaction
// ids the partitions ahead covered are used up, so events go to the default partition; sessions
// keep publishing, one event per transaction, while `tributary maintain` comes back. No write may
// fail (the docs: loaders never fail for want of a partition), the maintainer must make partitions
// ahead of the writers again, and `tributary log repartition` then empties the default partition
// while writers and a consumer group run: every event kept once, the group reads each once, in
// log order. Tests wait for states with caps far past any machine's pace; nothing asserts how fast.

#include <catch2/catch.hpp>

#include <signal.h>

#include <atomic>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>
#include <pqxx/pqxx>

#include "support/child_process.h"
#include "support/partitioned_log.h"
#include "support/test_database.h"
#include "support/tributary_cli.h"

using namespace tributary::testing;
using namespace std::chrono_literals;

namespace {

/// Sessions publishing to p.a, one event per transaction, until stopped; every key stored and
/// every failure kept.
class Publishers {
public:
    Publishers(const std::string& url, int sessions) {
        for (int i = 0; i < sessions; ++i) threads_.emplace_back([this, url, i] { publish(url, i); });
    }
    ~Publishers() { stop(); }

    void stop() {
        stop_ = true;
        for (auto& t : threads_)
            if (t.joinable()) t.join();
    }
    long published() const { return published_; }
    std::vector<std::string> failures() {
        std::lock_guard<std::mutex> guard(mutex_);
        return failures_;
    }
    std::vector<std::string> keys() {
        std::lock_guard<std::mutex> guard(mutex_);
        return keys_;
    }

private:
    void publish(const std::string& url, int session) {
        try {
            pqxx::connection c(url);
            c.prepare("publish", "SELECT tributary.publish('p.a', $1, '{}')");
            for (long n = 0; !stop_; ++n) {
                const auto key = "s" + std::to_string(session) + "-" + std::to_string(n);
                try {
                    pqxx::nontransaction tx(c);
                    tx.exec_prepared("publish", key);
                    std::lock_guard<std::mutex> guard(mutex_);
                    keys_.push_back(key);
                    ++published_;
                } catch (const std::exception& e) {
                    std::lock_guard<std::mutex> guard(mutex_);
                    failures_.push_back(e.what());
                    if (failures_.size() > 50) return;
                }
            }
        } catch (const std::exception& e) {
            std::lock_guard<std::mutex> guard(mutex_);
            failures_.push_back(std::string("session: ") + e.what());
        }
    }

    std::atomic<bool> stop_{false};
    std::atomic<long> published_{0};
    std::mutex mutex_;
    std::vector<std::string> failures_;
    std::vector<std::string> keys_;
    std::vector<std::thread> threads_;
};

/// A consumer of group g on its own session: each batch acked by the next call.
class GroupReader {
public:
    explicit GroupReader(const std::string& url) : c_(url) {}

    /// One call of consumer_next (acking the previous batch); the number of events handed out.
    std::size_t next() {
        pqxx::nontransaction tx(c_);
        const auto rows = tx.exec("SELECT batch_id, lease_token, events FROM tributary.consumer_next('g', 'c', 500, " +
                                  batch_ + ", " + token_ + ")");
        if (rows.empty() || rows[0][0].is_null()) {
            batch_ = token_ = "NULL";
            return 0;
        }
        const auto events = nlohmann::json::parse(rows[0][2].as<std::string>());
        for (const auto& e : events) keys.push_back(e["event_key"].get<std::string>());
        batch_ = rows[0][0].as<std::string>();
        token_ = tx.quote(rows[0][1].as<std::string>()) + "::uuid";
        return events.size();
    }

    std::vector<std::string> keys;

private:
    pqxx::connection c_;
    std::string batch_ = "NULL", token_ = "NULL";
};

template <typename Done>
void wait_until(Done done, const std::string& what, std::chrono::seconds cap = 180s) {
    const auto deadline = std::chrono::steady_clock::now() + cap;
    while (!done()) {
        if (std::chrono::steady_clock::now() > deadline) FAIL("never happened: " << what);
        std::this_thread::sleep_for(100ms);
    }
}

/// The partition the newest event is in, and whether partitions reach past the counter.
bool partitions_ahead_of_writers(const TestDatabase& db) {
    return db.scalar("SELECT (SELECT max(to_tx) FROM tributary.partitions) > tributary.next_xid() "
                     "AND (SELECT tableoid::regclass::text FROM tributary.events ORDER BY seq DESC LIMIT 1) "
                     "<> 'tributary.events_default'") == "t";
}

}  // namespace

// No write fails, partitions are ahead of the writers again, and `log repartition` empties the
// default partition while they write and a group reads.
TEST_CASE("a maintainer back after the partitions ahead ran out catches up under sustained publishing",
          "[partitions][maintainer-away]") {
    TestDatabase db;
    run_tributary(db.url(), {"source", "add", "p.a", "--published"});
    run_tributary(db.url(), {"group", "create", "g", "--from", "beginning"});

    // No maintainer: the transaction ids the partitions migrate made ahead cover are used up.
    const auto end = std::stoll(db.scalar("SELECT max(to_tx) FROM tributary.partitions"));
    const auto next = std::stoll(db.scalar("SELECT tributary.next_xid()"));
    use_transaction_ids(db, static_cast<int>(end - next) + 10);
    REQUIRE(std::stoll(db.scalar("SELECT tributary.next_xid()")) > end);

    Publishers publishers(db.url(), 4);
    wait_until([&] { return publishers.published() >= 400; }, "publishers stored 400 events");
    REQUIRE(std::stoi(db.scalar("SELECT count(*) FROM tributary.events_default")) > 0);

    // The maintainer comes back while they publish.
    ChildProcess maintainer(tributary_args(db.url(), {"maintain", "--interval", "1s"}));
    wait_until([&] { return partitions_ahead_of_writers(db); }, "partitions ahead of the writers again");
    const auto caught_up_at = publishers.published();
    wait_until([&] { return publishers.published() >= caught_up_at + 400; }, "400 more events after catching up");

    // The default partition emptied while they still publish and the group reads.
    GroupReader reader(db.url());
    for (int i = 0; i < 3; ++i) reader.next();
    std::atomic<bool> reading{true};
    std::string reader_error;
    std::thread reading_thread([&] {
        try {
            while (reading)
                if (reader.next() == 0) std::this_thread::sleep_for(20ms);
        } catch (const std::exception& e) {
            reader_error = e.what();
        }
    });
    const auto repartitioned = run_tributary(db.url(), {"log", "repartition", "--max-events", "300"});
    reading = false;
    reading_thread.join();
    INFO(repartitioned.out);
    CHECK_THAT(repartitioned.out, Catch::Contains("moved "));
    CHECK(reader_error.empty());

    publishers.stop();
    maintainer.signal(SIGTERM);
    REQUIRE(maintainer.wait_for(60s) == 0);
    const auto log = maintainer.err();
    INFO(log.substr(log.size() > 4000 ? log.size() - 4000 : 0));

    {  // no write failed, and every event is stored once
        const auto failures = publishers.failures();
        INFO("first failure: " << (failures.empty() ? "" : failures.front()));
        CHECK(failures.empty());
        const auto keys = publishers.keys();
        CHECK(std::stol(db.scalar("SELECT count(*) FROM tributary.events")) == static_cast<long>(keys.size()));
        CHECK(db.scalar("SELECT count(DISTINCT event_key) FROM tributary.events") == std::to_string(keys.size()));
        CHECK_THAT(log, !Catch::Contains("would be violated"));
    }
    {  // the maintainer made partitions ahead of the writers
        CHECK_THAT(log, Catch::Contains("created partition"));
        CHECK(db.scalar("SELECT max(to_tx) > tributary.next_xid() FROM tributary.partitions") == "t");
    }
    {  // the default partition is emptied, and the group reads every event once, in log order
        // What the writers left in it after the command (none below the horizon) goes by a second run.
        run_tributary(db.url(), {"log", "repartition"});
        CHECK(db.scalar("SELECT count(*) FROM tributary.events_default") == "0");
        CHECK_THAT(run_tributary(db.url(), {"log"}).out, !Catch::Contains("default partition"));
        while (reader.next() > 0) {
        }
        pqxx::connection c(db.url());
        pqxx::nontransaction tx(c);
        std::vector<std::string> in_order;
        for (const auto& row : tx.exec("SELECT event_key FROM tributary.events ORDER BY tx_id, seq"))
            in_order.push_back(row[0].as<std::string>());
        CHECK(reader.keys.size() == in_order.size());
        CHECK(reader.keys == in_order);
    }
}
