#pragma once

// The check of what the live consumers (live_consumers.h) were handed while
// the log was written under faults, read from their records after every
// process stopped, against tributary.events: every event handed to some
// consumer, each source's events first handed in the log's order (a group of
// lanes keeps a source in one lane, read in (tx_id, seq) order), nothing
// dead-lettered. Events handed again after a consumer died before its ack
// are expected: counted, not anomalies.

#include <string>
#include <vector>

#include "checker.h"

namespace tributary::crash {

struct LiveGroupCheck {
    /// live_group_skipped, live_group_out_of_order, live_group_dead_letters,
    /// live_group_bad_record; events_checked: the events in the log;
    /// events_stored: the distinct events handed.
    CheckReport report;
    std::vector<std::string> figures;
};

/// `record_dir`: the consumers' records (NAME.INCARNATION.ndjson).
LiveGroupCheck check_live_group(const std::string& db_url, const std::string& record_dir);

}  // namespace tributary::crash
