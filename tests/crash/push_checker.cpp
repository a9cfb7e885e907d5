#include "push_checker.h"

#include <unordered_map>

#include <nlohmann/json.hpp>
#include <pqxx/pqxx>

namespace tributary::crash {

namespace {

using nlohmann::json;

constexpr int kEvidencePerClassAndSource = 3;

class PushedSourceCheck {
public:
    PushedSourceCheck(const std::string& name, const SentEvents& sent, CheckReport& report)
        : name_(name), sent_(sent), report_(report), figures_(report.by_style["pushed"]) {
        ++figures_.sources;
        report_.events_checked += static_cast<long>(sent.acknowledged.size());
        figures_.events_checked += static_cast<long>(sent.acknowledged.size());
    }

    void count(const std::string& klass, const std::string& evidence, long n = 1) {
        report_.counts[klass] += n;
        figures_.counts[klass] += n;
        if (++shown_[klass] <= kEvidencePerClassAndSource)
            report_.evidence.push_back(klass + ": " + name_ + " (pushed): " + evidence);
    }

    void events(pqxx::transaction_base& tx) {
        const auto rows = tx.exec_params(
            "SELECT e.event_key, e.seq, e.payload::text FROM tributary.events e"
            "  JOIN tributary.sources s ON s.id = e.source_id WHERE s.name = $1 ORDER BY e.tx_id, e.seq",
            name_);
        report_.events_stored += static_cast<long>(rows.size());
        figures_.events_stored += static_cast<long>(rows.size());
        std::unordered_map<std::string, std::string> key_of_payload;
        for (const auto& row : rows) {
            const std::string key = row[0].is_null() ? "(no key)" : row[0].c_str();
            const auto seq = row[1].as<long long>();
            const std::string text = row[2].c_str();
            if (!place_of_.emplace(key, place_of_.size()).second)
                count("duplicated", "key " + key + " stored twice (seq " + std::to_string(seq) + ")");
            const json payload = json::parse(text);
            const auto [it, fresh] = key_of_payload.emplace(payload.dump(), key);
            if (!fresh && it->second != key)
                count("duplicated", "payload of key " + it->second + " stored again as key " + key);
            const auto sent = sent_.payloads.find(key);
            if (sent == sent_.payloads.end()) {
                count("stored_never_sent", "key " + key + " (seq " + std::to_string(seq) +
                                               ") was never sent; payload " + text.substr(0, 200));
                continue;
            }
            if (json::parse(sent->second) != payload)
                count("payload_mismatch",
                      "key " + key + ": stored " + text.substr(0, 200) + " vs sent " + sent->second.substr(0, 200));
        }
    }

    void acknowledged() {
        long lost = 0;
        std::string example;
        for (const auto& key : sent_.acknowledged) {
            if (place_of_.count(key)) continue;
            if (!lost++) example = key;
        }
        if (lost)
            count("lost",
                  std::to_string(lost) + " of " + std::to_string(sent_.acknowledged.size()) +
                      " acknowledged keys not stored, e.g. " + example,
                  lost);
    }

    void order() {
        for (const auto& lane : sent_.lanes) {
            long long previous = -1;
            std::string previous_key;
            for (const auto& key : lane) {
                const auto it = place_of_.find(key);
                if (it == place_of_.end()) continue;  // sent at the end, never stored: lost if acknowledged
                // Counts descents: one misplaced row counts once.
                if (it->second < previous)
                    count("out_of_order", "key " + key + " (read " + std::to_string(it->second) +
                                              ". of the source's events) sent after key " + previous_key + " (read " +
                                              std::to_string(previous) + ".)");
                previous = it->second;
                previous_key = key;
            }
        }
    }

private:
    const std::string& name_;
    const SentEvents& sent_;
    CheckReport& report_;
    StyleFigures& figures_;
    std::map<std::string, int> shown_;
    /// Each stored key's place in the order readers get the source's events,
    /// (tx_id, seq): not seq alone, which on Citus comes from the sequence of
    /// the node that wrote the row, and a shard moved to another worker
    /// continues in that worker's range.
    std::unordered_map<std::string, long long> place_of_;
};

}  // namespace

CheckReport check_pushed(const std::string& db_url, const std::map<std::string, SentEvents>& sent) {
    CheckReport report;
    for (const char* klass : {"lost", "duplicated", "out_of_order", "payload_mismatch", "stored_never_sent"})
        report.counts[klass] = 0;
    pqxx::connection connection(db_url);
    for (const auto& [name, events] : sent) {
        PushedSourceCheck source(name, events, report);
        pqxx::read_transaction tx(connection);
        source.events(tx);
        tx.commit();
        source.acknowledged();
        source.order();
    }
    return report;
}

}  // namespace tributary::crash
