// `tributary console`: the operator's console in the browser (issue 17): the
// embedded pages and the JSON API under /api/, over the console's functions
// in the database; see docs/console.md.

#include <chrono>
#include <memory>
#include <optional>

#include <spdlog/spdlog.h>

#include "command.h"
#include "console/admin_token.h"
#include "console/console_api.h"
#include "console/http/console_http_server.h"
#include "console/same_origin.h"
#include "console/tail_slots.h"
#include "core/stop_signal.h"
#include "exit_codes.h"
#include "flag_checks.h"
#include "metrics/console_group_metrics.h"
#include "metrics/metrics_server.h"
#include "postgres/control_channel.h"
#include "postgres/hint_channel.h"
#include "postgres/migrator.h"
#include "postgres/postgres_console_store.h"
#include "postgres/postgres_tail_feed.h"
#include "postgres/shown_database.h"
#include "schema_wait.h"
#include "signal_watcher.h"
#include "usage_error.h"
#include "version/build_version.h"

namespace tributary::cli {

namespace {

struct ConsoleOptions {
    std::string listen = "127.0.0.1:8080";
    std::string token_env;
    std::string token_file;
    int max_sessions = 4;
};

/// Live tails at once: each holds a thread and a database session while its
/// page is open; the next is answered 503.
constexpr int kMaxTails = 8;

/// The admin token the flags name, or none (read-only). A token asked for
/// but unset or empty is an error: never read-only by surprise.
std::optional<console::AdminToken> admin_token(const ConsoleOptions& options) {
    try {
        if (!options.token_env.empty()) return console::AdminToken::from_environment(options.token_env);
        if (!options.token_file.empty()) return console::AdminToken::from_file(options.token_file);
    } catch (const std::runtime_error& e) {
        throw UsageError(e.what());
    }
    return std::nullopt;
}

int serve_console(const GlobalOptions& global, const ConsoleOptions& options) {
    try {
        metrics::split_address(options.listen);
    } catch (const std::invalid_argument& e) {
        throw UsageError(std::string("--listen: ") + e.what());
    }
    auto token = admin_token(options);
    const auto db = global.database_url();
    StopSignal stop;
    SignalWatcher signals(stop);  // before any thread starts: they inherit its mask
    if (!wait_for_schema(db, postgres::Migrator::Needs::tables_and_definitions,
                         {"console", "LISTEN for the live tail and prepared statements"}, "tributary_console", stop))
        return exit_ok;

    postgres::PostgresConsoleStore store(db, options.max_sessions);
    postgres::PostgresTailFeeds feeds(db);
    console::TailSlots slots(kMaxTails);
    // One LISTEN connection wakes every open tail.
    postgres::HintChannel hints(
        db, postgres::HintChannel::Options{{postgres::kEventsChannel}, postgres::kEventsWakeWindow}, stop);
    console::TailService tail{feeds, slots, hints, stop, {}};
    const bool read_only = !token;
    // On the loopback, only requests naming the loopback (DNS rebinding).
    const bool loopback = console::is_loopback_host(metrics::split_address(options.listen).first);
    // GET /metrics: the groups' gauges, one read of the groups per 5 s whatever the scrapers.
    metrics::ConsoleGroupMetrics group_metrics(store, version_number());
    console::ConsoleApi api(store, std::move(token), {version_text(), postgres::shown_database(db), loopback}, &tail,
                            &group_metrics);
    console::ConsoleHttpServer server(options.listen, api, {});
    // Tests and scripts read the port (for --listen HOST:0) from this line.
    spdlog::info("console on {} (port {}), {}", options.listen, server.port(),
                 read_only ? "read-only: start it with --token-env or --token-file for actions"
                           : "actions need the admin token");

    while (!stop.wait_for(std::chrono::minutes(1))) {
    }
    spdlog::info("stopping: closing the live tails and the connections");
    server.stop();
    spdlog::info("stopped");
    return exit_ok;
}

}  // namespace

void add_console_command(CLI::App& app, const GlobalOptions& global, Action& action) {
    auto* cmd = app.add_subcommand(
        "console", "Serve the operator's console (pages, a JSON API and the groups' /metrics) over HTTP");
    auto options = std::make_shared<ConsoleOptions>();
    cmd->add_option("--listen", options->listen, "serve on HOST:PORT (port 0: any free port)")->capture_default_str();
    auto* env = cmd->add_option("--token-env", options->token_env,
                                "the admin token is in this environment variable (without one: read-only)");
    auto* file =
        cmd->add_option("--token-file", options->token_file,
                        "the admin token is in this file, a trailing newline ignored (without one: read-only)");
    env->excludes(file);
    cmd->add_option("--max-sessions", options->max_sessions, "database sessions for the pages' reads and actions")
        ->capture_default_str()
        ->check(decimal_in(1, 64));
    cmd->callback(
        [&global, &action, options] { action = [&global, options] { return serve_console(global, *options); }; });
}

}  // namespace tributary::cli
