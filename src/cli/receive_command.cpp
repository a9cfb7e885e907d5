// `tributary receive`: pushed sources' webhooks over HTTP (issue 15), stored
// exactly once by group commits; see docs/sources.md "Pushed sources".

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <memory>
#include <optional>

#include <spdlog/spdlog.h>

#include "command.h"
#include "core/errors.h"
#include "core/stop_signal.h"
#include "duration.h"
#include "exit_codes.h"
#include "flag_checks.h"
#include "herald_process.h"
#include "metrics/metrics_server.h"
#include "postgres/migrator.h"
#include "postgres/postgres_pushed_events.h"
#include "postgres/postgres_pushed_sources.h"
#include "postgres/postgres_session.h"
#include "receiver/receiver_metrics.h"
#include "receiver/webhook_http_server.h"
#include "schema_wait.h"
#include "signal_watcher.h"
#include "usage_error.h"
#include "version/build_version.h"
#include "webhook/webhook_receiver.h"

namespace tributary::cli {

namespace {

struct ReceiveOptions {
    HeraldFlags herald;
    std::string listen;
    std::string metrics_listen;
    std::size_t max_queued_events = webhook::WebhookReceiver::Options{}.max_queued_events;
    unsigned max_connections = receiver::WebhookHttpServer::Options{}.max_connections;
    std::string request_timeout = "30s";
    std::size_t max_body_bytes_in_flight = receiver::WebhookHttpServer::Options{}.max_body_bytes_in_flight;
};

/// How long, at a stop, requests already whole may take to be committed and
/// answered (a commit waits for the database at most its statement timeout).
constexpr std::chrono::seconds kStopGrace{30};

void check_address(const char* flag, const std::string& address) {
    try {
        metrics::split_address(address);
    } catch (const std::invalid_argument& e) {
        throw UsageError(std::string(flag) + ": " + e.what());
    }
}

std::optional<std::string> from_environment(const std::string& name) {
    if (const char* value = std::getenv(name.c_str())) return std::string(value);
    return std::nullopt;
}

int receive(const GlobalOptions& global, const ReceiveOptions& options) {
    check_address("--listen", options.listen);
    if (!options.metrics_listen.empty()) check_address("--metrics-listen", options.metrics_listen);
    if (!options.herald.off) options.herald.timings();  // bad flags: a usage error before anything starts
    const auto db = global.database_url();
    StopSignal stop;
    SignalWatcher signals(stop);  // before any thread starts: they inherit its mask
    // The schema must be current: receiver_store is what it calls.
    if (!wait_for_schema(db, postgres::Migrator::Needs::tables_and_definitions,
                         {"receive", "prepared statements and session settings"}, "tributary_receiver", stop,
                         std::chrono::milliseconds::zero(), !options.herald.off))
        return exit_ok;

    // The catalogue and the store each on a session of their own: a
    // catalogue refresh never waits behind a group commit.
    postgres::PostgresSession catalog_session(db), store_session(db);
    postgres::PostgresPushedSources catalog(catalog_session);
    postgres::PostgresPushedEvents store(store_session, &stop);
    receiver::ReceiverMetrics metrics(version_number());
    webhook::WebhookReceiver::Options receiver_options;
    receiver_options.max_queued_events = options.max_queued_events;
    webhook::WebhookReceiver receiver(
        catalog, store, receiver_options, from_environment, [] { return std::chrono::system_clock::now(); }, &metrics);

    // The catalogue read once before the first request: requests that
    // arrive together at the start are then answered from it, rather than
    // 503 while the first read is under way.
    spdlog::info("pushed sources take bodies of up to {} bytes", receiver.largest_body_bytes());

    std::optional<metrics::MetricsServer> metrics_server;
    if (!options.metrics_listen.empty()) {
        metrics_server.emplace(
            options.metrics_listen, [&] { return metrics.scrape(); }, [&] { return metrics.health(); });
        spdlog::info("serving /metrics and /healthz on {} (port {})", options.metrics_listen, metrics_server->port());
    }
    receiver::WebhookHttpServer::Options server_options;
    server_options.max_connections = options.max_connections;
    server_options.max_body_bytes_in_flight = options.max_body_bytes_in_flight;
    server_options.request_timeout =
        std::chrono::duration_cast<std::chrono::seconds>(parse_duration(options.request_timeout));
    if (server_options.request_timeout.count() < 1) server_options.request_timeout = std::chrono::seconds(1);
    receiver::WebhookHttpServer server(options.listen, receiver, server_options,
                                       [&](int change) { metrics.in_flight(change); });
    // Tests and scripts read the port (for --listen HOST:0) from this line.
    spdlog::info("receiving webhooks on {} (port {}): POST /sources/NAME/events", options.listen, server.port());

    // Receivers notify nobody in their commits: the herald wakes consumers.
    HeraldThread herald(db, options.herald, stop);
    while (!stop.wait_for(std::chrono::minutes(1))) {
    }
    spdlog::info("stopping: no new connections; answering the requests in hand");
    server.stop(kStopGrace);
    spdlog::info("stopped");
    return exit_ok;
}

}  // namespace

void add_receive_command(CLI::App& app, const GlobalOptions& global, Action& action) {
    auto* cmd = app.add_subcommand("receive", "Receive pushed sources' webhooks over HTTP and store them exactly once");
    auto options = std::make_shared<ReceiveOptions>();
    cmd->add_option("--listen", options->listen,
                    "serve POST /sources/NAME/events on HOST:PORT, e.g. 0.0.0.0:8080 (port 0: any free port)")
        ->required();
    cmd->add_option("--metrics-listen", options->metrics_listen,
                    "serve /metrics (Prometheus) and /healthz on HOST:PORT, e.g. 127.0.0.1:9188");
    cmd->add_option("--max-queued-events", options->max_queued_events,
                    "events waiting to be committed at most; past it, requests are answered 503 with Retry-After "
                    "(413 for one request of more events than this)")
        ->capture_default_str()
        ->check(decimal_in(1, std::int64_t{1} << 30));
    cmd->add_option("--max-connections", options->max_connections,
                    "open connections at most (a thread each while its request waits for its commit)")
        ->capture_default_str()
        ->check(decimal_in(1, 65536));
    cmd->add_option("--request-timeout", options->request_timeout,
                    "a connection that takes longer to send a whole request (or idles this long) is closed")
        ->capture_default_str()
        ->check(duration_value());
    cmd->add_option("--max-body-bytes-in-flight", options->max_body_bytes_in_flight,
                    "bytes of request bodies all connections may hold at once; past it, 503 with Retry-After")
        ->capture_default_str()
        ->check(decimal_in(1024, std::numeric_limits<std::int64_t>::max()));
    add_herald_flags(*cmd, options->herald);

    cmd->callback([&global, &action, options] { action = [&global, options] { return receive(global, *options); }; });
}

}  // namespace tributary::cli
