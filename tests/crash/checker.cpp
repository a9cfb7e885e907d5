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

/// A record of the ground truth: where it comes in the source's order, and its payload.
struct TruthRecord {
    std::size_t index;
    const json* payload;
};

class SourceCheck {
public:
    SourceCheck(const CheckedSource& source, CheckReport& report)
        : source_(source), report_(report), figures_(report.by_style[source.style]) {
        ++figures_.sources;
    }

    void count(const std::string& klass, const std::string& evidence, long n = 1) {
        report_.counts[klass] += n;
        figures_.counts[klass] += n;
        if (++shown_[klass] <= kEvidencePerClassAndSource)
            report_.evidence.push_back(klass + ": " + source_.name + " (" + source_.style + "): " + evidence);
    }

    /// The truth by key, in the source's order: the ids (as text) of
    /// /_truth/NAME for after-id, whose order is the ids'; the "key" of each
    /// record of /_truth/NAME?style=S for a keyed style, in its route's order.
    /// Keeps pointers into `records`, which must outlive this check.
    void truth(const json& records) {
        for (const auto& record : records) {
            const std::string key =
                keyed() ? record.at("key").get<std::string>() : std::to_string(record.at("id").get<long long>());
            truth_.emplace(key, TruthRecord{truth_.size(), &record.at("payload")});
        }
        report_.events_checked += static_cast<long>(truth_.size());
        figures_.events_checked += static_cast<long>(truth_.size());
    }

    /// Stored rows against the truth: lost, duplicated, order, payloads, hostile keys. In the order
    /// readers get them, (tx_id, seq): on Citus seq comes from the sequence of the node that wrote
    /// the row, and a shard moved to another worker continues in that worker's range.
    void events(pqxx::transaction_base& tx) {
        const auto rows = tx.exec_params(
            "SELECT e.event_id::text, e.event_key, e.seq, e.payload::text FROM tributary.events e"
            "  JOIN tributary.sources s ON s.id = e.source_id WHERE s.name = $1 ORDER BY e.tx_id, e.seq",
            source_.name);
        report_.events_stored += static_cast<long>(rows.size());
        figures_.events_stored += static_cast<long>(rows.size());
        std::unordered_set<std::string> stored;
        std::unordered_map<std::string, std::string> key_of_payload;
        std::size_t previous = 0;
        std::string previous_key;
        for (const auto& row : rows) {
            // A source keyed by id stores event_id; any other, event_key. The other column is NULL.
            const auto& column = row[keyed() ? 1 : 0];
            const std::string key = column.is_null() ? "(no key)" : column.c_str();
            const auto seq = std::to_string(row[2].as<long long>());
            const json payload = json::parse(row[3].c_str());
            if (!stored.insert(key).second) count("duplicated", "key " + key + " stored twice (seq " + seq + ")");
            // The same event under a second key (a shifted batch) is a duplicate too.
            const auto [it, fresh] = key_of_payload.emplace(payload.dump(), key);
            if (!fresh && it->second != key)
                count("duplicated", "payload of key " + it->second + " stored again as key " + key);
            if (!keyed() && !column.is_null()) max_id_ = std::max(max_id_, row[0].as<long long>());
            const auto truth_it = truth_.find(key);
            if (truth_it == truth_.end()) {
                count("stored_from_hostile_batch",
                      "key " + key + " is not in the ground truth; payload " + row[3].c_str());
                continue;
            }
            // Counts descents: one misplaced row counts once, not every row after it.
            if (!previous_key.empty() && truth_it->second.index < previous)
                count("out_of_order", "key " + key + " (seq " + seq + ") after key " + previous_key);
            previous = truth_it->second.index;
            previous_key = key;
            if (*truth_it->second.payload != payload)
                count("payload_mismatch", "key " + key + ": stored " + std::string(row[3].c_str()).substr(0, 200) +
                                              " vs truth " + truth_it->second.payload->dump().substr(0, 200));
        }
        long lost = 0;
        const std::string* first_lost = nullptr;
        std::size_t first_lost_index = 0;
        for (const auto& [key, record] : truth_) {
            if (stored.count(key)) continue;
            if (!lost++ || record.index < first_lost_index) {
                first_lost = &key;
                first_lost_index = record.index;
            }
        }
        if (lost)
            count("lost",
                  std::to_string(lost) + " of " + std::to_string(truth_.size()) +
                      " truth events not stored, the first key " + *first_lost,
                  lost);
        stored_ = static_cast<long long>(stored.size());
    }

    /// The cursor row must agree with what is stored: the count, and for a
    /// source keyed by id the last id. A keyed source's cursor is a position
    /// (a key, token, URL, watermark, page or offset), so only its count and
    /// its presence can be compared.
    void cursor(pqxx::transaction_base& tx) {
        const auto rows = tx.exec_params(
            "SELECT c.last_event_id, c.events_stored, c.position FROM tributary.cursors c"
            "  JOIN tributary.sources s ON s.id = c.source_id WHERE s.name = $1",
            source_.name);
        if (rows.size() != 1) return count("cursor_inconsistent", "no cursor row");
        const auto counted = rows[0][1].as<long long>();
        if (keyed()) {
            if (rows[0][2].is_null() || counted != stored_)
                count("cursor_inconsistent", "position " + std::string(rows[0][2].is_null() ? "NULL" : "set") +
                                                 " / events_stored " + std::to_string(counted) + " but " +
                                                 std::to_string(stored_) + " keys stored");
            return;
        }
        const auto last = rows[0][0].is_null() ? -1 : rows[0][0].as<long long>();
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
    bool keyed() const { return source_.style != "after-id"; }

    const CheckedSource& source_;
    CheckReport& report_;
    StyleFigures& figures_;
    std::map<std::string, int> shown_;
    std::unordered_map<std::string, TruthRecord> truth_;
    long long max_id_ = 0, stored_ = 0;
};

std::string truth_path(const CheckedSource& source) {
    return "/_truth/" + source.name + (source.style == "after-id" ? "" : "?style=" + source.style);
}

}  // namespace

CheckReport check(const CheckInput& input) {
    CheckReport report;
    for (const char* klass : {"lost", "duplicated", "out_of_order", "payload_mismatch", "stored_from_hostile_batch",
                              "cursor_inconsistent", "gate_violation"})
        report.counts[klass] = 0;
    pqxx::connection connection(input.db_url);
    for (const auto& checked : input.sources) {
        SourceCheck source(checked, report);
        const json truth = get_json(input.source_server_url, truth_path(checked));  // outlives `source`'s view of it
        source.truth(truth);
        // One snapshot for the rows and the cursor, so they can be compared.
        pqxx::transaction<pqxx::isolation_level::repeatable_read> tx(connection);
        source.events(tx);
        source.cursor(tx);
        tx.commit();
        source.gate(get_json(input.source_server_url, "/_requests?source=" + checked.name), input.min_gap);
    }
    return report;
}

void count_anomaly(CheckReport& report, const std::string& klass, const std::string& evidence, long n) {
    constexpr int kShownPerClass = 3;
    report.counts[klass] += n;
    long shown = 0;
    for (const auto& e : report.evidence) shown += e.rfind(klass + ":", 0) == 0;
    if (shown < kShownPerClass) report.evidence.push_back(klass + ": " + evidence);
}

}  // namespace tributary::crash
