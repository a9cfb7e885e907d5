#include <iostream>

#include "command.h"
#include "log_status_text.h"
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

}  // namespace

void add_log_commands(CLI::App& app, const GlobalOptions& global, Action& action) {
    auto* log = app.add_subcommand("log", "The log: size, partitions, oldest event, next drop, maintainer, warnings");
    auto json = std::make_shared<bool>(false);
    log->add_flag("--json", *json, "machine-readable output");
    add_partitions(*log, global, action);
    log->callback([&global, &action, json, log] {
        if (log->got_subcommand("partitions")) return;  // its own action
        action = [&global, json] {
            postgres::PostgresSession session(global.database_url());
            print_log_status(postgres::PostgresLogStatus(session).status(), *json);
            return 0;
        };
    });
}

}  // namespace tributary::cli
