#include <atomic>
#include <thread>
#include <vector>

#include <spdlog/spdlog.h>

#include "command.h"
#include "core/loader.h"
#include "core/system_clock.h"
#include "duration.h"
#include "http/curl_event_fetcher.h"
#include "postgres/migrator.h"
#include "postgres/postgres_event_store.h"
#include "postgres/postgres_session.h"
#include "postgres/postgres_source_gate.h"
#include "postgres/postgres_source_lock.h"
#include "postgres/postgres_source_registry.h"
#include "signal_watcher.h"

namespace tributary::cli {

namespace {

struct RunOptions {
    int workers = 4;
    std::string max_runtime;
    bool until_idle = false;
};

/// One worker: its own database session and HTTP handle, wired to a Loader.
/// Returns false when it ended on an error rather than a stop or idleness.
bool run_worker(const std::string& db, int index, const RunOptions& options, StopSignal& stop) {
    const std::string name = "w" + std::to_string(index + 1);
    try {
        postgres::PostgresSession session(db);
        postgres::PostgresSourceRegistry catalog(session);
        postgres::PostgresSourceLock lock(session);
        postgres::PostgresSourceGate gate(session);
        postgres::PostgresEventStore store(session);
        CurlEventFetcher fetcher(FetchLimits{}, stop);
        SystemClock clock(stop);
        LoaderOptions loader_options;
        loader_options.worker = name;
        loader_options.worker_index = index;
        loader_options.worker_count = options.workers;
        Loader loader({catalog, lock, gate, store, fetcher, clock}, loader_options, stop);
        loader.run(options.until_idle);
        return true;
    } catch (const std::exception& e) {
        spdlog::error("worker={} stopped on an error: {}", name, e.what());
        return false;
    }
}

int run(const GlobalOptions& global, const RunOptions& options) {
    const auto max_runtime =
        options.max_runtime.empty() ? std::chrono::milliseconds::zero() : parse_duration(options.max_runtime);
    const auto db = global.database_url();
    postgres::Migrator(db).require_current();

    StopSignal stop;
    SignalWatcher signals(stop);  // before any thread starts: they inherit its mask
    spdlog::info("starting {} worker(s){}{}", options.workers,
                 max_runtime.count() ? ", max runtime " + options.max_runtime : "",
                 options.until_idle ? ", until idle" : "");

    std::atomic<int> failed{0};
    std::vector<std::thread> workers;
    for (int i = 0; i < options.workers; ++i)
        workers.emplace_back([&, i] {
            if (!run_worker(db, i, options, stop)) ++failed;
        });
    // --max-runtime is a stop like any signal: batches in hand finish first.
    std::thread deadline([&] {
        if (max_runtime.count() && !stop.wait_for(max_runtime)) {
            spdlog::info("max runtime {} reached, stopping", options.max_runtime);
            stop.request_stop();
        }
    });
    for (auto& w : workers) w.join();
    stop.request_stop();  // wakes the deadline thread when workers ended by themselves
    deadline.join();
    spdlog::info("stopped");
    return failed ? 1 : 0;
}

}  // namespace

void add_run_command(CLI::App& app, const GlobalOptions& global, Action& action) {
    auto* cmd = app.add_subcommand("run", "Load events from every enabled source until stopped");
    auto options = std::make_shared<RunOptions>();
    cmd->add_option("--workers", options->workers, "loaders in this process, each with its own database session")->capture_default_str()
        ->check(CLI::Range(1, 256));
    cmd->add_option("--max-runtime", options->max_runtime, "stop gracefully after this long, e.g. 55s (for cron)");
    cmd->add_flag("--until-idle", options->until_idle, "exit once a full pass over all sources found nothing");
    cmd->callback([&global, &action, options] {
        action = [&global, options] { return run(global, *options); };
    });
}

}  // namespace tributary::cli
