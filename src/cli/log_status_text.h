#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/log_status.h"

namespace tributary::cli {

/// An open transaction older than this holds back consumers and vacuum long
/// enough that a person should look (status warns; README "Long transactions").
constexpr double kLongTransactionSeconds = 300;

/// The log's lines of `status` and `tributary log`: size and partitions,
/// oldest event, partitions ahead, next drop, maintainer.
std::vector<std::string> log_summary_lines(const LogStatus& s);

/// What needs a person, one line each (without the "WARNING: " prefix):
/// retention held back by a group, events in the default partition, an
/// archive failing, a long open transaction, no maintainer.
std::vector<std::string> log_warnings(const LogStatus& s);

nlohmann::ordered_json log_status_json(const LogStatus& s);

void print_partitions_table(const std::vector<PartitionStatus>& rows);
nlohmann::ordered_json partitions_json(const std::vector<PartitionStatus>& rows);

/// 1536 -> "1.5 KiB" (as pg_size_pretty, binary units).
std::string shown_bytes(std::int64_t bytes);
/// 90 -> "1m30s", 7200 -> "2h", 200000 -> "2d7h".
std::string shown_seconds(double seconds);

}  // namespace tributary::cli
