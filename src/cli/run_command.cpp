#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include <spdlog/spdlog.h>

#include "command.h"
#include "core/errors.h"
#include "core/loader.h"
#include "core/system_clock.h"
#include "duration.h"
#include "exit_codes.h"
#include "flag_checks.h"
#include "herald_process.h"
#include "http/body_budget.h"
#include "http/curl_event_fetcher.h"
#include "http/oauth2_token_request.h"
#include "log_metrics_refresher.h"
#include "maintainer_process.h"
#include "maintenance/holder_name.h"
#include "maintenance/lease_store.h"
#include "metrics/loader_metrics.h"
#include "metrics/log_metrics.h"
#include "metrics/metrics_server.h"
#include "page_buffer_memory.h"
#include "permission_refusal.h"
#include "postgres/control_channel.h"
#include "postgres/hint_channel.h"
#include "postgres/migrator.h"
#include "postgres/postgres_access_tokens.h"
#include "postgres/postgres_session.h"
#include "postgres/postgres_source_registry.h"
#include "postgres/postgres_source_turn.h"
#include "postgres/shown_database.h"
#include "role_competition.h"
#include "run_limits.h"
#include "run_observer.h"
#include "schema_wait.h"
#include "signal_watcher.h"
#include "usage_error.h"
#include "version/build_version.h"

