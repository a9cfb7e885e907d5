#include <iomanip>
#include <iostream>

#include <nlohmann/json.hpp>

#include "byte_size.h"
#include "command.h"
#include "duration.h"
#include "flag_checks.h"
#include "nullable_json.h"
#include "postgres/postgres_retention.h"
#include "postgres/postgres_session.h"
#include "usage_error.h"

namespace tributary::cli {

namespace {

/// Runs `work` against retention through a fresh session.
template <typename Work>
int with_retention(const GlobalOptions& global, Work work) {
    postgres::PostgresSession session(global.database_url());
    postgres::PostgresRetention retention(session, global.database_url());
    return work(retention);
}

std::string shown_keep(const std::optional<std::int64_t>& ms) {
    if (!ms) return "-";
    const std::int64_t s = *ms / 1000;
    if (s % 86400 == 0) return std::to_string(s / 86400) + "d";
    if (s % 3600 == 0) return std::to_string(s / 3600) + "h";
    if (s % 60 == 0) return std::to_string(s / 60) + "m";
    return std::to_string(s) + "s";
}

/// A duration as parse_duration reads it, or whole days ("30d"): retention
/// is counted in days far more often than in hours. A refusal names --keep.
std::int64_t keep_ms(const std::string& text) {
    if (text.size() > 1 && text.size() < 8 && text.back() == 'd' &&
        text.find_first_not_of("0123456789") == text.size() - 1) {
        const std::int64_t days = std::stoll(text.substr(0, text.size() - 1));
        if (days > 0) return days * 86400000LL;
    }
    try {
        return parse_duration(text).count();
    } catch (const UsageError&) {
        throw UsageError("--keep: invalid duration '" + text +
                         "': use a positive number of days (d), hours (h), "
                         "minutes (m) or seconds (s), e.g. 30d");
    }
}

/// --max-size, as parse_byte_size reads it; a refusal names the flag.
std::int64_t max_bytes(const std::string& text) {
    try {
        return parse_byte_size(text);
    } catch (const UsageError& e) {
        throw UsageError(std::string("--max-size: ") + e.what());
    }
}

struct SetOptions {
    std::string pattern = ">";
    std::string keep;
    std::string max_size;
    bool drop_unconsumed = false;
    bool archive = false;
};

void add_set(CLI::App& retention, const GlobalOptions& global, Action& action) {
    auto* cmd = retention.add_subcommand("set", "Set how long (or up to what log size) a pattern's events are kept");
    auto options = std::make_shared<SetOptions>();
    cmd->add_option("PATTERN", options->pattern,
                    "source names as groups use them; '>' (the default) is the global policy; the most specific "
                    "matching pattern is a source's policy")
        ->capture_default_str();
    cmd->add_option("--keep", options->keep, "keep events this long after their partition ended, e.g. 30d, 12h");
    cmd->add_option("--max-size", options->max_size,
                    "drop the oldest partitions while the log is larger than this, e.g. 500GB");
    cmd->add_flag("--drop-unconsumed", options->drop_unconsumed,
                  "drop even what a consumer group has not consumed yet (logged with the groups)");
    cmd->add_flag("--archive", options->archive,
                  "send each leaving partition to the maintainer's --archive-command first; never drop unarchived");
    cmd->callback([&global, &action, options] {
        action = [&global, options] {
            postgres::RetentionPolicy policy;
            policy.pattern = options->pattern;
            if (!options->keep.empty()) policy.keep_ms = keep_ms(options->keep);
            if (!options->max_size.empty()) policy.max_bytes = max_bytes(options->max_size);
            policy.drop_unconsumed = options->drop_unconsumed;
            policy.archive = options->archive;
            return with_retention(global, [&](postgres::PostgresRetention& retention) {
                const bool created = retention.set_policy(policy);
                std::cout << (created ? "created" : "replaced") << " retention policy " << policy.pattern << "\n";
                return 0;
            });
        };
    });
}

void print_policies(const std::vector<postgres::RetentionPolicy>& rows, bool json) {
    if (json) {
        auto all = nlohmann::ordered_json::array();
        for (const auto& p : rows)
            all.push_back({{"pattern", p.pattern},
                           {"keep_ms", nullable_json(p.keep_ms)},
                           {"max_bytes", nullable_json(p.max_bytes)},
                           {"drop_unconsumed", p.drop_unconsumed},
                           {"archive", p.archive}});
        std::cout << all.dump(2) << "\n";
        return;
    }
    std::size_t width = 7;
    for (const auto& p : rows) width = std::max(width, p.pattern.size());
    std::cout << std::left << std::setw(static_cast<int>(width) + 2) << "PATTERN" << std::setw(8) << "KEEP"
              << std::setw(16) << "MAX BYTES"
              << "FLAGS\n";
    for (const auto& p : rows)
        std::cout << std::setw(static_cast<int>(width) + 2) << p.pattern << std::setw(8) << shown_keep(p.keep_ms)
                  << std::setw(16) << (p.max_bytes ? std::to_string(*p.max_bytes) : "-")
                  << (p.drop_unconsumed ? "drop-unconsumed " : "") << (p.archive ? "archive" : "") << "\n";
    if (rows.empty()) std::cout << "(no retention policy: every event is kept forever)\n";
}

void add_list(CLI::App& retention, const GlobalOptions& global, Action& action) {
    auto* cmd = retention.add_subcommand("list", "The retention policies");
    auto json = std::make_shared<bool>(false);
    cmd->add_flag("--json", *json, "machine-readable output");
    cmd->callback([&global, &action, json] {
        action = [&global, json] {
            return with_retention(global, [&](postgres::PostgresRetention& retention) {
                print_policies(retention.policies(), *json);
                return 0;
            });
        };
    });
}

void add_remove(CLI::App& retention, const GlobalOptions& global, Action& action) {
    auto* cmd = retention.add_subcommand("remove", "Remove a pattern's retention policy");
    auto pattern = std::make_shared<std::string>();
    cmd->add_option("PATTERN", *pattern, "the policy's pattern")->required();
    cmd->callback([&global, &action, pattern] {
        action = [&global, pattern] {
            return with_retention(global, [&](postgres::PostgresRetention& retention) {
                if (!retention.remove_policy(*pattern))
                    throw std::runtime_error("no retention policy for '" + *pattern +
                                             "' (see `tributary retention list`)");
                std::cout << "removed retention policy " << *pattern << "\n";
                return 0;
            });
        };
    });
}

}  // namespace

void add_retention_commands(CLI::App& app, const GlobalOptions& global, Action& action) {
    auto* retention = app.add_subcommand("retention", "Set how long the log keeps events");
    retention->require_subcommand(1);
    add_set(*retention, global, action);
    add_list(*retention, global, action);
    add_remove(*retention, global, action);
}

}  // namespace tributary::cli
