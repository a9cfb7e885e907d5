#include "supervisor.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <csignal>
#include <cstdint>
#include <fstream>
#include <regex>
#include <sstream>

#include "cluster.h"
#include "report.h"

namespace tributary::crash {

const char* const kIncarnationVariable = "CRASH_INCARNATION";

namespace {

using Clock = std::chrono::steady_clock;

/// Printed by tributary's main when the database cannot be reached.
constexpr const char* kDatabaseUnreachable = "check --db / TRIBUTARY_DATABASE_URL and that PostgreSQL is running";
/// A worker thread that ended on an error leaves its process running with
/// fewer workers: no exit shows it, only this line.
constexpr const char* kWorkerDied = "stopped on an error";
/// The loader's catch-all for a source's turn: a bug, even if it recovers.
constexpr const char* kUnexpectedError = "unexpected error";

/// Whether something listens on 127.0.0.1:port (a receiver that is up).
bool accepts_connections(int port) {
    const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return false;
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(static_cast<std::uint16_t>(port));
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    const bool ok = connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) == 0;
    close(fd);
    return ok;
}

std::string describe_exit(int code) {
    if (code > 128) return "signal " + std::to_string(code - 128);
    return "exit " + std::to_string(code);
}

}  // namespace

Supervisor::Supervisor(SupervisorConfig config, std::vector<ProcessSpec> processes, Tally& tally,
                       const Cluster& cluster)
    : config_(std::move(config)), tally_(tally), cluster_(cluster) {
    for (auto& spec : processes) {
        Slot slot;
        slot.spec = std::move(spec);
        slots_.push_back(std::move(slot));
    }
    {
        std::lock_guard<std::mutex> guard(mutex_);
        for (auto& slot : slots_) start(slot);
    }
    watcher_ = std::thread([this] { watch(); });
}

Supervisor::~Supervisor() {
    {
        std::lock_guard<std::mutex> guard(mutex_);
        quitting_ = true;
        final_ = true;
    }
    changed_.notify_all();
    watcher_.join();
    // Whatever still runs (a run that ended on an exception) dies with its ChildProcess.
    for (auto& slot : slots_) {
        if (slot.process) slot.process->signal(SIGCONT);
    }
}

void Supervisor::start(Slot& slot) {
    ++slot.incarnation;
    std::vector<std::string> env = config_.env;
    env.push_back(std::string(kIncarnationVariable) + "=" + std::to_string(slot.incarnation));
    if (!config_.fault_points.empty()) {
        env.push_back("TRIBUTARY_FAULT_POINTS=" + config_.fault_points);
        env.push_back("TRIBUTARY_FAULT_SEED=" +
                      std::to_string(config_.seed * 1000 + static_cast<unsigned long long>(slot.incarnation)));
    }
    std::vector<std::string> argv{config_.binary, "--db", slot.spec.db_url};
    argv.insert(argv.end(), slot.spec.args.begin(), slot.spec.args.end());
    slot.process = spawn(argv, env);
    slot.ready = false;
    slot.paused = false;
    slot.killed = false;
    slot.hung_reported = false;
    slot.sigterm_at.reset();
    slot.restart_at.reset();
    say("started " + slot.spec.name + " #" + std::to_string(slot.incarnation) + " (pid " +
        std::to_string(slot.process->pid()) + (slot.spec.via_proxy ? ", through the proxy)" : ", direct)"));
}

void Supervisor::check_ready(Slot& slot) {
    if (slot.ready || !slot.process) return;
    slot.ready = slot.spec.ready_port ? accepts_connections(slot.spec.ready_port)
                                      : slot.process->err().find(config_.ready_line) != std::string::npos;
}

void Supervisor::watch() {
    std::unique_lock<std::mutex> lock(mutex_);
    while (!quitting_) {
        const auto now = Clock::now();
        for (auto& slot : slots_) {
            if (slot.process) {
                if (const auto code = slot.process->wait_for(std::chrono::milliseconds(0))) {
                    on_exit(slot, *code);
                    continue;
                }
                check_ready(slot);
                if (slot.sigterm_at && !slot.hung_reported && now - *slot.sigterm_at > config_.graceful_limit) {
                    slot.hung_reported = true;
                    tally_.anomaly("graceful_stop_hung", slot.spec.name + " pid " +
                                                             std::to_string(slot.process->pid()) + " still running " +
                                                             std::to_string(config_.graceful_limit.count()) +
                                                             " s after SIGTERM; killing it; log: " + config_.log_dir +
                                                             "/" + slot.spec.name + ".log");
                    slot.killed = true;
                    slot.process->signal(SIGKILL);
                }
            } else if (slot.restart_at && !final_ && now >= *slot.restart_at) {
                try {
                    start(slot);
                } catch (const std::exception& e) {
                    // Cron would try again next minute; we try again shortly.
                    say(std::string("could not start ") + slot.spec.name + ", trying again: " + e.what());
                    slot.restart_at = now + config_.restart_delay;
                }
            }
        }
        changed_.notify_all();
        changed_.wait_for(lock, std::chrono::milliseconds(50));
    }
}

void Supervisor::on_exit(Slot& slot, int code) {
    const std::string err = slot.process->err();
    tally_.disrupted();
    const std::string verdict = classify(slot, code, err);
    scan_log(slot, err);
    append_log(slot, code, verdict, err);
    say(slot.spec.name + " #" + std::to_string(slot.incarnation) + " (pid " + std::to_string(slot.process->pid()) +
        ") ended: " + describe_exit(code) + ", " + verdict);
    slot.process.reset();
    if (!final_) slot.restart_at = Clock::now() + config_.restart_delay;
}

