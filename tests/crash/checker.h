#pragma once

// The independent checker. It shares nothing with the loader: it reads
// tributary.events with its own SQL and the sources' ground truth and request
// logs over HTTP, and counts anomalies by class. Its only knowledge of
// tributary is the documented SQL surface (docs/sql-api.md, "Tables").

#include <chrono>
#include <map>
#include <string>
#include <vector>

namespace tributary::crash {

/// A source and how it is read: "after-id" (stored by tributary.events.event_id,
/// truth from /_truth/NAME) or another paging style (stored by event_key,
/// truth from /_truth/NAME?style=STYLE, each record's "key" and "payload").
struct CheckedSource {
    std::string name;
    std::string style;
};

struct CheckInput {
    std::string db_url;
    std::string source_server_url;
    std::vector<CheckedSource> sources;
    /// Two requests to one source must arrive at least this far apart.
    std::chrono::milliseconds min_gap{200};
};

/// One style's share of a check: its sources, records and anomalies.
struct StyleFigures {
    int sources = 0;
    long events_checked = 0;
    long events_stored = 0;
    std::map<std::string, long> counts;  ///< the anomaly classes seen, by class
};

struct CheckReport {
    long events_checked = 0;  ///< events in the ground truth, each compared
    long events_stored = 0;
    long requests_checked = 0;
    /// lost, duplicated, out_of_order, payload_mismatch,
    /// stored_from_hostile_batch, cursor_inconsistent, gate_violation.
    std::map<std::string, long> counts;
    std::vector<std::string> evidence;
    double min_gap_ms = 1e18;  ///< the smallest gap seen between two requests to a source
    std::map<std::string, StyleFigures> by_style;
};

CheckReport check(const CheckInput& input);

/// Adds `n` to the anomaly class `klass` of `report`, and `evidence` to its evidence while the
/// class shows fewer than three lines there (the checks after the run share this).
void count_anomaly(CheckReport& report, const std::string& klass, const std::string& evidence, long n = 1);

}  // namespace tributary::crash
