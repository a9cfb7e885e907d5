#include "run_options.h"

#include <atomic>
#include <csignal>
#include <cstdlib>
#include <iostream>
#include <random>
#include <stdexcept>

namespace tributary::crash {

namespace {

const char* kUsage = R"(crash_suite: loaders under faults, then an independent check (issue 3)

  crash_suite [--duration 180] [--seed N] [--loaders 3] [--workers 2] [--proxy auto|on|off]
              [--fault-point-probability 0.001] [--drain-timeout 150] [--healthy 8] [--hostile 4]
              [--backlog 3000] [--rate 40] [--receivers 2] [--push-sources 2] [--push-lanes 4]
              [--push-rate 100] [--consumers 3] [--citus] [--log-dir DIR] [--keep-logs]

--duration is the fault phase in seconds; --seed replays a run's schedule (default: random, printed
first). --citus runs it all on a three-node Citus cluster (scripts/citus-tmp) instead of one
PostgreSQL. Exit code 0 when every anomaly count is zero, 1 otherwise, 2 on a harness error, 77 when
--citus is given and Citus is not installed.
)";

[[noreturn]] void usage_error(const std::string& message) {
    std::cerr << "crash_suite: " << message << "\n\n" << kUsage;
    std::exit(2);
}

volatile std::sig_atomic_t interrupt_received = 0;

extern "C" void on_interrupt(int) { interrupt_received = 1; }

}  // namespace

void catch_interrupts() {
    struct sigaction action {};
    action.sa_handler = on_interrupt;
    sigemptyset(&action.sa_mask);
    for (int s : {SIGINT, SIGTERM, SIGHUP}) sigaction(s, &action, nullptr);
}

bool interrupted() { return interrupt_received != 0; }

RunOptions parse_run_options(int argc, char** argv) {
    RunOptions o;
    for (int i = 1; i < argc; ++i) {
        const std::string flag = argv[i];
        if (flag == "--help" || flag == "-h") {
            std::cout << kUsage;
            std::exit(0);
        }
        if (flag == "--keep-logs" || flag == "--citus") {
            (flag == "--citus" ? o.citus : o.keep_logs) = true;
            continue;
        }
        if (i + 1 >= argc) usage_error(flag + " needs a value");
        const std::string value = argv[++i];
        try {
            if (flag == "--duration") o.duration_s = std::stoi(value);
            else if (flag == "--seed") o.seed = std::stoull(value), o.seed_given = true;
            else if (flag == "--loaders") o.loaders = std::stoi(value);
            else if (flag == "--workers") o.workers = std::stoi(value);
            else if (flag == "--proxy") o.proxy = value;
            else if (flag == "--fault-point-probability") o.fault_point_probability = std::stod(value);
            else if (flag == "--drain-timeout") o.drain_timeout_s = std::stoi(value);
            else if (flag == "--healthy") o.healthy = std::stoi(value);
            else if (flag == "--hostile") o.hostile = std::stoi(value);
            else if (flag == "--backlog") o.backlog = std::stoi(value);
            else if (flag == "--rate") o.rate = std::stod(value);
            else if (flag == "--receivers") o.receivers = std::stoi(value), o.receivers_given = true;
            else if (flag == "--push-sources") o.push_sources = std::stoi(value), o.push_sources_given = true;
            else if (flag == "--push-lanes") o.push_lanes = std::stoi(value);
            else if (flag == "--push-rate") o.push_rate = std::stod(value);
            else if (flag == "--consumers") o.consumers = std::stoi(value);
            else if (flag == "--log-dir") o.log_dir = value;
            else usage_error("unknown option " + flag);
        } catch (const std::logic_error&) {
            usage_error("bad value for " + flag + ": " + value);
        }
    }
    if (o.duration_s < 30) usage_error("--duration must be at least 30 (seconds)");
    if (o.loaders < 1 || o.workers < 1 || o.healthy < 1 || o.hostile < 0) usage_error("counts must be positive");
    if (o.receivers < 0 || (o.receivers > 0 && (o.push_sources < 1 || o.push_lanes < 1 || o.push_rate <= 0)))
        usage_error(
            "--receivers is 0 or more; with receivers, --push-sources, --push-lanes and --push-rate are positive");
    if (o.consumers < 0) usage_error("--consumers is 0 or more");
    if (o.proxy != "auto" && o.proxy != "on" && o.proxy != "off") usage_error("--proxy is auto, on or off");
    // On Citus, more pushed sources make it likelier that a receiver's group commit writes to
    // both workers, in two phases: the commits the cut after PREPARE aims at.
    if (o.citus && !o.push_sources_given) o.push_sources = 4;
    if (!o.seed_given) o.seed = std::random_device{}() % 1000000000ULL;
    return o;
}

}  // namespace tributary::crash
