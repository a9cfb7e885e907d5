// A worker down (issue 29; sql/internal/33_unreachable_workers.sql): a group's lanes on the
// other worker are still read. A consumer's session skips the lanes of a worker that does not
// answer, says so once in a WARNING, and the lanes are read again once the worker is back.

#include <catch2/catch.hpp>

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <pqxx/pqxx>

#include "citus_cluster.h"
#include "support/tributary_cli.h"

using namespace tributary::testing;

namespace {

constexpr int kSources = 6;

/// The messages PostgreSQL sent a connection besides results: its WARNINGs.
class ServerMessages : public pqxx::errorhandler {
public:
    explicit ServerMessages(pqxx::connection_base& c) : pqxx::errorhandler(c) {}
    bool operator()(const char message[]) noexcept override {
        messages.emplace_back(message);
        return true;
    }
    long count(const std::string& text) const {
        return std::count_if(messages.begin(), messages.end(),
                             [&](const std::string& m) { return m.find(text) != std::string::npos; });
    }
    std::vector<std::string> messages;
};

/// Every event consumer "c" of group "g" gets on `connection` until a call finds nothing,
/// acknowledged: "source/key", sorted.
std::vector<std::string> drain(pqxx::connection& connection) {
    std::vector<std::string> events;
    for (;;) {
        pqxx::nontransaction tx(connection);
        const auto row = tx.exec1(
            "SELECT json_build_object('id', batch_id, 'token', lease_token, 'events', events::json)::text "
            "FROM tributary.consumer_next('g', 'c', 100, NULL, NULL)");
        const auto batch = nlohmann::json::parse(row[0].as<std::string>());
        if (batch["id"].is_null()) break;
        for (const auto& event : batch["events"])
            events.push_back(event["source"].get<std::string>() + "/" + event["event_key"].get<std::string>());
        tx.exec("SELECT tributary.consumer_ack(" + std::to_string(batch["id"].get<long long>()) + ", '" +
                batch["token"].get<std::string>() + "')");
    }
    std::sort(events.begin(), events.end());
    return events;
}

}  // namespace

TEST_CASE("a worker down stops only its own lanes: a group reads the other worker's", "[citus]") {
    const CitusCluster cluster;
    cluster.reset();
    run_tributary(cluster.url(), {"migrate"});
    for (int i = 1; i <= kSources; ++i)
        run_tributary(cluster.url(), {"source", "add", "pub.s" + std::to_string(i), "--published"});
    run_tributary(cluster.url(), {"group", "create", "g", "--from", "beginning"});
    std::vector<std::string> on_worker1, on_worker2;
    for (int i = 1; i <= kSources; ++i) {
        const auto source = "pub.s" + std::to_string(i);
        cluster.exec("SELECT tributary.publish('" + source + "', 'k', '{}')");
        (cluster.node_of(i) == "worker1" ? on_worker1 : on_worker2).push_back(source + "/k");
    }
    REQUIRE(!on_worker1.empty());
    REQUIRE(!on_worker2.empty());
    std::sort(on_worker1.begin(), on_worker1.end());
    std::sort(on_worker2.begin(), on_worker2.end());

    NodeOutage outage(cluster, "worker2");
    {
        // One consumer's session: worker1's events, and one WARNING for worker2, whose lanes the
        // session then skips without trying.
        pqxx::connection consumer(cluster.url());
        ServerMessages said(consumer);
        CHECK(drain(consumer) == on_worker1);
        CHECK(said.count("does not answer") == 1);
        CHECK(drain(consumer).empty());
        CHECK(said.count("does not answer") == 1);
    }
    {
        // consumer_read too, in a session of its own: nothing left on worker1, and no error.
        pqxx::connection reader(cluster.url());
        ServerMessages said(reader);
        pqxx::nontransaction tx(reader);
        CHECK(tx.exec("SELECT * FROM tributary.consumer_read('g', 'c', 100)").empty());
        CHECK(said.count("does not answer") == 1);
    }
    {
        // `tributary consume` starts (it asks for the group's lease, not its backlog on every
        // worker), logs the worker it skips, and gets what worker1 stored meanwhile.
        for (const auto& event : on_worker1)
            cluster.exec("SELECT tributary.publish('" + event.substr(0, event.find('/')) + "', 'k2', '{}')");
        char path[] = "/tmp/tributary-worker-down-XXXXXX";
        const int fd = mkstemp(path);
        REQUIRE(fd >= 0);
        close(fd);
        const auto consumed = run_tributary(cluster.url(), {"consume", "g", "--consumer", "c", "--until-idle",
                                                            "--poll-only", "--exec", std::string("cat >> ") + path});
        CHECK(consumed.err.find("does not answer") != std::string::npos);
        std::ifstream file(path);
        long lines = 0;
        for (std::string line; std::getline(file, line);) lines += line.find("\"k2\"") != std::string::npos;
        std::remove(path);
        CHECK(lines == static_cast<long>(on_worker1.size()));
    }
    outage.end();

    // Back: a new session reads worker2's lanes, which kept their positions.
    pqxx::connection consumer(cluster.url());
    CHECK(drain(consumer) == on_worker2);
    cluster.reset();
}
