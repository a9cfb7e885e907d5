#include "group_read.h"

#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <nlohmann/json.hpp>
#include <pqxx/pqxx>

namespace tributary::crash {

namespace {

constexpr int kBatch = 1000;
constexpr int kEvidencePerClass = 3;
const char* kGroup = "crash-final-reader";

void count(CheckReport& report, const std::string& klass, const std::string& evidence, long n = 1) {
    report.counts[klass] += n;
    long shown = 0;
    for (const auto& e : report.evidence) shown += e.rfind(klass + ":", 0) == 0;
    if (shown < kEvidencePerClass) report.evidence.push_back(klass + ": " + evidence);
}

/// Every seq consumer_next hands the group, batch after batch (each acked by
/// the next call), until a call hands nothing.
std::vector<long long> consume_all(pqxx::connection& c) {
    std::vector<long long> seqs;
    std::string batch = "NULL", token = "NULL";
    while (true) {
        pqxx::nontransaction tx(c);
        const auto row =
            tx.exec1("SELECT batch_id, lease_token, events FROM tributary.consumer_next(" + tx.quote(kGroup) +
                     ", 'checker', " + std::to_string(kBatch) + ", " + batch + ", " + token + ")");
        if (row[0].is_null()) return seqs;
        for (const auto& event : nlohmann::json::parse(row[2].c_str()))
            seqs.push_back(event.at("seq").get<long long>());
        batch = row[0].c_str();
        token = tx.quote(row[1].c_str()) + "::uuid";
    }
}

}  // namespace

CheckReport read_as_group(const std::string& db_url) {
    CheckReport report;
    for (const char* klass : {"group_lost", "group_duplicated", "group_out_of_order"}) report.counts[klass] = 0;
    pqxx::connection c(db_url);
    std::vector<long long> log;  // the log's order
    {
        pqxx::nontransaction tx(c);
        tx.exec_params("SELECT tributary.group_create($1, '>', 'beginning')", kGroup);
        for (const auto& row : tx.exec("SELECT seq FROM tributary.events ORDER BY tx_id, seq"))
            log.push_back(row[0].as<long long>());
    }
    const auto handed = consume_all(c);
    report.events_checked = static_cast<long>(log.size());
    report.events_stored = static_cast<long>(handed.size());

    std::unordered_map<long long, std::size_t> position;  // seq -> where in the log's order
    for (std::size_t i = 0; i < log.size(); ++i) position.emplace(log[i], i);
    std::unordered_set<long long> seen;
    std::size_t previous = 0;
    bool first = true;
    for (const auto seq : handed) {
        if (!seen.insert(seq).second) {
            count(report, "group_duplicated", "seq " + std::to_string(seq) + " handed to the group twice");
            continue;
        }
        const auto it = position.find(seq);
        if (it == position.end()) {
            count(report, "group_duplicated",
                  "seq " + std::to_string(seq) + " handed, but the log holds no such event");
            continue;
        }
        // Counts descents: one misplaced event counts once, not every event after it.
        if (!first && it->second < previous)
            count(report, "group_out_of_order",
                  "seq " + std::to_string(seq) + " handed after seq " + std::to_string(log[previous]) +
                      ", which comes later in (tx_id, seq) order");
        previous = it->second;
        first = false;
    }
    long lost = 0;
    long long first_lost = -1;
    for (const auto seq : log)
        if (!seen.count(seq) && !lost++) first_lost = seq;
    if (lost)
        count(report, "group_lost",
              std::to_string(lost) + " of " + std::to_string(log.size()) + " events never handed, the first seq " +
                  std::to_string(first_lost),
              lost);
    return report;
}

}  // namespace tributary::crash