namespace tributary::cli {

namespace {

struct RunOptions {
    HeraldFlags herald;
    int workers = 4;
    std::string max_runtime;
    bool until_idle = false;
    std::string metrics_addr;
    std::size_t max_rss_mb = 0;
    bool poll_only = false;
    std::string idle_poll_max = "60s";
    std::chrono::milliseconds idle_poll_cap{60000};  ///< idle_poll_max, parsed
    /// Bytes of response bodies all workers may hold at once (BodyBudget).
    std::size_t max_body_bytes_in_flight = std::size_t{256} << 20;
    bool no_maintain = false;
    MaintainerFlags maintainer;  ///< --maintainer-lease, --maintainer-interval
};

/// A loop that has done nothing at all for this long is stuck (the longest
/// legitimate silence is a source at a long timeout).
constexpr std::chrono::seconds kQuietLimit{300};

struct Shared {
    const std::string db;
    const RunOptions& options;
    StopSignal& stop;
    RunObserver& observer;
    metrics::LoaderMetrics* metrics;
    postgres::HintChannel* hints;  ///< null with --poll-only
    BodyBudget& body_budget;
};

/// Loaders listen for source changes and nudges (the herald, not they, wakes
/// consumers: sql/internal/87_herald.sql). Each wake-up costs every worker a schedule read: with N
/// workers, at most one wake-up per N × 50 ms (a second at most), so that a
/// NOTIFY flood costs the process one read per 50 ms on average. The first
/// notification after a quiet window still wakes them at once.
postgres::HintChannel::Options hint_options(int workers) {
    postgres::HintChannel::Options hint_options{{postgres::kControlChannel}};
    hint_options.wake_window =
        std::min<std::chrono::milliseconds>(std::chrono::milliseconds(50) * workers, std::chrono::seconds(1));
    return hint_options;
}

/// POST /sources/NAME/nudge: one session for the HTTP server's threads.
class Nudger {
public:
    explicit Nudger(std::string db) : db_(std::move(db)) {}
    metrics::NudgeOutcome operator()(const std::string& name) {
        std::lock_guard<std::mutex> guard(mutex_);
        try {
            if (!session_) {
                session_ = std::make_unique<postgres::PostgresSession>(db_);
                registry_ = std::make_unique<postgres::PostgresSourceRegistry>(*session_);
            }
            if (!registry_->nudge(name)) return metrics::NudgeOutcome::unknown_source;
            spdlog::debug("source={} nudged", name);
            return metrics::NudgeOutcome::nudged;
        } catch (const std::exception& e) {
            spdlog::warn("source={} nudge failed: {}", name, e.what());
            return metrics::NudgeOutcome::unavailable;
        }
    }

private:
    const std::string db_;
    std::mutex mutex_;
    std::unique_ptr<postgres::PostgresSession> session_;
    std::unique_ptr<postgres::PostgresSourceRegistry> registry_;
};

/// One worker: its own database session and HTTP handle, wired to a Loader.
/// Returns false when it ended on an error rather than a stop or idleness.
bool run_worker(int index, const Shared& shared) {
    const std::string name = "w" + std::to_string(index + 1);
    try {
        postgres::PostgresSession session(shared.db);
        if (shared.metrics)
            session.on_new_session([m = shared.metrics](std::uint64_t generation) {
                if (generation > 1) m->database_reconnected();
            });
        postgres::PostgresSourceRegistry catalog(session);
        postgres::PostgresSourceTurn turn(session, &shared.stop);
        CurlEventFetcher fetcher(FetchLimits{}, shared.stop, &shared.body_budget);
        // OAuth2 tokens on a session of their own, opened only when an
        // OAuth2 source is first asked: the turn's session keeps its locks.
        postgres::PostgresSession token_session(shared.db);
        postgres::PostgresAccessTokens access_tokens(token_session);
        SharedAccessToken shared_token(
            access_tokens,
            [](const Source& source) {
                return request_oauth2_token(source, [](const char* n) { return std::getenv(n); });
            },
            shared.stop);
        fetcher.share_access_tokens(shared_token);
        SystemClock clock(shared.stop, shared.hints);
        LoaderOptions loader_options;
        loader_options.worker = name;
        loader_options.worker_index = index;
        loader_options.worker_count = shared.options.workers;
        loader_options.idle_poll_cap = shared.options.idle_poll_cap;
        // Hints wake a sleeping worker for source changes and nudges; the
        // schedule's own refresh is then only the safety net.
        loader_options.schedule_refresh = shared.hints ? std::chrono::seconds(5) : std::chrono::seconds(1);
        Loader loader({catalog, turn, fetcher, clock}, loader_options, shared.stop, shared.observer);
        loader.run(shared.options.until_idle);
        return true;
    } catch (const std::exception& e) {
        spdlog::error("worker={} stopped on an error: {}", name, e.what());
        return false;
    }
}

/// The process's part in the maintainer's election (unless --no-maintain): competes for the
/// lease until stopped. Never fails loading: a role that may not maintain warns once and the
/// thread ends; any other failure is logged and the maintainer tries again after a lease.
void take_part_in_maintenance(const std::string& db, const MaintainerFlags& flags, const std::string& holder,
                              const StopSignal& stop) {
    compete_until_stopped(
        "maintainer", flags.timings().lease, stop,
        [&] {
            MaintainerProcess process(db, flags, holder);
            process.maintainer().run(stop);
        },
        [&](const std::exception& e) {
            spdlog::warn(
                "maintainer: this process takes no part in maintaining the log (loading goes on): {} (the "
                "maintainer's functions need the role tributary_maintainer: {})",
                e.what(), grant_to_run("maintainer", db));
        });
}

int run(const GlobalOptions& global, RunOptions& options) {
    const auto max_runtime =
        options.max_runtime.empty() ? std::chrono::milliseconds::zero() : parse_duration(options.max_runtime);
    options.idle_poll_cap = parse_duration(options.idle_poll_max);
    if (!options.metrics_addr.empty()) {
        try {
            metrics::split_address(options.metrics_addr);
        } catch (const std::invalid_argument& e) {
            throw UsageError(std::string("--listen: ") + e.what());
        }
    }
    if (!options.no_maintain) options.maintainer.timings();  // bad flags: a usage error before anything starts
    if (!options.herald.off) options.herald.timings();
    const auto db = global.database_url();
    StopSignal stop;
    SignalWatcher signals(stop);  // before any thread starts: they inherit its mask
    RunLimits limits(max_runtime, options.max_runtime, options.max_rss_mb, postgres::shown_database(db), stop);
    if (!wait_for_schema(db, postgres::Migrator::Needs::tables_and_loader_functions,
                         {"run", "advisory locks, LISTEN and prepared statements"}, "tributary_loader", stop,
                         max_runtime, !options.herald.off))
        return exit_ok;  // stopped while waiting
    if (options.until_idle) {
        // A catch-up run asks every source; an empty answer from before
        // the run does not count as "nothing new".
        try {
            postgres::PostgresSession session(db);
            postgres::PostgresSourceRegistry registry(session);
            const auto woken = registry.wake_idle_sources();
            if (woken) spdlog::info("until idle: {} idle source(s) will be asked again", woken);
        } catch (const std::exception& e) {
            // The workers wait for the database as usual; only this nicety is lost.
            spdlog::warn("until idle: could not make idle sources due: {}", e.what());
        }
    }
    std::optional<metrics::LoaderMetrics> loader_metrics;
    if (!options.metrics_addr.empty()) loader_metrics.emplace(options.workers, version_number());
    std::optional<postgres::HintChannel> hints;
    if (!options.poll_only) hints.emplace(db, hint_options(options.workers), stop);
    // One name for every attempt: tributary_maintainer_is_leader compares the lease's holder with it.
    const std::string holder = options.no_maintain ? "" : maintenance::unique_holder_name();
    std::optional<metrics::LogMetrics> log_metrics;
    if (loader_metrics) log_metrics.emplace(holder);
    RunObserver observer(loader_metrics ? &*loader_metrics : nullptr);
    Nudger nudger(db);  // before the server: its threads call it until the server is gone
    std::optional<metrics::MetricsServer> server;
    if (loader_metrics) {
        server.emplace(
            options.metrics_addr, [&] { return loader_metrics->scrape() + log_metrics->scrape(); },
            [&] { return observer.health(kQuietLimit); }, [&](const std::string& name) { return nudger(name); });
        spdlog::info("serving /metrics and /healthz on {} (port {})", options.metrics_addr, server->port());
    }
    std::optional<LogMetricsRefresher> log_refresher;  // stopped before the server and the metrics go
    if (log_metrics) log_refresher.emplace(db, *log_metrics);
    spdlog::info("starting {} worker(s){}{}", options.workers,
                 max_runtime.count() ? ", max runtime " + options.max_runtime : "",
                 options.until_idle ? ", until idle" : "");

    limits.started();
    keep_page_buffer_memory();
    BodyBudget body_budget(options.max_body_bytes_in_flight);
    const Shared shared{
        db,         options, stop, observer, loader_metrics ? &*loader_metrics : nullptr, hints ? &*hints : nullptr,
        body_budget};
    std::atomic<int> failed{0};
    std::vector<std::thread> workers;
    for (int i = 0; i < options.workers; ++i)
        workers.emplace_back([&, i] {
            if (!run_worker(i, shared)) ++failed;
        });
    std::optional<std::thread> maintainer;
    if (!options.no_maintain)
        maintainer.emplace([&] { take_part_in_maintenance(db, options.maintainer, holder, stop); });
    HeraldThread herald(db, options.herald, stop);
    for (auto& w : workers) w.join();
    stop.request_stop();                 // when workers ended by themselves
    if (maintainer) maintainer->join();  // releases the lease if it held it
    const bool memory_limit = limits.finish();
    spdlog::info("stopped");
    if (failed) return exit_failure;
    return memory_limit ? exit_memory_limit : exit_ok;
}

}  // namespace

void add_run_command(CLI::App& app, const GlobalOptions& global, Action& action) {
    auto* cmd = app.add_subcommand("run", "Load events from every enabled source until stopped");
    auto options = std::make_shared<RunOptions>();
    cmd->add_option("--workers", options->workers, "loaders in this process, each with its own database session")
        ->capture_default_str()
        ->check(decimal_in(1, 256));
    cmd->add_option("--max-runtime", options->max_runtime, "stop gracefully after this long, e.g. 55s (for cron)")
        ->check(duration_value());
    cmd->add_flag("--until-idle", options->until_idle, "exit once a full pass over all sources found nothing");
    cmd->add_option("--listen,--metrics-addr", options->metrics_addr,
                    "serve /metrics (Prometheus), /healthz and POST /sources/NAME/nudge on HOST:PORT, "
                    "e.g. 127.0.0.1:9187");
    cmd->add_option("--max-rss", options->max_rss_mb,
                    "memory ceiling in MB: past it, finish the batches in hand and exit with code 3")
        ->check(decimal_in(1, std::int64_t{1} << 20));
    cmd->add_flag("--poll-only", options->poll_only,
                  "no LISTEN/NOTIFY: no commit hints for consumers, source changes seen within a second");
    cmd->add_option("--idle-poll-max", options->idle_poll_max,
                    "longest pause before asking again a source that keeps answering with nothing")
        ->capture_default_str()
        ->check(duration_value());
    cmd->add_option("--max-body-bytes-in-flight", options->max_body_bytes_in_flight,
                    "bytes of response bodies all workers may hold at once; a worker that cannot get its share "
                    "waits, or its fetch fails as transient (at least one largest body, 67108864)")
        ->capture_default_str()
        ->check(decimal_in(static_cast<std::int64_t>(FetchLimits{}.max_body_bytes),
                           std::numeric_limits<std::int64_t>::max()));
    cmd->add_flag("--no-maintain", options->no_maintain,
                  "take no part in the maintainer's election (by default one `run` or `maintain` process at a "
                  "time maintains the log)");
    add_maintainer_flags(*cmd, options->maintainer, "maintainer-");
    add_herald_flags(*cmd, options->herald);
    cmd->callback([&global, &action, options] { action = [&global, options] { return run(global, *options); }; });
}

}  // namespace tributary::cli
