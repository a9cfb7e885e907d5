#include <algorithm>
#include <iomanip>
#include <iostream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "http/shown_url.h"

#include "aligned_table.h"
#include "command.h"
#include "log_status_text.h"
#include "postgres/postgres_log_status.h"
#include "postgres/postgres_session.h"
#include "postgres/postgres_source_registry.h"

namespace tributary::cli {

namespace {

/// A pushed or published source has no gate: it is pushed, published or paused.
std::string state_of(const postgres::SourceStatus& s) {
    if (!s.enabled) return "paused";
    if (s.kind == postgres::SourceKind::pushed) return "pushed";
    if (s.kind == postgres::SourceKind::published) return "published";
    return s.state;
}

bool pulled(const postgres::SourceStatus& s) { return s.kind == postgres::SourceKind::pulled; }

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

nlohmann::json holder_json(const std::optional<LockHolder>& h) {
    if (!h) return nullptr;
    return {{"pid", h->pid},
            {"user", h->user},
            {"application", h->application},
            {"since", h->since.empty() ? nlohmann::json() : nlohmann::json(h->since)},
            {"reason", h->why}};
}

/// Names a stranger chose, shown on a terminal: printable ASCII only.
std::string printable(const std::string& text) {
    std::string out;
    for (const char ch : text) out += (ch >= 0x20 && ch < 0x7f) ? ch : '?';
    return out;
}

/// A source's cursor as status shows it: the id, or the position (a next
/// link without its query, which may echo credentials) and the records of
/// its page already taken.
std::string cursor_text(const postgres::SourceStatus& s, std::size_t max_length) {
    if (!s.position) return std::to_string(s.cursor);
    std::string text = s.paging == "link" && !s.position->empty() ? shown_url(*s.position) : *s.position;
    text = printable(text);
    if (text.size() > max_length) text = text.substr(0, max_length) + "...";
    if (text.empty()) text = "(start)";
    return s.taken > 0 ? text + " +" + std::to_string(s.taken) : text;
}

/// A rewind's from/to as status shows them: a next link without its query,
/// as the cursor itself.
std::string shown_position(const postgres::SourceStatus& s, const std::string& position) {
    return s.paging == "link" ? shown_url(position) : position;
}

nlohmann::json rewind_json(const postgres::SourceStatus& s) {
    if (!s.last_rewind) return nullptr;
    const auto& r = *s.last_rewind;
    return {{"by", r.by}, {"at", r.at}, {"from", shown_position(s, r.from)}, {"to", shown_position(s, r.to)}};
}

void print_json(const std::vector<postgres::SourceStatus>& rows) {
    auto all = nlohmann::json::array();
    for (const auto& s : rows) {
        if (!pulled(s)) {
            // Nobody asks it: no cursor, counts or errors of requests.
            all.push_back({{"name", s.name}, {"kind", postgres::kind_name(s.kind)}, {"state", state_of(s)}});
            continue;
        }
        all.push_back({{"name", s.name},
                       {"kind", postgres::kind_name(s.kind)},
                       {"state", state_of(s)},
                       {"paginate", s.paging},
                       {"cursor", s.position ? nlohmann::json(cursor_text(s, 8192)) : nlohmann::json(s.cursor)},
                       {"taken", s.taken},
                       {"last_rewind", rewind_json(s)},
                       {"events_stored", s.events_stored},
                       {"consecutive_failures", s.failures},
                       {"seconds_since_last_request", optional_json(s.seconds_since_request)},
                       {"seconds_since_last_success", optional_json(s.seconds_since_success)},
                       {"lag", s.backlog ? nlohmann::json(*s.backlog) : nlohmann::json()},
                       {"seconds_until_next_request", s.seconds_until_allowed},
                       {"last_error", s.last_error ? nlohmann::json(*s.last_error) : nlohmann::json()},
                       {"seconds_since_last_error", optional_json(s.seconds_since_error)},
                       {"locked_by", holder_json(s.locked_by)}});
    }
    // Hostile sources put arbitrary bytes into error texts; never fail on them.
    std::cout << all.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
}

/// The table's columns, each as wide as its widest cell: cursors, counts and
/// lags are 64-bit and may have 19 digits; nothing gets cut or run together.
void print_table(const std::vector<postgres::SourceStatus>& rows) {
    using Row = std::vector<std::string>;
    // Left-aligned text, right-aligned numbers; the last column is free.
    const std::vector<bool> right = {false, false, true, true, true, false, false, false, false};
    std::vector<Row> table{
        {"SOURCE", "STATE", "CURSOR", "STORED", "LAG", "LAST FETCH", "LAST OK", "NEXT", "LAST ERROR"}};
    for (const auto& s : rows) {
        if (!pulled(s)) {
            table.push_back({s.name, state_of(s), "-", "-", "-", "-", "-", "-", "-"});
            continue;
        }
        std::string error = "-";
        if (s.last_error) error = "(" + ago(s.seconds_since_error) + ") " + *s.last_error;
        table.push_back({s.name, state_of(s), cursor_text(s, 40), std::to_string(s.events_stored),
                         s.backlog ? std::to_string(*s.backlog) : "-", ago(s.seconds_since_request),
                         ago(s.seconds_since_success), next_request(s.seconds_until_allowed), error});
    }
    print_aligned(table, right);
    if (rows.empty()) std::cout << "(no sources: add one with `tributary source add NAME --url URL`)\n";
    for (const auto& s : rows) {
        if (!s.last_rewind) continue;
        const auto& r = *s.last_rewind;
        std::cout << "\n"
                  << s.name << ": rewound by " << printable(r.by) << " at " << r.at << " from "
                  << printable(shown_position(s, r.from).substr(0, 80)) << " to "
                  << printable(shown_position(s, r.to).substr(0, 80)) << "\n";
    }
    for (const auto& s : rows) {
        if (!s.locked_by) continue;
        const auto& h = *s.locked_by;
        std::cout
            << "\nWARNING: " << s.name << " is locked by a session that is not a tributary loader (" << printable(h.why)
            << "): pid " << h.pid << ", user " << printable(h.user) << ", application '" << printable(h.application)
            << "', since " << (h.since.empty() ? "unknown" : h.since)
            << ".\n  No loader can ask this source until that session unlocks or ends: SELECT pg_terminate_backend("
            << h.pid << ");\n";
    }
}

/// The log's block after the sources, then what needs a person. A schema
/// from before the log's status (or a role without it) costs only this block.
void print_log_block(postgres::PostgresSession& session) {
    std::optional<LogStatus> log;
    try {
        log = postgres::PostgresLogStatus(session).status();
    } catch (const std::exception& e) {
        std::cout << "\nlog: unavailable (" << e.what() << ")\n";
        return;
    }
    std::cout << "\nLOG\n";
    for (const auto& line : log_summary_lines(*log)) std::cout << "  " << line << "\n";
    for (const auto& w : log_warnings(*log)) std::cout << "\nWARNING: " << w << "\n";
}

}  // namespace

void add_status_command(CLI::App& app, const GlobalOptions& global, Action& action) {
    auto* cmd = app.add_subcommand(
        "status", "One row per source: state, cursor, events stored, last fetch, last error, next request");
    auto json = std::make_shared<bool>(false);
    cmd->add_flag("--json", *json, "machine-readable output");
    cmd->callback([&global, &action, json] {
        action = [&global, json] {
            postgres::PostgresSession session(global.database_url());
            const auto rows = postgres::PostgresSourceRegistry(session).status();
            if (*json) {
                print_json(rows);  // an array, as scripts expect: `tributary log --json` has the log
                return 0;
            }
            print_table(rows);
            print_log_block(session);
            return 0;
        };
    });
}

}  // namespace tributary::cli
