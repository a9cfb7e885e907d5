#pragma once

#include <functional>
#include <optional>
#include <string>

namespace tributary::maintenance {

/// Where a leaving partition is sent before it is dropped: `/bin/sh -c
/// COMMAND` reading the partition on its stdin, with TRIBUTARY_PARTITION,
/// TRIBUTARY_FROM_TX, TRIBUTARY_TO_TX and TRIBUTARY_FORMAT set (and the
/// database's URL and password variables unset: the command gets the data,
/// never our credentials).
struct ArchiveSettings {
    std::string command;  ///< empty: no archive command; partitions to archive stay
    std::string format = "csv";
};

struct ArchiveTarget {
    std::string partition;
    std::string from_tx;
    std::string to_tx;
};

/// Runs the archive command once for one partition. `produce` writes the
/// partition through the sink it is given (the sink returns false once the
/// command stopped reading). Returns nothing when the command read it all
/// and exited 0, else why not (exit status and the first line of its
/// stderr, bounded). A command that exits early is a failure, never a
/// crash (SIGPIPE is ignored by the process: main.cpp).
std::optional<std::string> run_archive_command(
    const ArchiveSettings& settings, const ArchiveTarget& target,
    const std::function<void(const std::function<bool(const char*, std::size_t)>&)>& produce);

}  // namespace tributary::maintenance
