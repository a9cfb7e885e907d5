#pragma once

// Starting programs from several harness threads at once. The shared
// ChildProcess helper (tests/support) names its output files with a plain
// counter, so every start goes through one lock here.

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "support/child_process.h"

namespace tributary::crash {

using testing::ChildProcess;
using testing::Completed;

std::unique_ptr<ChildProcess> spawn(const std::vector<std::string>& argv, const std::vector<std::string>& env = {});

/// Runs a program to completion; throws when it takes longer than `timeout`.
Completed run_to_end(const std::vector<std::string>& argv, std::chrono::milliseconds timeout);

/// The last `lines` lines of `text`, for evidence.
std::string tail_lines(const std::string& text, int lines);

}  // namespace tributary::crash
