#include "support/partitioned_log.h"

#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>
#include <pqxx/pqxx>

namespace tributary::testing {

/// Transaction ids used one by one (one per committed transaction), so that
/// the log's later events land in later partitions.
void use_transaction_ids(const TestDatabase& db, int count) {
    db.exec("DO $$ BEGIN SET LOCAL synchronous_commit = off; FOR i IN 1.." + std::to_string(count) +
            " LOOP PERFORM pg_current_xact_id(); COMMIT; SET LOCAL synchronous_commit = off; END LOOP; END $$");
}

/// The log recut for the test: the partitions `migrate` made ahead (wide and
/// empty) dropped, then `count` partitions of `width` transaction ids each,
/// from the end of events_0 on; transaction ids used up to that end.
void cut_into_small_partitions(const TestDatabase& db, int count, int width) {
    pqxx::connection c(db.url());
    pqxx::work tx(c);
    for (const auto& row : tx.exec("SELECT name FROM tributary.partitions WHERE name <> 'events_0'"))
        tx.exec("DROP TABLE tributary." + tx.quote_name(row[0].as<std::string>()));
    tx.exec("DELETE FROM tributary.partitions WHERE name <> 'events_0'");
    tx.commit();
    const auto end = std::stoll(db.scalar("SELECT to_tx FROM tributary.partitions WHERE name = 'events_0'"));
    const auto next = std::stoll(db.scalar("SELECT tributary.next_xid()"));
    REQUIRE(next <= end);
    use_transaction_ids(db, static_cast<int>(end - next));
    for (int i = 0; i < count; ++i)
        db.exec("SELECT tributary.add_partition('" + std::to_string(end + i * width) + "', '" +
                std::to_string(end + (i + 1) * width) + "')");
}

/// Every batch consumer_next hands `consumer` of `group` until one comes
/// back empty, each acked by the next call: the keys of each batch.
std::vector<std::vector<std::string>> consume_all(const TestDatabase& db, const std::string& group, int batch_size) {
    pqxx::connection c(db.url());
    std::vector<std::vector<std::string>> batches;
    std::string batch = "NULL";
    std::string token = "NULL";
    for (int call = 0; call < 1000; ++call) {
        pqxx::nontransaction tx(c);
        const auto rows =
            tx.exec("SELECT batch_id, lease_token, events FROM tributary.consumer_next(" + tx.quote(group) + ", 'c', " +
                    std::to_string(batch_size) + ", " + batch + ", " + token + ")");
        if (rows.empty() || rows[0][0].is_null()) break;  // nothing: (the last ack's answer alone)
        std::vector<std::string> keys;
        for (const auto& event : nlohmann::json::parse(rows[0][2].as<std::string>()))
            keys.push_back(event["event_key"].get<std::string>());
        batches.push_back(keys);
        batch = rows[0][0].as<std::string>();
        token = tx.quote(rows[0][1].as<std::string>()) + "::uuid";
    }
    return batches;
}

std::string partition_of(const TestDatabase& db, const std::string& source, const std::string& key) {
    pqxx::connection c(db.url());
    pqxx::nontransaction tx(c);
    const auto rows = tx.exec(
        "SELECT e.tableoid::regclass::text FROM tributary.events e JOIN tributary.sources s "
        "ON s.id = e.source_id WHERE s.name = " +
        tx.quote(source) + " AND e.event_key = " + tx.quote(key));
    if (rows.empty()) return "";
    const auto name = rows[0][0].as<std::string>();
    return name.substr(name.find('.') + 1);
}

}  // namespace tributary::testing
