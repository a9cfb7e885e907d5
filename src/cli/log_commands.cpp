#include <chrono>
#include <iostream>
#include <thread>

#include "command.h"
#include "log_status_text.h"
#include "postgres/postgres_default_partition.h"
#include "postgres/postgres_log_status.h"
#include "postgres/postgres_session.h"

namespace tributary::cli {

namespace {

void print_log_status(const LogStatus& s, bool json) {
    if (json) {
        std::cout << log_status_json(s).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
        return;
    }
    for (const auto& line : log_summary_lines(s)) std::cout << line << "\n";
    for (const auto& w : log_warnings(s)) std::cout << "WARNING: " << w << "\n";
}

void add_partitions(CLI::App& log, const GlobalOptions& global, Action& action) {
    auto* cmd =
        log.add_subcommand("partitions",
                           "One row per partition: range, retention state, size, when it started/ended/sealed, due, "
                           "groups holding it, archive");
    auto json = std::make_shared<bool>(false);
    cmd->add_flag("--json", *json, "machine-readable output");
    cmd->callback([&global, &action, json] {
        action = [&global, json] {
            postgres::PostgresSession session(global.database_url());
            const auto rows = postgres::PostgresLogStatus(session).partitions();
            if (*json)
                std::cout << partitions_json(rows).dump(2, ' ', false, nlohmann::json::error_handler_t::replace)
                          << "\n";
            else print_partitions_table(rows);
            return 0;
        };
    });
}

/// `log repartition`: the default partition's events moved, a run at a
/// time, into partitions of their own (docs/operations.md "The default
/// partition"). A busy log (its lock not had within 3 s) is tried again,
/// up to 10 times a second apart.
int repartition(const GlobalOptions& global, int max_events) {
    postgres::PostgresSession session(global.database_url());
    postgres::PostgresDefaultPartition default_partition(session);
    // What is in it now: writers still filling it (no maintainer) do not keep the command going.
    const auto below = default_partition.horizon();
    std::int64_t moved = 0;
    for (int busy = 0;;) {
        const auto outcome = default_partition.move_next(max_events, below);
        if (outcome.moved) {
            const auto& m = *outcome.moved;
            moved += m.events;
            std::cout << "moved " << m.events << " event(s) into " << m.partition << " [" << m.from_tx << ", "
                      << m.to_tx << ") (the log locked " << static_cast<long long>(m.lock_held_ms) << " ms, after "
                      << static_cast<long long>(m.lock_wait_ms) << " ms waiting)\n";
            continue;
        }
        if (!outcome.busy) break;
        if (++busy > 10) {
            std::cerr << "error: the log stayed busy (" << outcome.busy_reason << "); nothing more moved, run again\n";
            return 1;
        }
        std::this_thread::sleep_for(std::chrono::seconds(1));
    }
    const auto left = default_partition.left();
    if (left.events == 0) std::cout << "the default partition is empty (" << moved << " event(s) moved)\n";
    else
        std::cout << left.events << " event(s) left in the default partition: a transaction below theirs is still "
                  << "running, or they arrived after this began; run this again\n";
    return 0;
}

void add_repartition(CLI::App& log, const GlobalOptions& global, Action& action) {
    auto* cmd = log.add_subcommand(
        "repartition", "Empty the default partition: move its events into partitions of their own (safe while "
                       "loaders and consumers run)");
    auto max_events = std::make_shared<int>(100000);
    cmd->add_option("--max-events", *max_events, "events moved in one transaction, under one lock of the log")
        ->check(CLI::Range(1, 10000000));
    cmd->callback([&global, &action, max_events] {
        action = [&global, max_events] { return repartition(global, *max_events); };
    });
}

}  // namespace

void add_log_commands(CLI::App& app, const GlobalOptions& global, Action& action) {
    auto* log = app.add_subcommand("log", "The log: size, partitions, oldest event, next drop, maintainer, warnings");
    auto json = std::make_shared<bool>(false);
    log->add_flag("--json", *json, "machine-readable output");
    add_partitions(*log, global, action);
    add_repartition(*log, global, action);
    log->callback([&global, &action, json, log] {
        if (log->got_subcommand("partitions") || log->got_subcommand("repartition")) return;  // their own action
        action = [&global, json] {
            postgres::PostgresSession session(global.database_url());
            print_log_status(postgres::PostgresLogStatus(session).status(), *json);
            return 0;
        };
    });
}

}  // namespace tributary::cli
