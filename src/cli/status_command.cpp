#include <iomanip>
#include <iostream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "command.h"
#include "postgres/postgres_session.h"
#include "postgres/postgres_source_registry.h"

namespace tributary::cli {

namespace {

std::string state_of(const postgres::SourceStatus& s) { return s.enabled ? s.state : "paused"; }

/// "0.2s ago", "3m ago", "-"
std::string ago(const std::optional<double>& seconds) {
    if (!seconds) return "-";
    std::ostringstream out;
    if (*seconds < 60) out << std::fixed << std::setprecision(1) << *seconds << "s ago";
    else if (*seconds < 3600) out << static_cast<long>(*seconds / 60) << "m ago";
    else out << static_cast<long>(*seconds / 3600) << "h ago";
    return out.str();
}

std::string next_request(double seconds_until) {
    if (seconds_until <= 0) return "now";
    std::ostringstream out;
    out << "in " << std::fixed << std::setprecision(1) << seconds_until << "s";
    return out.str();
}

nlohmann::json optional_json(const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(); }

void print_json(const std::vector<postgres::SourceStatus>& rows) {
    auto all = nlohmann::json::array();
    for (const auto& s : rows)
        all.push_back({{"name", s.name},
                       {"state", state_of(s)},
                       {"cursor", s.cursor},
                       {"events_stored", s.events_stored},
                       {"consecutive_failures", s.failures},
                       {"seconds_since_last_request", optional_json(s.seconds_since_request)},
                       {"seconds_since_last_success", optional_json(s.seconds_since_success)},
                       {"lag", s.backlog ? nlohmann::json(*s.backlog) : nlohmann::json()},
                       {"seconds_until_next_request", s.seconds_until_allowed},
                       {"last_error", s.last_error ? nlohmann::json(*s.last_error) : nlohmann::json()},
                       {"seconds_since_last_error", optional_json(s.seconds_since_error)}});
    // Hostile sources put arbitrary bytes into error texts; never fail on them.
    std::cout << all.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
}

void print_table(const std::vector<postgres::SourceStatus>& rows) {
    std::size_t width = 6;
    for (const auto& s : rows) width = std::max(width, s.name.size());
    const auto line = [&](const std::string& name, const std::string& state, const std::string& cursor,
                          const std::string& stored, const std::string& lag, const std::string& fetch,
                          const std::string& ok, const std::string& next, const std::string& error) {
        std::cout << std::left << std::setw(static_cast<int>(width) + 2) << name << std::setw(10) << state
                  << std::right << std::setw(12) << cursor << std::setw(12) << stored << std::setw(8) << lag << "  "
                  << std::left << std::setw(11) << fetch << std::setw(11) << ok << std::setw(9) << next << error
                  << "\n";
    };
    line("SOURCE", "STATE", "CURSOR", "STORED", "LAG", "LAST FETCH", "LAST OK", "NEXT", "LAST ERROR");
    for (const auto& s : rows) {
        std::string error = "-";
        if (s.last_error) error = "(" + ago(s.seconds_since_error) + ") " + *s.last_error;
        line(s.name, state_of(s), std::to_string(s.cursor), std::to_string(s.events_stored),
             s.backlog ? std::to_string(*s.backlog) : "-", ago(s.seconds_since_request), ago(s.seconds_since_success),
             next_request(s.seconds_until_allowed), error);
    }
    if (rows.empty()) std::cout << "(no sources: add one with `tributary source add NAME --url URL`)\n";
}

}  // namespace

void add_status_command(CLI::App& app, const GlobalOptions& global, Action& action) {
    auto* cmd = app.add_subcommand("status", "One row per source: state, cursor, events stored, last fetch, last error, next request");
    auto json = std::make_shared<bool>(false);
    cmd->add_flag("--json", *json, "machine-readable output");
    cmd->callback([&global, &action, json] {
        action = [&global, json] {
            postgres::PostgresSession session(global.database_url());
            const auto rows = postgres::PostgresSourceRegistry(session).status();
            if (*json) print_json(rows);
            else print_table(rows);
            return 0;
        };
    });
}

}  // namespace tributary::cli
