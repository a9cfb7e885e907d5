#pragma once

// What a crash run counts, shared by every part of the harness: faults
// injected by kind, things observed (loader exits by class, ...), and
// anomalies by class with the evidence for each. Thread-safe: the scheduler,
// the supervisor and the monitor report from their own threads.

#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace tributary::crash {

/// Seconds since the run started, for log lines and evidence.
double elapsed_s();

/// One harness log line on stdout, stamped with elapsed_s().
void say(const std::string& line);

/// Every anomaly class the final table shows, in order; all must be zero.
const std::vector<std::string>& anomaly_classes();

class Tally {
public:
    void fault(const std::string& kind, long n = 1);
    void observe(const std::string& what, long n = 1);
    /// Counts `n` anomalies of `klass` (one of anomaly_classes()) and prints
    /// the evidence at once, so that it sits next to the log lines around it.
    void anomaly(const std::string& klass, const std::string& evidence, long n = 1);

    /// Something that can interrupt a loader between its request and its
    /// bookkeeping happened now (a kill, a pause, a database outage).
    void disrupted();
    double last_disruption_s() const;

    std::map<std::string, long> faults() const;
    std::map<std::string, long> observed() const;
    std::map<std::string, long> anomalies() const;
    std::vector<std::string> evidence() const;
    long total_anomalies() const;

private:
    mutable std::mutex mutex_;
    std::map<std::string, long> faults_, observed_, anomalies_;
    std::vector<std::string> evidence_;
    double last_disruption_s_ = -1e9;
};

/// The final table: faults by kind, observations, events checked, every
/// anomaly count (zeros included), and the first pieces of evidence.
void print_final_table(const Tally& tally, long events_checked, const std::vector<std::string>& figures);

}  // namespace tributary::crash