std::string Supervisor::classify(const Slot& slot, int code, const std::string& err) {
    const std::string who = slot.spec.name + " #" + std::to_string(slot.incarnation);
    std::string verdict;
    if (code == 128 + SIGKILL && slot.killed) {
        verdict = "killed by the harness";
    } else if (code == 128 + SIGKILL && err.find("fault point ") != std::string::npos) {
        static const std::regex kFaultPoint(R"(fault point (\w+): SIGKILL)");
        std::smatch m;
        const std::string name = std::regex_search(err, m, kFaultPoint) ? m[1].str() : "unknown";
        tally_.fault("fault point " + name);
        verdict = "fault point " + name + " fired";
    } else if (code == 0 && slot.sigterm_at) {
        const double took = std::chrono::duration<double>(Clock::now() - *slot.sigterm_at).count();
        if (took > max_graceful_s_) max_graceful_s_ = took;
        verdict = "graceful stop after SIGTERM";
    } else if (code == 1 && err.find(kDatabaseUnreachable) != std::string::npos && !slot.ready &&
               cluster_.disturbed_recently()) {
        verdict = "could not reach the database at start (the harness had it down)";
    } else {
        verdict = "UNEXPECTED";
        tally_.anomaly("unexpected_exit", who + " pid " + std::to_string(slot.process->pid()) + " " +
                                              describe_exit(code) + (slot.sigterm_at ? " after SIGTERM" : "") +
                                              "; last lines:\n" + tail_lines(err, 8));
    }
    tally_.observe(config_.role + " exit: " + verdict);
    return verdict;
}

void Supervisor::scan_log(const Slot& slot, const std::string& err) {
    const std::string who = slot.spec.name + " #" + std::to_string(slot.incarnation);
    std::istringstream lines(err);
    for (std::string line; std::getline(lines, line);) {
        if (line.find(kWorkerDied) != std::string::npos) {
            tally_.anomaly("unexpected_exit", who + ": a worker thread ended while the process ran on: " + line);
        } else if (line.find(kUnexpectedError) != std::string::npos) {
            tally_.observe(config_.role + " log: unexpected error (skipped a pass)");
            say("note: " + who + ": " + line);
        }
    }
}

void Supervisor::append_log(const Slot& slot, int code, const std::string& verdict, const std::string& err) const {
    std::ofstream out(config_.log_dir + "/" + slot.spec.name + ".log", std::ios::app);
    out << "==== " << slot.spec.name << " #" << slot.incarnation << " pid " << slot.process->pid() << " ended at "
        << elapsed_s() << " s: " << describe_exit(code) << ", " << verdict << " ====\n"
        << err;
}

bool Supervisor::kill9(int i) {
    std::lock_guard<std::mutex> guard(mutex_);
    auto& slot = slots_.at(i);
    if (!slot.process || slot.killed) return false;
    slot.killed = true;
    slot.process->signal(SIGKILL);
    tally_.disrupted();
    return true;
}

bool Supervisor::pause(int i) {
    std::lock_guard<std::mutex> guard(mutex_);
    auto& slot = slots_.at(i);
    if (!slot.process || !slot.ready || slot.paused || slot.killed || slot.sigterm_at) return false;
    slot.paused = true;
    slot.process->signal(SIGSTOP);
    tally_.disrupted();
    return true;
}

bool Supervisor::resume(int i) {
    std::lock_guard<std::mutex> guard(mutex_);
    auto& slot = slots_.at(i);
    if (!slot.process || !slot.paused) return false;
    slot.paused = false;
    slot.process->signal(SIGCONT);
    tally_.disrupted();
    return true;
}

bool Supervisor::terminate(int i) {
    std::lock_guard<std::mutex> guard(mutex_);
    auto& slot = slots_.at(i);
    if (!slot.process || !slot.ready || slot.paused || slot.killed || slot.sigterm_at) return false;
    slot.sigterm_at = Clock::now();
    slot.process->signal(SIGTERM);
    tally_.disrupted();
    return true;
}

std::optional<int> Supervisor::paused_count() const {
    std::lock_guard<std::mutex> guard(mutex_);
    int n = 0;
    for (const auto& slot : slots_) n += slot.paused ? 1 : 0;
    return n;
}

std::optional<pid_t> Supervisor::pid_if_ready(int i) const {
    std::lock_guard<std::mutex> guard(mutex_);
    const auto& slot = slots_.at(i);
    if (!slot.process || !slot.ready) return std::nullopt;
    return slot.process->pid();
}

bool Supervisor::all_gone() const {
    for (const auto& slot : slots_)
        if (slot.process) return false;
    return true;
}

void Supervisor::stop_all() {
    std::unique_lock<std::mutex> lock(mutex_);
    final_ = true;
    for (auto& slot : slots_) {
        if (slot.process && slot.paused) {
            slot.paused = false;
            slot.process->signal(SIGCONT);
        }
    }
    // A loader still starting up has no signal handling yet; SIGTERM would
    // kill it outright. Give it a moment to get there (the database is up).
    const auto ready_by = Clock::now() + std::chrono::seconds(20);
    changed_.wait_until(lock, ready_by, [this] {
        for (auto& slot : slots_) {
            check_ready(slot);
            if (slot.process && !slot.ready) return false;
        }
        return true;
    });
    for (auto& slot : slots_) {
        if (slot.process && !slot.sigterm_at && !slot.killed) {
            slot.sigterm_at = Clock::now();
            slot.process->signal(SIGTERM);
        }
    }
    changed_.wait(lock, [this] { return all_gone(); });
}

double Supervisor::max_graceful_stop_s() const {
    std::lock_guard<std::mutex> guard(mutex_);
    return max_graceful_s_;
}

}  // namespace tributary::crash
