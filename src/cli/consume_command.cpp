#include <optional>
#include <thread>

#include <unistd.h>

#include <spdlog/spdlog.h>

#include "command.h"
#include "core/consumer.h"
#include "core/errors.h"
#include "core/wakeup.h"
#include "duration.h"
#include "exit_codes.h"
#include "flag_checks.h"
#include "herald_process.h"
#include "postgres/control_channel.h"
#include "postgres/hint_channel.h"
#include "postgres/login_privileges.h"
#include "postgres/migrator.h"
#include "postgres/postgres_group_admin.h"
#include "postgres/postgres_group_log.h"
#include "postgres/postgres_session.h"
#include "postgres/shown_database.h"
#include "process/exec_batch_handler.h"
#include "session_pooling.h"
#include "signal_watcher.h"
#include "usage_error.h"

namespace tributary::cli {

namespace {

struct ConsumeOptions {
    HeraldFlags herald;  ///< not with --poll-only
    std::string group;
    std::string consumer;
    int batch = 1000;
    int concurrency = 1;
    std::string exec;
    std::string max_runtime;
    std::string shutdown_timeout = "30s";
    bool until_idle = false;
    bool poll_only = false;
    std::string idle_poll;
};

std::string default_consumer_name() {
    char host[256] = {};
    if (gethostname(host, sizeof host - 1) != 0) host[0] = '\0';
    return std::string(host[0] ? host : "localhost") + ":" + std::to_string(getpid());
}

/// The group, and how the database keeps sessions.
struct FoundGroup {
    std::int64_t lease_ms;
    postgres::SessionKeeping keeping;
};

/// Behind a pooler in transaction mode (session_pooling.h), only --poll-only
/// works: LISTEN needs a session of its own, reading the group does not.
postgres::SessionKeeping sessions_for(const std::string& db, bool poll_only) {
    const auto found = probe_and_log(db);
    if (found.keeping == postgres::SessionKeeping::shared && !poll_only)
        throw SharedSessionsRefused(shared_sessions_refusal(db, {"consume", "LISTEN for new events"}, found.evidence,
                                                            "run it with --poll-only, which works through such a "
                                                            "pooler"));
    if (found.keeping == postgres::SessionKeeping::shared)
        spdlog::info(
            "database {} shares server sessions between transactions (a pooler in transaction mode): "
            "reading with --poll-only, one statement at a time, nothing prepared or set on a session",
            postgres::shown_database(db));
    return found.keeping;
}

/// The group's settings; while the database cannot be reached (a supervisor
/// started us before PostgreSQL), waits and retries rather than exiting.
/// Nothing when stopped meanwhile; GroupNotFound for an unknown group,
/// PermissionDenied for a role without tributary_consumer's privileges; with
/// `herald` (it competes for the herald's lease), an error telling to run
/// `tributary migrate` when the herald's functions are missing.
std::optional<FoundGroup> find_group(const std::string& db, const std::string& group, bool poll_only, bool herald,
                                     StopSignal& stop) {
    std::chrono::milliseconds pause{500};
    for (bool said = false;; said = true) {
        try {
            const auto keeping = sessions_for(db, poll_only);
            // Refused once, here, rather than at every read.
            postgres::require_privileges_of(db, "tributary_consumer");
            if (herald) postgres::Migrator(db).require_herald_functions();
            postgres::PostgresSession session(db, keeping);
            postgres::PostgresGroupAdmin admin(session);
            // The lease alone, not the status: on Citus that counts every lane's backlog on its
            // worker, and a consumer must start while one is down (docs/citus.md "A worker down").
            const auto lease_ms = admin.lease_ms(group);
            if (!lease_ms)
                throw GroupNotFound("no consumer group named '" + group +
                                    "' (create it with `tributary group create`, see `tributary group list`)");
            if (said) spdlog::info("group={} database reachable again; starting", group);
            return FoundGroup{*lease_ms, keeping};
        } catch (const DatabaseUnavailable& e) {
            if (!said)
                spdlog::error("group={} database unavailable at start, retrying with backoff: {}", group, e.what());
        }
        if (stop.wait_for(pause)) return std::nullopt;
        pause = std::min(pause * 2, std::chrono::milliseconds(10000));
    }
}

int consume(const GlobalOptions& global, const ConsumeOptions& options) {
    const auto max_runtime =
        options.max_runtime.empty() ? std::chrono::milliseconds::zero() : parse_duration(options.max_runtime);
    const auto shutdown_timeout = parse_duration(options.shutdown_timeout);
    if (options.exec.empty()) throw UsageError("--exec: the command must not be empty");
    if (!options.herald.off) options.herald.timings();
    const auto db = global.database_url();
    StopSignal stop;
    SignalWatcher signals(stop);  // before any thread starts: they inherit its mask
    const auto group =
        find_group(db, options.group, options.poll_only, !options.poll_only && !options.herald.off, stop);
    if (!group) return exit_ok;

    ConsumerOptions consumer_options;
    consumer_options.group = options.group;
    consumer_options.consumer = options.consumer.empty() ? default_consumer_name() : options.consumer;
    consumer_options.batch_size = options.batch;
    consumer_options.concurrency = options.concurrency;
    consumer_options.lease = std::chrono::milliseconds(group->lease_ms);
    consumer_options.shutdown_timeout = shutdown_timeout;
    consumer_options.until_idle = options.until_idle;

    process::ExecBatchHandler handler(options.exec);
    // Push (docs/design.md §7): the herald hints once events are readable; an
    // idle worker sleeps until a hint, a reconnect of the hint connection, or
    // its fallback timer. --poll-only: the timer alone, 50 ms doubling to 1 s,
    // and no part in the herald's election either (a pooler, maybe).
    PauseWakeup pause(stop);
    std::optional<postgres::HintChannel> hints;
    if (!options.poll_only) {
        hints.emplace(db, postgres::HintChannel::Options{{postgres::kEventsChannel}, postgres::kEventsWakeWindow},
                      stop);
        consumer_options.idle_max = std::chrono::seconds(5);
    }
    // A fixed fallback instead: where the herald hints every write (loaders,
    // receivers, publish), reading more often while idle only costs the database. What
    // nobody hints (a retry falling due, a lease running out) waits for it.
    if (!options.idle_poll.empty())
        consumer_options.idle_min = consumer_options.idle_max = parse_duration(options.idle_poll);
    Wakeup& wakeup = hints ? static_cast<Wakeup&>(*hints) : pause;
    std::optional<HeraldThread> herald;
    if (!options.poll_only) herald.emplace(db, options.herald, stop);
    Consumer consumer(
        {[db, name = options.group, keeping = group->keeping] { return postgres::open_group_log(db, name, keeping); },
         handler, wakeup},
        consumer_options, stop);

    // --max-runtime is a stop like a signal; woken by the stop at the end.
    std::thread limit([&] {
        if (max_runtime.count() && !stop.wait_for(max_runtime)) {
            spdlog::info("group={} consumer={} max runtime {} reached, stopping", options.group,
                         consumer_options.consumer, options.max_runtime);
            stop.request_stop();
        }
    });
    const bool ok = consumer.run();
    stop.request_stop();
    limit.join();
    return ok ? exit_ok : exit_failure;
}

}  // namespace

void add_consume_command(CLI::App& app, const GlobalOptions& global, Action& action) {
    auto* cmd = app.add_subcommand("consume", "Run a command for each batch of a consumer group's events");
    auto options = std::make_shared<ConsumeOptions>();
    cmd->add_option("GROUP", options->group, "group name")->required();
    cmd->add_option("--consumer", options->consumer, "this consumer's name in the group (default: host:pid)");
    cmd->add_option("--batch", options->batch, "events per batch at most")
        ->capture_default_str()
        ->check(decimal_in(1, 10000));
    cmd->add_option("--concurrency", options->concurrency, "batches in hand at most (each runs its own command)")
        ->capture_default_str()
        ->check(decimal_in(1, 256));
    cmd->add_option("--exec", options->exec,
                    "shell command run per batch, NDJSON on stdin; exit 0 acks, anything else fails the batch")
        ->required();
    cmd->add_option("--max-runtime", options->max_runtime, "stop gracefully after this long, e.g. 55s")
        ->check(duration_value());
    cmd->add_flag("--poll-only", options->poll_only,
                  "no LISTEN (e.g. behind a transaction-pooling proxy): poll every 50 ms doubling to 1 s while idle");
    cmd->add_option("--idle-poll", options->idle_poll,
                    "while idle, read again after this long when no hint came; retries falling due and other "
                    "consumers' expired leases wait for such a read (default: 50 ms doubling to 5 s, or to 1 s "
                    "with --poll-only)")
        ->check(duration_value());
    cmd->add_option("--shutdown-timeout", options->shutdown_timeout,
                    "on a stop, how long batches in hand may still run before they are abandoned")
        ->capture_default_str()
        ->check(duration_value());
    cmd->add_flag("--until-idle", options->until_idle,
                  "exit once a read finds nothing to do (in a group of lanes: and no lane is coming to it)");
    add_herald_flags(*cmd, options->herald);
    cmd->callback([&global, &action, options] { action = [&global, options] { return consume(global, *options); }; });
}

}  // namespace tributary::cli
