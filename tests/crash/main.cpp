// crash_suite: the crash & fault suite of issue 3. Loaders run under faults
// (kill -9, fault points, SIGSTOP zombies, killed sessions, PostgreSQL
// restarts, a faulty TCP proxy, hostile sources) against sources with known
// ground truth, and webhook receivers (issue 15) under kill -9 and the same
// database faults take events from a sender that retries until acknowledged;
// meanwhile consumers of a group of lanes (issue 28) read the log as it is
// written, under kill -9 and SIGSTOP of their own; then the faults heal, the
// loaders, the sender and the consumers drain, everything stops gracefully,
// and an independent checker counts anomalies. Exit 0 only when
// all are zero.

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <iostream>
#include <memory>

#include "binaries.h"
#include "checker.h"
#include "cluster.h"
#include "drain.h"
#include "group_read.h"
#include "hostile.h"
#include "lease_watch.h"
#include "live_consumers.h"
#include "live_group_check.h"
#include "monitor.h"
#include "partitioned_log.h"
#include "processes.h"
#include "proxy.h"
#include "push_checker.h"
#include "pushed_sources.h"
#include "receivers.h"
#include "report.h"
#include "run_options.h"
#include "scheduler.h"
#include "sender.h"
#include "sources.h"
#include "supervisor.h"

using namespace tributary::crash;

