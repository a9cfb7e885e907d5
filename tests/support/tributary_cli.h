#pragma once

#include <chrono>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/child_process.h"

namespace tributary::testing {

/// argv for the tributary binary under test against `db`.
std::vector<std::string> tributary_args(const std::string& db, std::vector<std::string> args);

/// Runs a tributary command to completion; fails the test when the exit code
/// is not `expected_code`.
Completed run_tributary(const std::string& db, std::vector<std::string> args, int expected_code = 0);

/// Waits until the child's stderr matches `pattern` (std::regex); returns the
/// first group, or the whole match. Throws with the log when it never does.
std::string wait_for_log(const ChildProcess& child, const std::string& pattern,
                         std::chrono::milliseconds timeout = std::chrono::seconds(20));

/// `tributary status --json`, by source name.
nlohmann::json status_by_name(const std::string& db);

}  // namespace tributary::testing
