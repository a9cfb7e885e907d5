#pragma once

#include <functional>
#include <string>

#include <CLI/CLI.hpp>

namespace tributary::cli {

/// Options every command shares.
struct GlobalOptions {
    std::string db;  ///< --db; empty: TRIBUTARY_DATABASE_URL, then libpq's defaults
    std::string log_level = "info";
    std::string log_format = "text";

    /// The connection string to use: the flag, else the environment, else
    /// "" (libpq then reads PGHOST, PGDATABASE, ...).
    std::string database_url() const;
};

/// What the chosen command does once the command line is parsed; returns
/// the exit code. Errors are thrown: UsageError (exit 2) or anything else
/// (exit 1).
using Action = std::function<int()>;

// Each adds its subcommand(s) to `app`; the parsed one sets `action`.
void add_migrate_command(CLI::App& app, const GlobalOptions& global, Action& action);
void add_source_commands(CLI::App& app, const GlobalOptions& global, Action& action);
void add_run_command(CLI::App& app, const GlobalOptions& global, Action& action);
void add_status_command(CLI::App& app, const GlobalOptions& global, Action& action);
void add_group_commands(CLI::App& app, const GlobalOptions& global, Action& action);
void add_consume_command(CLI::App& app, const GlobalOptions& global, Action& action);
void add_tail_command(CLI::App& app, const GlobalOptions& global, Action& action);
void add_dlq_commands(CLI::App& app, const GlobalOptions& global, Action& action);
void add_grant_command(CLI::App& app, const GlobalOptions& global, Action& action);
void add_receive_command(CLI::App& app, const GlobalOptions& global, Action& action);
void add_maintain_command(CLI::App& app, const GlobalOptions& global, Action& action);
void add_retention_commands(CLI::App& app, const GlobalOptions& global, Action& action);
void add_log_commands(CLI::App& app, const GlobalOptions& global, Action& action);
void add_console_command(CLI::App& app, const GlobalOptions& global, Action& action);
void add_shard_commands(CLI::App& app, const GlobalOptions& global, Action& action);

}  // namespace tributary::cli