namespace {

/// The hostile-capable sources' request timeout: long enough for a real
/// batch, short so that slow-body and huge give up soon.
constexpr std::chrono::milliseconds kHostileTimeout{3000};

/// The maintainer's lease and pass interval of every loader: short, so that
/// kills and SIGSTOPs often hit the maintainer and hand its lease over.
constexpr std::chrono::seconds kMaintainerLease{3};
/// The herald's lease (`--herald-lease`'s default), which every loader and receiver competes for.
constexpr std::chrono::seconds kHeraldLease{2};
const std::vector<std::string> kMaintainerFlags{"--maintainer-lease", std::to_string(kMaintainerLease.count()) + "s",
                                                "--maintainer-interval", "1s"};

std::string fixed(double value, int decimals = 1) {
    char text[64];
    std::snprintf(text, sizeof text, "%.*f", decimals, value);
    return text;
}

void run_tributary(const Binaries& bin, const Cluster& cluster, const std::vector<std::string>& args) {
    std::vector<std::string> argv{bin.tributary, "--db", cluster.url()};
    argv.insert(argv.end(), args.begin(), args.end());
    const auto done = run_to_end(argv, std::chrono::minutes(1));
    if (done.code != 0) throw std::runtime_error("tributary " + args.at(0) + " failed: " + done.err);
}

SourcePlan source_plan(const RunOptions& o) {
    SourcePlan plan;
    plan.healthy = o.healthy;
    plan.hostile_capable = o.hostile;
    plan.backlog = o.backlog;
    plan.rate = o.rate;
    // Production ends shortly before the faults do, so the drain has a fixed target.
    plan.max_events = o.backlog + static_cast<long>(o.rate * (o.duration_s - 15));
    // Each open connection holds a server thread: 4 per loader worker, and the harness's.
    plan.threads = std::max(64, 4 * o.loaders * o.workers + 16);
    return plan;
}

void register_sources(const Binaries& bin, const Cluster& cluster, const Sources& sources) {
    std::string styles;
    for (const auto& name : sources.healthy()) {
        std::vector<std::string> args{"source", "add", name, "--url", sources.url(name)};
        const auto& flags = sources.style(name).flags;
        args.insert(args.end(), flags.begin(), flags.end());
        run_tributary(bin, cluster, args);
        styles += (styles.empty() ? "" : ", ") + sources.style(name).name;
    }
    for (const auto& name : sources.hostile_capable())
        run_tributary(bin, cluster,
                      {"source", "add", name, "--url", sources.url(name), "--timeout-ms",
                       std::to_string(kHostileTimeout.count())});
    say(std::to_string(sources.healthy().size()) + " healthy (" + styles + ") + " +
        std::to_string(sources.hostile_capable().size()) + " hostile-capable (after-id) sources at " +
        sources.base_url() + ", " + std::to_string(sources.plan().max_events) + " events each");
}

/// Every source with the style the checker reads its truth and stored rows by.
std::vector<CheckedSource> checked_sources(const Sources& sources) {
    std::vector<CheckedSource> out;
    for (const auto& name : sources.all()) out.push_back({name, sources.style(name).name});
    return out;
}

std::unique_ptr<Proxy> start_proxy(const RunOptions& o, const Binaries& bin, const Cluster& cluster) {
    if (o.proxy == "on" && bin.proxy.empty())
        throw std::runtime_error("--proxy on, but tributary-fault-proxy is not built");
    if (o.proxy == "off" || bin.proxy.empty()) {
        say("no fault proxy: every loader connects directly");
        return nullptr;
    }
    return std::make_unique<Proxy>(bin.proxy, cluster.port());
}

std::vector<ProcessSpec> loader_specs(const RunOptions& o, const Cluster& cluster, const Proxy* proxy) {
    std::vector<ProcessSpec> loaders;
    for (int i = 0; i < o.loaders; ++i) {
        ProcessSpec spec;
        spec.name = "crash-loader-" + std::to_string(i);
        spec.via_proxy = proxy && i % 3 != 0;  // loader 0, 3, ... direct; the others through the proxy
        spec.db_url = cluster.url(spec.name, spec.via_proxy ? proxy->listen_port() : 0);
        spec.args = {"run", "--workers", std::to_string(o.workers)};
        spec.args.insert(spec.args.end(), kMaintainerFlags.begin(), kMaintainerFlags.end());
        loaders.push_back(std::move(spec));
    }
    return loaders;
}

SupervisorConfig supervisor_config(const RunOptions& o, const Binaries& bin, const std::string& log_dir) {
    SupervisorConfig config;
    config.binary = bin.crashable;
    config.ready_line = " worker(s)";  // printed by `run` once its signal handling is in place
    const std::string p = std::to_string(o.fault_point_probability);
    config.fault_points = "after_fetch:" + p + ",mid_insert:" + p + ",during_commit:" + p + ",after_commit:" + p;
    config.seed = o.seed;
    config.log_dir = log_dir;
    return config;
}

/// Whether this run has pushed sources: by default when `tributary receive`
/// is built; --receivers N (N > 0) insists on it.
bool pushing(const RunOptions& o, const Binaries& bin) {
    if (o.receivers == 0) return false;
    if (receive_command_exists(bin.tributary)) return true;
    if (o.receivers_given) throw std::runtime_error("--receivers given, but this tributary has no `receive` command");
    say("NOTE: this tributary has no `receive` command: no receivers and no pushed sources in this run");
    return false;
}

void register_pushed(const Binaries& bin, const Cluster& cluster, const std::vector<PushedSourceSpec>& pushed) {
    if (pushed.empty()) return;
    std::string names;
    for (const auto& source : pushed) {
        run_tributary(bin, cluster, source_add_args(source));
        names += (names.empty() ? "" : ", ") + source.name + " (" + source.auth + ")";
    }
    say(std::to_string(pushed.size()) + " pushed sources: " + names);
}

SupervisorConfig receiver_config(const Binaries& bin, const std::string& log_dir,
                                 const std::vector<PushedSourceSpec>& pushed) {
    SupervisorConfig config;
    config.binary = bin.tributary;  // no fault points: kill -9 and the database's faults are the receivers'
    config.role = "receiver";
    config.env = receiver_environment(pushed);
    config.log_dir = log_dir;
    return config;
}

/// A report's anomalies into the tally, with their evidence.
void record_anomalies(const CheckReport& report, Tally& tally) {
    for (const auto& [klass, n] : report.counts) {
        if (!n) continue;
        for (const auto& e : report.evidence)
            if (e.rfind(klass + ":", 0) == 0) tally.anomaly(klass, e.substr(klass.size() + 2), 0);
        tally.anomaly(klass, std::to_string(n) + " in all (evidence above)", n);
    }
}

/// One line per style: its sources, records, stored, lost and duplicated.
void record_styles(const CheckReport& report, std::vector<std::string>& figures) {
    for (const auto& [style, f] : report.by_style) {
        std::string anomalies;
        for (const auto& [klass, n] : f.counts) anomalies += ", " + std::to_string(n) + " " + klass;
        const auto lost = f.counts.find("lost"), duplicated = f.counts.find("duplicated");
        figures.push_back("style " + style + ": " + std::to_string(f.sources) + " source(s), " +
                          std::to_string(f.events_checked) + " in the truth, " + std::to_string(f.events_stored) +
                          " stored; lost " + std::to_string(lost == f.counts.end() ? 0 : lost->second) +
                          ", duplicated " + std::to_string(duplicated == f.counts.end() ? 0 : duplicated->second) +
                          (anomalies.empty() ? "" : " (all anomalies" + anomalies + ")"));
    }
}

/// The checker's counts into the tally (with their evidence) and its figures.
long record_check(const CheckReport& report, Tally& tally, std::vector<std::string>& figures) {
    record_anomalies(report, tally);
    figures.push_back("events: " + std::to_string(report.events_checked) + " in the ground truth, " +
                      std::to_string(report.events_stored) + " stored; " + std::to_string(report.requests_checked) +
                      " requests checked, smallest gap between two to one source " + fixed(report.min_gap_ms) + " ms");
    record_styles(report, figures);
    return report.events_checked;
}

/// The push checker's counts and figures; returns the acknowledged keys checked.
long record_push_check(const CheckReport& report, const Sender& sender, Tally& tally,
                       std::vector<std::string>& figures) {
    record_anomalies(report, tally);
    for (auto& f : sender.figures()) figures.push_back(std::move(f));
    figures.push_back("pushed: " + std::to_string(report.events_checked) + " keys acknowledged, " +
                      std::to_string(report.events_stored) + " stored (the rest sent, unacknowledged, then retried)");
    record_styles(report, figures);
    return report.events_checked;
}

/// The partitions the events ended up in, and one consumer group reading
/// them all.
void record_log_check(const std::string& db_url, const RunOptions& o, Tally& tally, std::vector<std::string>& figures) {
    // A partition spans 3 s of transaction ids, 1 000 at least: at the 160-250
    // ids/s a run uses, one fills every 4-6 s (11-14 in a 60 s run). One per
    // 10 s of faults is the floor. On Citus the fastest worker used 18-50
    // ids/s (each worker has half the turns; the groups' bookkeeping is the
    // coordinator's): 2 500-6 800 ids in a 120 s run here, and a slower CI
    // machine's run put its events in 3 partitions. One per 60 s, and 2 at
    // least: the log rolled over under the faults.
    const long min_partitions = o.citus ? std::max<long>(2, o.duration_s / 60) : o.duration_s / 10;
    const auto partitions = check_partitions(db_url, min_partitions, o.citus);
    record_anomalies(partitions.report, tally);
    for (const auto& f : partitions.figures) figures.push_back(f);
    const auto group = read_as_group(db_url, o.citus);
    record_anomalies(group, tally);
    figures.push_back("consumer group over the whole log: " + std::to_string(group.events_stored) + " handed of " +
                      std::to_string(group.events_checked) + " events in the log");
}

/// Which worker holds each pushed source (their receivers' group commits
/// touch both, in two phases, only when the sources are on both).
void say_placement(const Cluster& cluster, const std::vector<PushedSourceSpec>& pushed) {
    std::string placed;
    for (const auto& source : pushed) {
        const auto rows = cluster.query(
            "SELECT p.nodeport FROM tributary.sources s, pg_dist_shard_placement p WHERE s.name = '" + source.name +
            "' AND p.shardid = get_shard_id_for_distribution_column('tributary.events', s.id)");
        placed += (placed.empty() ? "" : ", ") + source.name + " on port " + (rows.empty() ? "?" : rows[0][0]);
    }
    if (!placed.empty()) say("pushed sources' workers: " + placed);
}

/// The servers' logs into the run's log directory.
void copy_server_logs(const Cluster& cluster, const std::string& log_dir) {
    for (const auto& [node, path] : cluster.server_logs()) {
        std::error_code ignored;
        std::filesystem::copy_file(path, log_dir + "/postgresql" + (node.empty() ? "" : "-" + node) + ".log", ignored);
    }
}

std::string make_log_dir(const RunOptions& o) {
    if (!o.log_dir.empty()) {
        std::filesystem::create_directories(o.log_dir);
        return o.log_dir;
    }
    std::string pattern = "/tmp/tributary-crash-logs." + std::to_string(o.seed) + ".XXXXXX";
    if (!mkdtemp(pattern.data())) throw std::runtime_error("cannot create a log directory under /tmp");
    return pattern;
}

int run(const RunOptions& o) {
    const std::string log_dir = make_log_dir(o);
    say("seed " + std::to_string(o.seed) + " (replay: crash_suite --duration " + std::to_string(o.duration_s) +
        " --seed " + std::to_string(o.seed) + "); logs in " + log_dir);
    Tally tally;
    std::vector<std::string> figures;
    long events_checked = 0;
    {
        const Binaries bin;
        Cluster cluster(o.citus ? TRIBUTARY_CITUS_TMP : TRIBUTARY_PG_TMP, o.citus);
        // A harness error leaves the servers' logs too, before the cluster goes with its directory.
        struct LogsOnError {
            const Cluster& cluster;
            const std::string& log_dir;
            ~LogsOnError() {
                if (std::uncaught_exceptions() > 0) copy_server_logs(cluster, log_dir);
            }
        } logs_on_error{cluster, log_dir};
        run_tributary(bin, cluster, {"migrate"});
        cut_log_small(cluster, LogShape{});
        Sources sources(source_plan(o));
        register_sources(bin, cluster, sources);
        const bool push = pushing(o, bin);
        const auto pushed = push ? pushed_sources(o.push_sources, o.seed) : std::vector<PushedSourceSpec>{};
        register_pushed(bin, cluster, pushed);
        if (o.citus) say_placement(cluster, pushed);
        if (o.consumers > 0) create_live_group(cluster);  // before any event: it is handed them all
        const auto proxy = start_proxy(o, bin, cluster);

        Supervisor supervisor(supervisor_config(o, bin, log_dir), loader_specs(o, cluster, proxy.get()), tally,
                              cluster);
        std::unique_ptr<Supervisor> receivers;
        std::unique_ptr<Sender> sender;  // after the receivers: it stops first
        if (push) {
            const auto specs = receiver_specs(o.receivers, cluster, proxy.get());
            receivers = std::make_unique<Supervisor>(receiver_config(bin, log_dir, pushed), specs, tally, cluster);
            SenderConfig sender_config;
            sender_config.sources = pushed;
            sender_config.receiver_ports = receiver_ports(specs);
            sender_config.lanes = o.push_lanes;
            sender_config.rate = o.push_rate;
            sender_config.seed = o.seed;
            sender = std::make_unique<Sender>(sender_config, tally);
        }
        const std::string record_dir = log_dir + "/live-consumers";
        std::unique_ptr<Supervisor> consumers;
        if (o.consumers > 0)
            consumers = std::make_unique<Supervisor>(live_consumer_config(bin.tributary, log_dir),
                                                     live_consumer_specs(o.consumers, cluster, proxy.get(), record_dir),
                                                     tally, cluster);
        LeaseWatch lease(cluster, tally, "maintainer");
        LeaseWatch herald_lease(cluster, tally, "herald");  // loaders, receivers and consumers compete for it
        HostileEpisodes hostile(sources, tally, supervisor, bin.tributary, cluster.url(), kHostileTimeout);
        Monitor monitor(sources, cluster, hostile);

        SchedulerConfig scheduler_config;
        scheduler_config.duration = std::chrono::seconds(o.duration_s);
        scheduler_config.seed = o.seed;
        scheduler_config.consumer_record_dir = record_dir;
        scheduler_config.tributary = bin.tributary;
        const double faults_began = elapsed_s();
        Scheduler(scheduler_config, supervisor, receivers.get(), consumers.get(), cluster, proxy.get(), hostile, tally)
            .run();
        const double faults_took = elapsed_s() - faults_began;
        if (sender) sender->stop_sending();

        double drain_took = drain(sources, cluster, tally, std::chrono::seconds(o.drain_timeout_s), bin.tributary);
        if (sender) {
            // It has been retrying all along; a request still unacknowledged now is stuck.
            const double began = elapsed_s();
            if (!sender->drain(std::chrono::seconds(60)))
                tally.anomaly("drain_timeout",
                              "the sender still had unacknowledged requests 60 s after the loaders' drain");
            say("sender drained in " + fixed(elapsed_s() - began) + " s more");
            drain_took += elapsed_s() - began;
        }
        if (consumers) {
            // The log is complete: the consumers read to its end, then stop
            // (before the loaders: they compete for the herald's lease too).
            drain_took += drain_live_group(cluster, tally, std::chrono::seconds(o.drain_timeout_s));
            say("stopping every consumer with SIGTERM");
            consumers->stop_all();
        }
        monitor.stop();
        say("stopping every loader with SIGTERM");
        supervisor.stop_all();
        if (receivers) {
            say("stopping every receiver with SIGTERM");
            receivers->stop_all();
        }
        lease.check_released(kMaintainerLease);
        herald_lease.check_released(kHeraldLease);

        say("checking");
        const double check_began = elapsed_s();
        events_checked = record_check(
            check({cluster.url("crash-checker"), sources.base_url(), checked_sources(sources)}), tally, figures);
        if (sender)
            events_checked +=
                record_push_check(check_pushed(cluster.url("crash-checker"), sender->sent()), *sender, tally, figures);
        record_log_check(cluster.url("crash-checker"), o, tally, figures);
        if (consumers) {
            const auto live = check_live_group(cluster.url("crash-checker"), record_dir);
            record_anomalies(live.report, tally);
            for (const auto& f : live.figures) figures.push_back(f);
        }
        for (auto& f : lease.figures()) figures.push_back(std::move(f));
        for (auto& f : herald_lease.figures()) figures.push_back(std::move(f));
        figures.insert(figures.begin(), "fault phase " + fixed(faults_took) + " s, drain " + fixed(drain_took) +
                                            " s, check " + fixed(elapsed_s() - check_began) + " s");
        for (auto& f : monitor.figures()) figures.push_back(std::move(f));
        figures.push_back("longest graceful stop after SIGTERM: " + fixed(supervisor.max_graceful_stop_s(), 2) + " s" +
                          (receivers ? ", receivers " + fixed(receivers->max_graceful_stop_s(), 2) + " s" : "") +
                          (consumers ? ", consumers " + fixed(consumers->max_graceful_stop_s(), 2) + " s" : ""));
        if (proxy) {
            try {
                figures.push_back("proxy: " + proxy->stats());
            } catch (const std::exception& e) {
                figures.push_back(std::string("proxy stats unavailable: ") + e.what());
            }
        }
        copy_server_logs(cluster, log_dir);
    }
    figures.push_back("whole run " + fixed(elapsed_s()) + " s, seed " + std::to_string(o.seed));
    print_final_table(tally, events_checked, figures);
    const bool pass = tally.total_anomalies() == 0;
    if (pass && !o.keep_logs && o.log_dir.empty()) std::filesystem::remove_all(log_dir);
    else std::cout << "logs kept in " << log_dir << "\n";
    return pass ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
    const RunOptions options = parse_run_options(argc, argv);
    std::cout << "crash suite seed " << options.seed << std::endl;
    // A write to a socket the other side closed must be an error, not our death.
    sigset_t pipe;
    sigemptyset(&pipe);
    sigaddset(&pipe, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe, nullptr);
    catch_interrupts();
    if (options.citus && run_to_end({TRIBUTARY_CITUS_TMP, "available"}, std::chrono::seconds(30)).code != 0) {
        std::cout << "crash_suite --citus: skipped, Citus is not installed (scripts/citus-tmp available says why)"
                  << std::endl;
        return 77;
    }
    try {
        const int code = run(options);
        if (interrupted()) {
            std::cerr << "crash_suite: interrupted; the results above are incomplete\n";
            return 2;
        }
        return code;
    } catch (const std::exception& e) {
        std::cerr << "crash_suite: harness error (seed " << options.seed << "): " << e.what() << "\n";
        return 2;
    }
}
