#pragma once

// The crash suite's command line. `--duration` is the fault phase in
// seconds; everything else has a default sized for CI on a small machine.

#include <string>

namespace tributary::crash {

struct RunOptions {
    int duration_s = 180;
    unsigned long long seed = 0;
    bool seed_given = false;
    int loaders = 3;
    int workers = 2;
    std::string proxy = "auto";  ///< auto (when built), on, off
    double fault_point_probability = 0.001;
    int drain_timeout_s = 150;
    int healthy = 8;
    int hostile = 4;
    int backlog = 3000;
    double rate = 40;
    /// Pushed sources (issue 15): receivers, sources, sender lanes and requests/s.
    /// --receivers 0 leaves them out; by default they run when `receive` is built.
    int receivers = 2;
    bool receivers_given = false;
    int push_sources = 2;  ///< 4 by default with --citus
    bool push_sources_given = false;
    int push_lanes = 4;
    double push_rate = 100;
    /// Consumers of a group of 4 lanes reading the log during the faults (issue 28); 0 leaves them out.
    int consumers = 3;
    /// The whole run on a three-node Citus cluster (scripts/citus-tmp) instead of one PostgreSQL.
    bool citus = false;
    std::string log_dir;  ///< default: a new directory under /tmp
    bool keep_logs = false;
};

/// Parses argv; prints usage and exits 2 on a bad option, 0 on --help.
RunOptions parse_run_options(int argc, char** argv);

/// SIGINT/SIGTERM/SIGHUP end the fault phase and the drain early, so that the
/// run still stops its loaders and its cluster (SIGKILL leaves them behind).
void catch_interrupts();
bool interrupted();

}  // namespace tributary::crash
