#include <memory>
#include <optional>

#include <spdlog/spdlog.h>

#include "command.h"
#include "exit_codes.h"
#include "flag_checks.h"
#include "herald_process.h"
#include "log_metrics_refresher.h"
#include "maintainer_process.h"
#include "maintenance/holder_name.h"
#include "metrics/log_metrics.h"
#include "metrics/metrics_server.h"
#include "postgres/migrator.h"
#include "schema_wait.h"
#include "signal_watcher.h"
#include "usage_error.h"

namespace tributary::cli {

namespace {

struct MaintainOptions {
    MaintainerFlags maintainer;
    HeraldFlags herald;  ///< not with --once
    bool once = false;
    std::string metrics_listen;  ///< HOST:PORT of /metrics (the log's gauges) and /healthz
};

/// --once (cron): one pass if the lease is free, then give it back.
int maintain_once(maintenance::ElectedRole& maintainer) {
    if (!maintainer.hold()) return exit_ok;  // logged: another maintainer holds the lease
    maintainer.pass();
    maintainer.release();
    return exit_ok;
}

int maintain(const GlobalOptions& global, const MaintainOptions& options) {
    const auto db = global.database_url();
    options.maintainer.timings();  // bad flags are usage errors before anything starts
    if (!options.herald.off) options.herald.timings();
    if (!options.metrics_listen.empty()) {
        try {
            metrics::split_address(options.metrics_listen);
        } catch (const std::invalid_argument& e) {
            throw UsageError(std::string("--metrics-listen: ") + e.what());
        }
    }
    StopSignal stop;
    SignalWatcher signals(stop);
    if (!wait_for_schema(db, postgres::Migrator::Needs::tables_and_definitions,
                         {"maintain", "prepared statements and session settings"}, "tributary_maintainer", stop,
                         std::chrono::milliseconds::zero(), !options.once && !options.herald.off))
        return exit_ok;
    MaintainerProcess process(db, options.maintainer, maintenance::unique_holder_name());
    auto& maintainer = process.maintainer();
    spdlog::info("maintainer={} starting{}", maintainer.holder(), options.once ? " (one pass)" : "");
    if (options.once) return maintain_once(maintainer);
    std::optional<metrics::LogMetrics> log_metrics;
    std::optional<metrics::MetricsServer> server;
    std::optional<LogMetricsRefresher> refresher;  // stopped before the server and the metrics go
    if (!options.metrics_listen.empty()) {
        // Compete once before the first figures, so that they say whether this process leads.
        maintainer.hold();
        log_metrics.emplace(maintainer.holder());
        server.emplace(
            options.metrics_listen, [&] { return log_metrics->scrape(); }, [] { return metrics::Health{}; });
        spdlog::info("serving /metrics and /healthz on {} (port {})", options.metrics_listen, server->port());
        refresher.emplace(db, *log_metrics);
    }
    HeraldThread herald(db, options.herald, stop);
    maintainer.run(stop);
    spdlog::info("maintainer={} stopped", maintainer.holder());
    return exit_ok;
}

}  // namespace

void add_maintainer_flags(CLI::App& cmd, MaintainerFlags& flags, const std::string& prefix) {
    flags.prefix = prefix;
    cmd.add_option("--" + prefix + "lease", flags.lease,
                   "how long the maintainer's lease lasts unrenewed (renewed every third of it): how long the "
                   "log goes without a maintainer after one vanished")
        ->capture_default_str()
        ->check(duration_value());
    cmd.add_option("--" + prefix + "interval", flags.interval,
                   "how often a pass (observe partitions, create those ahead, retention, the console's "
                   "per-minute counts) runs while holding the lease")
        ->capture_default_str()
        ->check(duration_value());
    // Unprefixed in `run` too: they are retention's, not the lease's.
    cmd.add_option("--archive-command", flags.archive_command,
                   "shell command (/bin/sh -c) a partition whose policy says --archive is piped to before it is "
                   "dropped (stdin: its rows; env TRIBUTARY_PARTITION, TRIBUTARY_FROM_TX, TRIBUTARY_TO_TX, "
                   "TRIBUTARY_FORMAT); dropped only after it exits 0. Without it such partitions stay");
    cmd.add_option("--archive-format", flags.archive_format,
                   "what the archive command reads: csv (with a header) or text "
                   "(COPY's text format)")
        ->capture_default_str()
        ->check(CLI::IsMember({"csv", "text"}));
}

void add_maintain_command(CLI::App& app, const GlobalOptions& global, Action& action) {
    auto* cmd = app.add_subcommand(
        "maintain",
        "Compete for the maintainer's lease and, while holding it, maintain the log: observe its partitions, "
        "create the coming ones, apply retention, fold the console's per-minute counts (releases the lease on "
        "SIGTERM/SIGINT)");
    auto options = std::make_shared<MaintainOptions>();
    add_maintainer_flags(*cmd, options->maintainer, "");
    add_herald_flags(*cmd, options->herald);
    cmd->add_option("--metrics-listen", options->metrics_listen,
                    "serve /metrics (the log's gauges, refreshed every 30s) and /healthz on HOST:PORT");
    cmd->add_flag("--once", options->once,
                  "for cron: one pass if no other maintainer holds the lease, then release it and exit 0");
    cmd->callback([&global, &action, options] { action = [&global, options] { return maintain(global, *options); }; });
}

}  // namespace tributary::cli
