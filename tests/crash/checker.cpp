#include "checker.h"

#include <algorithm>
#include <stdexcept>
#include <unordered_map>
#include <unordered_set>

#include <httplib.h>
#include <nlohmann/json.hpp>
#include <pqxx/pqxx>

namespace tributary::crash {

namespace {

using nlohmann::json;

constexpr int kEvidencePerClassAndSource = 3;

json get_json(const std::string& base_url, const std::string& path) {
    httplib::Client client(base_url);
    client.set_read_timeout(120, 0);
    const auto response = client.Get(path.c_str());
    if (!response || response->status != 200) throw std::runtime_error("checker: GET " + path + " failed");
    return json::parse(response->body);
}

class SourceCheck {
public:
    SourceCheck(const std::string& name, CheckReport& report) : name_(name), report_(report) {}

    void count(const std::string& klass, const std::string& evidence, long n = 1) {
        report_.counts[klass] += n;
        if (++shown_[klass] <= kEvidencePerClassAndSource)
            report_.evidence.push_back(klass + ": " + name_ + ": " + evidence);
    }

    /// Stored rows against the truth: lost, duplicated, order, payloads, hostile ids.
    void events(pqxx::transaction_base& tx, const json& truth) {
        std::unordered_map<long long, const json*> truth_by_id;
        for (const auto& event : truth) truth_by_id[event.at("id").get<long long>()] = &event.at("payload");
        report_.events_checked += static_cast<long>(truth_by_id.size());

        const auto rows = tx.exec_params(
            "SELECT e.event_id, e.seq, e.payload::text FROM tributary.events e"
            "  JOIN tributary.sources s ON s.id = e.source_id WHERE s.name = $1 ORDER BY e.seq",
            name_);
        report_.events_stored += static_cast<long>(rows.size());
        std::unordered_set<long long> stored;
        std::unordered_map<std::string, long long> id_of_payload;
        long long previous = 0;
        bool first = true;
        for (const auto& row : rows) {
            const auto id = row[0].as<long long>();
            const auto seq = row[1].as<long long>();
            const json payload = json::parse(row[2].c_str());
            if (!stored.insert(id).second)
                count("duplicated",
                      "event id " + std::to_string(id) + " stored twice (seq " + std::to_string(seq) + ")");
            // The same event under a second id (a shifted batch) is a duplicate too.
            const auto [it, fresh] = id_of_payload.emplace(payload.dump(), id);
            if (!fresh && it->second != id)
                count("duplicated",
                      "payload of id " + std::to_string(it->second) + " stored again as id " + std::to_string(id));
            if (!first && id < previous)
                count("out_of_order", "id " + std::to_string(id) + " (seq " + std::to_string(seq) + ") after id " +
                                          std::to_string(previous));
            previous = id;  // counts descents: one misplaced row counts once, not every row after it
            first = false;
            const auto truth_it = truth_by_id.find(id);
            if (truth_it == truth_by_id.end()) {
                count("stored_from_hostile_batch",
                      "id " + std::to_string(id) + " is not in the ground truth; payload " + row[2].c_str());
            } else if (*truth_it->second != payload) {
                count("payload_mismatch", "id " + std::to_string(id) + ": stored " +
                                              std::string(row[2].c_str()).substr(0, 200) + " vs truth " +
                                              truth_it->second->dump().substr(0, 200));
            }
        }
        long lost = 0;
        long long first_lost = 0;
        for (const auto& [id, payload] : truth_by_id) {
            if (stored.count(id)) continue;
            if (!lost++ || id < first_lost) first_lost = id;
        }
        if (lost)
            count("lost",
                  std::to_string(lost) + " of " + std::to_string(truth_by_id.size()) +
                      " truth events not stored, the first id " + std::to_string(first_lost),
                  lost);
        max_id_ = stored.empty() ? 0 : *std::max_element(stored.begin(), stored.end());
        stored_ = static_cast<long long>(stored.size());
    }

    /// The cursor row must agree with what is stored: the last id and the count.
    void cursor(pqxx::transaction_base& tx) {
        const auto rows = tx.exec_params(
            "SELECT c.last_event_id, c.events_stored FROM tributary.cursors c"
            "  JOIN tributary.sources s ON s.id = c.source_id WHERE s.name = $1",
            name_);
        if (rows.size() != 1) return count("cursor_inconsistent", "no cursor row");
        const auto last = rows[0][0].as<long long>(), counted = rows[0][1].as<long long>();
        if (last != max_id_ || counted != stored_)
            count("cursor_inconsistent", "cursor " + std::to_string(last) + " / events_stored " +
                                             std::to_string(counted) + " but stored max id " + std::to_string(max_id_) +
                                             " / count " + std::to_string(stored_));
    }

    /// Every request the source received, hostile ones included, in arrival order.
    void gate(const json& requests, std::chrono::milliseconds min_gap) {
        std::vector<const json*> sorted;
        for (const auto& r : requests) sorted.push_back(&r);
        std::sort(sorted.begin(), sorted.end(), [](const json* a, const json* b) {
            return a->at("arrival_us").get<long long>() < b->at("arrival_us").get<long long>();
        });
        report_.requests_checked += static_cast<long>(sorted.size());
        const long long min_us = min_gap.count() * 1000;
        for (std::size_t i = 1; i < sorted.size(); ++i) {
            const long long gap =
                sorted[i]->at("arrival_us").get<long long>() - sorted[i - 1]->at("arrival_us").get<long long>();
            report_.min_gap_ms = std::min(report_.min_gap_ms, gap / 1000.0);
            if (gap < min_us)
                count("gate_violation", std::to_string(gap / 1000.0) + " ms between " + sorted[i - 1]->dump() +
                                            " and " + sorted[i]->dump());
        }
    }

private:
    std::string name_;
    CheckReport& report_;
    std::map<std::string, int> shown_;
    long long max_id_ = 0, stored_ = 0;
};

}  // namespace

CheckReport check(const CheckInput& input) {
    CheckReport report;
    for (const char* klass : {"lost", "duplicated", "out_of_order", "payload_mismatch", "stored_from_hostile_batch",
                              "cursor_inconsistent", "gate_violation"})
        report.counts[klass] = 0;
    pqxx::connection connection(input.db_url);
    for (const auto& name : input.sources) {
        SourceCheck source(name, report);
        // One snapshot for the rows and the cursor, so they can be compared.
        pqxx::transaction<pqxx::isolation_level::repeatable_read> tx(connection);
        source.events(tx, get_json(input.source_server_url, "/_truth/" + name));
        source.cursor(tx);
        tx.commit();
        source.gate(get_json(input.source_server_url, "/_requests?source=" + name), input.min_gap);
    }
    return report;
}

}  // namespace tributary::crash
