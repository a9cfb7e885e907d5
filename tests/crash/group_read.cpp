#include "group_read.h"

#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <nlohmann/json.hpp>
#include <pqxx/pqxx>

namespace tributary::crash {

namespace {

constexpr int kBatch = 1000;
const char* kGroup = "crash-final-reader";
/// The same log read again by a group of lanes (issue 28), by two consumers taking turns: each
/// source's events in order, none lost, none twice.
const char* kLaneGroup = "crash-final-lanes";
constexpr int kLanes = 4;

/// One consumer_next call of `consumer` of `group`, acking (batch, token) when given: the seqs
/// handed, and the new batch's id and token ("NULL" when none).
std::vector<long long> next_batch(pqxx::connection& c, const std::string& group, const std::string& consumer,
                                  std::string& batch, std::string& token) {
    pqxx::nontransaction tx(c);
    const auto row =
        tx.exec1("SELECT batch_id, lease_token, events FROM tributary.consumer_next(" + tx.quote(group) + ", " +
                 tx.quote(consumer) + ", " + std::to_string(kBatch) + ", " + batch + ", " + token + ")");
    std::vector<long long> seqs;
    if (row[0].is_null()) {
        batch = token = "NULL";
        return seqs;
    }
    for (const auto& event : nlohmann::json::parse(row[2].c_str())) seqs.push_back(event.at("seq").get<long long>());
    batch = row[0].c_str();
    token = tx.quote(row[1].c_str()) + "::uuid";
    return seqs;
}

/// Every seq consumer_next hands the group, batch after batch (each acked by
/// the next call), until a call hands nothing.
std::vector<long long> consume_all(pqxx::connection& c) {
    std::vector<long long> seqs;
    std::string batch = "NULL", token = "NULL";
    do {
        const auto handed = next_batch(c, kGroup, "checker", batch, token);
        seqs.insert(seqs.end(), handed.begin(), handed.end());
    } while (batch != "NULL");
    return seqs;
}

/// The group of lanes read by two consumers in turn until neither is handed anything twice in
/// a row (the second holds lanes only once the first has given back its share).
std::vector<long long> consume_all_lanes(pqxx::connection& c) {
    std::vector<long long> seqs;
    std::string batch[2] = {"NULL", "NULL"}, token[2] = {"NULL", "NULL"};
    for (int idle = 0, turn = 0; idle < 4; turn = 1 - turn) {
        const auto handed = next_batch(c, kLaneGroup, "lanes-" + std::to_string(turn), batch[turn], token[turn]);
        seqs.insert(seqs.end(), handed.begin(), handed.end());
        idle = handed.empty() ? idle + 1 : 0;
    }
    return seqs;
}

/// What a group was handed against the log, in the log's order (`log`; every event's source in
/// `source_of`). `per_source`: order is checked within each source only (a group of lanes).
void check_handed(CheckReport& report, const std::string& who, const std::vector<long long>& log,
                  const std::unordered_map<long long, int>& source_of, const std::vector<long long>& handed,
                  bool per_source) {
    std::unordered_map<long long, std::size_t> position;  // seq -> where in the log's order
    for (std::size_t i = 0; i < log.size(); ++i) position.emplace(log[i], i);
    std::unordered_set<long long> seen;
    std::unordered_map<int, std::size_t> previous;  // per source (or all under 0): the last position
    for (const auto seq : handed) {
        if (!seen.insert(seq).second) {
            count_anomaly(report, "group_duplicated", who + ": seq " + std::to_string(seq) + " handed twice");
            continue;
        }
        const auto it = position.find(seq);
        if (it == position.end()) {
            count_anomaly(report, "group_duplicated",
                          who + ": seq " + std::to_string(seq) + " handed, but the log holds no such event");
            continue;
        }
        const int key = per_source ? source_of.at(seq) : 0;
        // Counts descents: one misplaced event counts once, not every event after it.
        const auto last = previous.find(key);
        if (last != previous.end() && it->second < last->second)
            count_anomaly(report, "group_out_of_order",
                          who + ": seq " + std::to_string(seq) + " handed after seq " +
                              std::to_string(log[last->second]) + ", which comes later in (tx_id, seq) order" +
                              (per_source ? " in its source" : ""));
        previous[key] = it->second;
    }
    long lost = 0;
    long long first_lost = -1;
    for (const auto seq : log)
        if (!seen.count(seq) && !lost++) first_lost = seq;
    if (lost)
        count_anomaly(report, "group_lost",
                      who + ": " + std::to_string(lost) + " of " + std::to_string(log.size()) +
                          " events never handed, the first seq " + std::to_string(first_lost),
                      lost);
}

}  // namespace

CheckReport read_as_group(const std::string& db_url, bool lanes_by_shard) {
    CheckReport report;
    for (const char* klass : {"group_lost", "group_duplicated", "group_out_of_order"}) report.counts[klass] = 0;
    pqxx::connection c(db_url);
    std::vector<long long> log;  // the log's order
    std::unordered_map<long long, int> source_of;
    {
        pqxx::nontransaction tx(c);
        tx.exec_params("SELECT tributary.group_create($1, '>', 'beginning')", kGroup);
        if (lanes_by_shard) tx.exec_params("SELECT tributary.group_create($1, '>', 'beginning')", kLaneGroup);
        else tx.exec_params("SELECT tributary.group_create($1, '>', 'beginning', p_lanes => $2)", kLaneGroup, kLanes);
        for (const auto& row : tx.exec("SELECT seq, source_id FROM tributary.events ORDER BY tx_id, seq")) {
            log.push_back(row[0].as<long long>());
            source_of.emplace(row[0].as<long long>(), row[1].as<int>());
        }
    }
    const auto handed = consume_all(c);
    const auto handed_by_lanes = consume_all_lanes(c);
    report.events_checked = static_cast<long>(log.size());
    report.events_stored = static_cast<long>(handed.size());
    check_handed(report, "the group", log, source_of, handed, lanes_by_shard);
    check_handed(report, "the group of lanes", log, source_of, handed_by_lanes, true);
    return report;
}

}  // namespace tributary::crash
