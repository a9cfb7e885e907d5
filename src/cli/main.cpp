// tributary: loads events from many sources into PostgreSQL, exactly once.
// The one place that knows every adapter; see docs/design.md §2 for the contract.

#include <csignal>
#include <cstdlib>
#include <iostream>

#include <spdlog/spdlog.h>
#include <CLI/CLI.hpp>

#include "command.h"
#include "core/errors.h"
#include "logging.h"
#include "permission_refusal.h"
#include "postgres/sql_errors.h"
#include "usage_error.h"
#include "version/build_version.h"

namespace tributary::cli {

std::string GlobalOptions::database_url() const {
    if (!db.empty()) return db;
    if (const char* env = std::getenv("TRIBUTARY_DATABASE_URL")) return env;
    return "";
}

namespace {

/// The chosen command as typed, without its options: "run", "group list".
std::string command_path(const CLI::App& app) {
    std::string path;
    for (const CLI::App* at = &app; !at->get_subcommands().empty();) {
        at = at->get_subcommands().front();
        path += (path.empty() ? "" : " ") + at->get_name();
    }
    return path;
}

/// A message for the terminal: libpq's texts end with a newline of their own.
std::string trimmed(std::string text) {
    while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
    return text;
}

int run_cli(int argc, char** argv) {
    CLI::App app{"tributary: collects events from many sources into PostgreSQL, exactly once", "tributary"};
    app.require_subcommand(1);
    app.fallthrough();  // global options may also follow the command
    app.set_version_flag("--version", "tributary " + version_text(), "Print the version and the commit, and exit");
    GlobalOptions global;
    app.add_option(
        "--db", global.db,
        "PostgreSQL connection string or URI (default: $TRIBUTARY_DATABASE_URL, then libpq's PG* variables)");
    app.add_option("--log-level", global.log_level, "trace, debug, info, warn, error")
        ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error"}));
    app.add_option("--log-format", global.log_format, "text, or json (one object per line, for log shippers)")
        ->check(CLI::IsMember({"text", "json"}));

    Action action;
    add_migrate_command(app, global, action);
    add_source_commands(app, global, action);
    add_run_command(app, global, action);
    add_status_command(app, global, action);
    add_group_commands(app, global, action);
    add_consume_command(app, global, action);
    add_tail_command(app, global, action);
    add_dlq_commands(app, global, action);
    add_grant_command(app, global, action);
    add_receive_command(app, global, action);
    add_maintain_command(app, global, action);
    add_retention_commands(app, global, action);
    add_log_commands(app, global, action);
    add_console_command(app, global, action);
    add_shard_commands(app, global, action);

    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        const int code = app.exit(e);
        return code == 0 ? 0 : 2;
    }
    set_up_logging(global.log_level, global.log_format);
    try {
        return action();
    } catch (const UsageError& e) {
        std::cerr << "tributary: " << e.what() << "\n";
        return 2;
    } catch (const postgres::InvalidRequest& e) {
        // The SQL API refused an argument (a bad pattern, a bad --from).
        std::cerr << "tributary: " << e.what() << "\n";
        return 2;
    } catch (const DatabaseUnavailable& e) {
        std::cerr << "tributary: " << trimmed(e.what()) << "\n"
                  << "  check --db / TRIBUTARY_DATABASE_URL and that PostgreSQL is running\n";
        return 1;
    } catch (const PermissionDenied& e) {
        // Every refusal of a privilege, whichever statement met it: the role to grant, and to whom.
        std::cerr << "tributary: " << permission_refusal(command_path(app), e.what(), global.database_url());
        return 1;
    } catch (const pqxx::sql_error& e) {
        // Statements sent outside a PostgresSession (the migrator's, grant's) arrive untranslated.
        if (postgres::is_permission_denied(e)) {
            std::cerr << "tributary: "
                      << permission_refusal(command_path(app), postgres::server_message(e), global.database_url());
            return 1;
        }
        std::cerr << "tributary: " << postgres::server_message(e) << "\n";
        return 1;
    } catch (const std::exception& e) {
        std::cerr << "tributary: " << trimmed(e.what()) << "\n";
        return 1;
    }
}

}  // namespace
}  // namespace tributary::cli

int main(int argc, char** argv) {
    // A peer that closes a socket under us must cost an error, not the process
    // (libcurl with CURLOPT_NOSIGNAL leaves SIGPIPE to us).
    std::signal(SIGPIPE, SIG_IGN);
    return tributary::cli::run_cli(argc, argv);
}
