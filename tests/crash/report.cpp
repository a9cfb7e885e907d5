#include "report.h"

#include <chrono>
#include <cstdio>
#include <iostream>

namespace tributary::crash {

namespace {

const auto kStart = std::chrono::steady_clock::now();
std::mutex output_mutex;
constexpr std::size_t kEvidencePerRun = 60;  // enough to debug, not a flood

}  // namespace

double elapsed_s() { return std::chrono::duration<double>(std::chrono::steady_clock::now() - kStart).count(); }

void say(const std::string& line) {
    char stamp[32];
    std::snprintf(stamp, sizeof stamp, "[%7.1fs] ", elapsed_s());
    std::lock_guard<std::mutex> guard(output_mutex);
    std::cout << stamp << line << std::endl;
}

const std::vector<std::string>& anomaly_classes() {
    static const std::vector<std::string> kClasses{
        "lost",
        "duplicated",
        "out_of_order",
        "payload_mismatch",
        "stored_from_hostile_batch",
        "cursor_inconsistent",
        "gate_violation",
        "unexpected_exit",
        "graceful_stop_hung",
        "drain_timeout",
        "hostile_without_cause",
        "push_refused",
        "stored_never_sent",
        "default_partition_events",
        "partition_catalogue",
        "partition_sealed_early",
        "few_partitions",
        "maintainer_lease",
        "herald_lease",
        "group_lost",
        "group_duplicated",
        "group_out_of_order",
        "live_group_skipped",
        "live_group_out_of_order",
        "live_group_dead_letters",
        "live_group_bad_record",
        "shard_move_unfinished",
    };
    return kClasses;
}

void Tally::fault(const std::string& kind, long n) {
    std::lock_guard<std::mutex> guard(mutex_);
    faults_[kind] += n;
}

void Tally::observe(const std::string& what, long n) {
    std::lock_guard<std::mutex> guard(mutex_);
    observed_[what] += n;
}

void Tally::anomaly(const std::string& klass, const std::string& evidence, long n) {
    say("ANOMALY " + klass + ": " + evidence);
    std::lock_guard<std::mutex> guard(mutex_);
    anomalies_[klass] += n;
    if (evidence_.size() < kEvidencePerRun) evidence_.push_back(klass + ": " + evidence);
}

void Tally::disrupted() {
    std::lock_guard<std::mutex> guard(mutex_);
    last_disruption_s_ = elapsed_s();
}

double Tally::last_disruption_s() const {
    std::lock_guard<std::mutex> guard(mutex_);
    return last_disruption_s_;
}

std::map<std::string, long> Tally::faults() const {
    std::lock_guard<std::mutex> guard(mutex_);
    return faults_;
}

std::map<std::string, long> Tally::observed() const {
    std::lock_guard<std::mutex> guard(mutex_);
    return observed_;
}

std::map<std::string, long> Tally::anomalies() const {
    std::lock_guard<std::mutex> guard(mutex_);
    return anomalies_;
}

std::vector<std::string> Tally::evidence() const {
    std::lock_guard<std::mutex> guard(mutex_);
    return evidence_;
}

long Tally::total_anomalies() const {
    std::lock_guard<std::mutex> guard(mutex_);
    long total = 0;
    for (const auto& [klass, n] : anomalies_) total += n;
    return total;
}

void print_final_table(const Tally& tally, long events_checked, const std::vector<std::string>& figures) {
    std::lock_guard<std::mutex> guard(output_mutex);
    auto& out = std::cout;
    const auto row = [&](const std::string& name, long n) {
        char line[128];
        std::snprintf(line, sizeof line, "  %-52s %8ld\n", name.c_str(), n);
        out << line;
    };
    out << "\n==== crash suite: results ====\n";
    out << "faults injected, by kind:\n";
    long faults = 0;
    for (const auto& [kind, n] : tally.faults()) {
        row(kind, n);
        faults += n;
    }
    row("TOTAL", faults);
    out << "observed:\n";
    for (const auto& [what, n] : tally.observed()) row(what, n);
    out << "figures:\n";
    for (const auto& figure : figures) out << "  " << figure << "\n";
    out << "events checked: " << events_checked << "\n";
    out << "anomalies (all must be 0):\n";
    const auto anomalies = tally.anomalies();
    for (const auto& klass : anomaly_classes()) {
        const auto it = anomalies.find(klass);
        row(klass, it == anomalies.end() ? 0 : it->second);
    }
    const auto evidence = tally.evidence();
    if (!evidence.empty()) {
        out << "evidence (first " << evidence.size() << "):\n";
        for (const auto& e : evidence) out << "  " << e << "\n";
    }
    out << (tally.total_anomalies() == 0 ? "RESULT: PASS\n" : "RESULT: FAIL\n");
    out.flush();
}

}  // namespace tributary::crash
