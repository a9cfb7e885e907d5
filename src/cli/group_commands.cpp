#include <iomanip>
#include <iostream>
#include <map>
#include <sstream>

#include <spdlog/spdlog.h>
#include <nlohmann/json.hpp>

#include "command.h"
#include "core/errors.h"
#include "core/names.h"
#include "duration.h"
#include "flag_checks.h"
#include "permission_refusal.h"
#include "postgres/postgres_group_admin.h"
#include "postgres/postgres_retention.h"
#include "postgres/postgres_session.h"
#include "usage_error.h"

namespace tributary::cli {

namespace {

void check_group_name(const std::string& name) {
    if (!is_valid_name(name)) throw UsageError("invalid group name '" + name + "': use 1 to 100 of A-Z a-z 0-9 . _ -");
}

/// A duration flag as a PostgreSQL interval.
std::string interval_of(const std::string& duration) {
    return std::to_string(parse_duration(duration).count()) + " milliseconds";
}

std::string age(const std::optional<double>& seconds) {
    if (!seconds) return "-";
    std::ostringstream out;
    if (*seconds < 60) out << std::fixed << std::setprecision(1) << *seconds << "s";
    else if (*seconds < 3600) out << static_cast<long>(*seconds / 60) << "m";
    else out << static_cast<long>(*seconds / 3600) << "h";
    return out.str();
}

/// Per group, the partitions it holds back from retention.
using Holds = std::map<std::string, std::vector<std::string>>;

/// Never fails the list: a role or schema without retention shows none.
Holds retention_holds(postgres::PostgresSession& session, const std::string& db) {
    Holds out;
    try {
        for (auto& h : postgres::PostgresRetention(session, db).holders()) out[h.group] = std::move(h.partitions);
    } catch (const PermissionDenied& e) {
        spdlog::warn(
            "group list: cannot tell which partitions groups hold back: {} (that needs the role "
            "tributary_admin: {})",
            e.what(), grant_to_run("admin", db));
    } catch (const std::exception& e) {
        spdlog::warn("group list: cannot tell which partitions groups hold back: {}", e.what());
    }
    return out;
}

std::vector<std::string> holds_of(const Holds& holds, const std::string& group) {
    const auto it = holds.find(group);
    return it == holds.end() ? std::vector<std::string>{} : it->second;
}

/// A lane nobody holds: its events wait until a consumer with room reads.
void warn_unheld(const std::string& group, int unheld, int lanes) {
    std::cerr << "warning: group " << group << ": " << unheld << " of " << lanes
              << " lanes held by no consumer; their events wait until a consumer with room reads (is a `consume` "
                 "running? see `tributary group lanes "
              << group << "`)\n";
}

void print_json(const std::vector<postgres::GroupStatus>& rows, const Holds& holds) {
    auto all = nlohmann::json::array();
    for (const auto& g : rows)
        all.push_back(
            {{"name", g.name},
             {"pattern", g.pattern},
             {"ordered", g.ordered},
             {"lanes", g.lanes},
             {"unheld_lanes", g.unheld_lanes},
             {"max_deliveries", g.max_deliveries},
             {"lease_ms", g.lease_ms},
             {"events_behind", g.events_behind},
             {"oldest_unprocessed_seconds",
              g.oldest_unprocessed_seconds ? nlohmann::json(*g.oldest_unprocessed_seconds) : nlohmann::json()},
             {"batches_in_flight", g.batches_in_flight},
             {"retries_waiting", g.retries_waiting},
             {"dead_letters", g.dead_letters},
             {"holds_retention", holds_of(holds, g.name)}});
    std::cout << all.dump(2) << "\n";
}

void print_table(const std::vector<postgres::GroupStatus>& rows, const Holds& holds) {
    std::size_t name_width = 5, pattern_width = 7;
    for (const auto& g : rows) {
        name_width = std::max(name_width, g.name.size());
        pattern_width = std::max(pattern_width, g.pattern.size());
    }
    const auto line = [&](const std::string& name, const std::string& pattern, const std::string& behind,
                          const std::string& oldest, const std::string& flight, const std::string& retries,
                          const std::string& dead, const std::string& held, const std::string& settings) {
        std::cout << std::left << std::setw(static_cast<int>(name_width) + 2) << name
                  << std::setw(static_cast<int>(pattern_width) + 2) << pattern << std::right << std::setw(10) << behind
                  << std::setw(8) << oldest << std::setw(10) << flight << std::setw(9) << retries << std::setw(6)
                  << dead << std::setw(6) << held << "  " << settings << "\n";
    };
    line("GROUP", "PATTERN", "BEHIND", "OLDEST", "IN FLIGHT", "RETRIES", "DEAD", "HELD", "SETTINGS");
    for (const auto& g : rows)
        line(g.name, g.pattern, std::to_string(g.events_behind), age(g.oldest_unprocessed_seconds),
             std::to_string(g.batches_in_flight), std::to_string(g.retries_waiting), std::to_string(g.dead_letters),
             std::to_string(holds_of(holds, g.name).size()),
             "lease=" + std::to_string(g.lease_ms) + "ms max-deliveries=" + std::to_string(g.max_deliveries) +
                 (g.ordered ? " ordered" : "") + (g.lanes > 1 ? " lanes=" + std::to_string(g.lanes) : ""));
    for (const auto& g : rows)
        if (g.unheld_lanes > 0) warn_unheld(g.name, g.unheld_lanes, g.lanes);
    if (rows.empty()) std::cout << "(no consumer groups: create one with `tributary group create NAME`)\n";
}

/// Runs `work` against the group administration of a fresh session.
template <typename Work>
int with_admin(const GlobalOptions& global, Work work) {
    postgres::PostgresSession session(global.database_url());
    postgres::PostgresGroupAdmin admin(session);
    return work(admin);
}

struct CreateOptions {
    postgres::GroupSpec spec;
    std::string lease = "30s";
};

void add_create(CLI::App& group, const GlobalOptions& global, Action& action) {
    auto* cmd = group.add_subcommand("create", "Create a consumer group over the sources matching a pattern");
    auto options = std::make_shared<CreateOptions>();
    cmd->add_option("NAME", options->spec.name, "unique name ([A-Za-z0-9._-]{1,100})")->required();
    cmd->add_option("--pattern", options->spec.pattern,
                    "source names: '*' is one dot-separated segment, a final '>' one or more; '>' alone is all")
        ->capture_default_str();
    cmd->add_option("--from", options->spec.from,
                    "beginning, end (only events committed from now on), or a timestamp (events loaded since)")
        ->capture_default_str();
    cmd->add_option("--max-deliveries", options->spec.max_deliveries,
                    "deliveries of an event before it goes to the dead letters")
        ->capture_default_str()
        ->check(decimal_in(1, 1000000));
    cmd->add_option("--lease", options->lease, "how long a consumer holds a batch without a heartbeat, e.g. 30s")
        ->capture_default_str()
        ->check(duration_value());
    cmd->add_flag("--ordered", options->spec.ordered, "keep per-source order: one batch per source in flight");
    cmd->add_option("--lanes", options->spec.lanes,
                    "shares of the sources, each read by one consumer at a time (source id % lanes); 1: one "
                    "cursor for the whole group")
        ->capture_default_str()
        ->check(decimal_in(1, 256));
    cmd->callback([&global, &action, options] {
        action = [&global, options] {
            check_group_name(options->spec.name);
            options->spec.lease = interval_of(options->lease);
            return with_admin(global, [&](postgres::PostgresGroupAdmin& admin) {
                const int id = naming_the_flag({{"invalid pattern", "--pattern"}, {"invalid position", "--from"}},
                                               [&] { return admin.create(options->spec); });
                std::cout << "created group " << options->spec.name << " (id " << id << ")\n";
                return 0;
            });
        };
    });
}

void add_list(CLI::App& group, const GlobalOptions& global, Action& action) {
    auto* cmd = group.add_subcommand("list", "Groups with their lag, batches in flight, retries and dead letters");
    auto json = std::make_shared<bool>(false);
    cmd->add_flag("--json", *json, "machine-readable output");
    cmd->callback([&global, &action, json] {
        action = [&global, json] {
            postgres::PostgresSession session(global.database_url());
            const auto rows = postgres::PostgresGroupAdmin(session).status();
            const auto holds = retention_holds(session, global.database_url());
            if (*json) print_json(rows, holds);
            else print_table(rows, holds);
            return 0;
        };
    });
}

void print_lanes(const std::string& group, const std::vector<postgres::LaneStatus>& lanes, bool json) {
    if (json) {
        auto all = nlohmann::json::array();
        for (const auto& l : lanes)
            all.push_back(
                {{"lane", l.lane},
                 {"holder", l.holder ? nlohmann::json(*l.holder) : nlohmann::json()},
                 {"events_behind", l.events_behind},
                 {"oldest_unprocessed_seconds",
                  l.oldest_unprocessed_seconds ? nlohmann::json(*l.oldest_unprocessed_seconds) : nlohmann::json()},
                 {"batches_in_flight", l.batches_in_flight},
                 {"retries_waiting", l.retries_waiting}});
        std::cout << all.dump(2) << "\n";
        return;
    }
    if (lanes.empty()) {
        std::cout << "(group " << group << " has one lane: see `tributary group list`)\n";
        return;
    }
    std::cout << std::left << std::setw(6) << "LANE" << std::setw(24) << "HOLDER" << std::right << std::setw(10)
              << "BEHIND" << std::setw(8) << "OLDEST" << std::setw(10) << "IN FLIGHT" << std::setw(9) << "RETRIES"
              << "\n";
    int unheld = 0;
    for (const auto& l : lanes) {
        unheld += !l.holder;
        std::cout << std::left << std::setw(6) << l.lane << std::setw(24) << l.holder.value_or("(nobody)") << std::right
                  << std::setw(10) << l.events_behind << std::setw(8) << age(l.oldest_unprocessed_seconds)
                  << std::setw(10) << l.batches_in_flight << std::setw(9) << l.retries_waiting << "\n";
    }
    if (unheld > 0) warn_unheld(group, unheld, static_cast<int>(lanes.size()));
}

void add_lanes(CLI::App& group, const GlobalOptions& global, Action& action) {
    auto* cmd = group.add_subcommand("lanes", "A group's lanes: holder, lag, in flight and retries per lane");
    auto name = std::make_shared<std::string>();
    auto json = std::make_shared<bool>(false);
    cmd->add_option("NAME", *name, "group name")->required();
    cmd->add_flag("--json", *json, "machine-readable output");
    cmd->callback([&global, &action, name, json] {
        action = [&global, name, json] {
            return with_admin(global, [&](postgres::PostgresGroupAdmin& admin) {
                print_lanes(*name, admin.lanes(*name), *json);
                return 0;
            });
        };
    });
}

void add_reset(CLI::App& group, const GlobalOptions& global, Action& action) {
    auto* cmd = group.add_subcommand("reset", "Move a group's position; drops its batches in flight and retries");
    auto name = std::make_shared<std::string>();
    auto to = std::make_shared<std::string>();
    cmd->add_option("NAME", *name, "group name")->required();
    cmd->add_option("--to", *to, "beginning, end, or a timestamp")->required();
    cmd->callback([&global, &action, name, to] {
        action = [&global, name, to] {
            return with_admin(global, [&](postgres::PostgresGroupAdmin& admin) {
                naming_the_flag({{"invalid position", "--to"}}, [&] { admin.reset(*name, *to); });
                std::cout << "reset group " << *name << " to " << *to << "\n";
                return 0;
            });
        };
    });
}

void add_delete(CLI::App& group, const GlobalOptions& global, Action& action) {
    auto* cmd = group.add_subcommand("delete", "Delete a group with its batches, retries and dead letters");
    auto name = std::make_shared<std::string>();
    cmd->add_option("NAME", *name, "group name")->required();
    cmd->callback([&global, &action, name] {
        action = [&global, name] {
            return with_admin(global, [&](postgres::PostgresGroupAdmin& admin) {
                if (!admin.remove(*name))
                    throw std::runtime_error("no consumer group named '" + *name + "' (see `tributary group list`)");
                std::cout << "deleted group " << *name << "\n";
                return 0;
            });
        };
    });
}

}  // namespace

void add_group_commands(CLI::App& app, const GlobalOptions& global, Action& action) {
    auto* group = app.add_subcommand("group", "Create and manage consumer groups");
    group->require_subcommand(1);
    add_create(*group, global, action);
    add_list(*group, global, action);
    add_lanes(*group, global, action);
    add_reset(*group, global, action);
    add_delete(*group, global, action);
}

}  // namespace tributary::cli
