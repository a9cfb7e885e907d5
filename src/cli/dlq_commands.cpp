#include <algorithm>
#include <iomanip>
#include <iostream>
#include <limits>

#include <nlohmann/json.hpp>

#include "command.h"
#include "flag_checks.h"
#include "nullable_json.h"
#include "postgres/postgres_group_admin.h"
#include "postgres/postgres_session.h"
#include "raw_json.h"
#include "usage_error.h"

namespace tributary::cli {

namespace {

std::string first_line(const std::string& text) {
    const auto end = text.find('\n');
    return end == std::string::npos ? text : text.substr(0, end) + " ...";
}

void print_json(const std::vector<postgres::DeadLetter>& rows) {
    std::cout << "[";
    for (std::size_t i = 0; i < rows.size(); ++i) {
        const auto& d = rows[i];
        const nlohmann::ordered_json fields = {{"seq", d.seq},
                                               {"source", d.source},
                                               {"event_id", nullable_json(d.event_id)},
                                               {"event_key", d.event_key},
                                               {"deliveries", d.deliveries},
                                               {"last_error", d.last_error},
                                               {"failed_at", d.failed_at}};
        std::cout << (i ? ",\n " : "\n ") << with_raw_member(fields, "payload", d.payload);
    }
    std::cout << (rows.empty() ? "]\n" : "\n]\n");
}

/// The key column: as wide as the longest key (text keys such as Stripe's
/// evt_... are longer than ids), at least as wide as an id's.
int key_width(const std::vector<postgres::DeadLetter>& rows) {
    std::size_t widest = 10;
    for (const auto& d : rows) widest = std::max(widest, d.event_key.size());
    return static_cast<int>(widest + 2);
}

void print_table(const std::vector<postgres::DeadLetter>& rows) {
    const int key = key_width(rows);
    std::cout << std::left << std::setw(12) << "SEQ" << std::setw(24) << "SOURCE" << std::setw(key) << "EVENT KEY"
              << std::setw(11) << "DELIVERIES" << std::setw(32) << "FAILED AT"
              << "LAST ERROR\n";
    for (const auto& d : rows)
        std::cout << std::left << std::setw(12) << d.seq << std::setw(24) << d.source << std::setw(key) << d.event_key
                  << std::setw(11) << d.deliveries << std::setw(32) << d.failed_at << first_line(d.last_error) << "\n";
}

struct ReplayOptions {
    std::string group;
    bool all = false;
    std::optional<std::int64_t> seq;
};

}  // namespace

void add_dlq_commands(CLI::App& app, const GlobalOptions& global, Action& action) {
    auto* dlq = app.add_subcommand("dlq", "A group's dead letters: events that failed max-deliveries times");
    dlq->require_subcommand(1);

    auto* list = dlq->add_subcommand("list", "List a group's dead letters");
    auto group = std::make_shared<std::string>();
    auto json = std::make_shared<bool>(false);
    list->add_option("GROUP", *group, "group name")->required();
    list->add_flag("--json", *json, "machine-readable output, payloads included");
    list->callback([&global, &action, group, json] {
        action = [&global, group, json] {
            postgres::PostgresSession session(global.database_url());
            postgres::PostgresGroupAdmin admin(session);
            const auto rows = admin.dead_letters(*group);
            if (*json) print_json(rows);
            else print_table(rows);
            return 0;
        };
    });

    auto* replay = dlq->add_subcommand("replay", "Give dead letters to the group again, as retries due now");
    auto options = std::make_shared<ReplayOptions>();
    replay->add_option("GROUP", options->group, "group name")->required();
    auto* all = replay->add_flag("--all", options->all, "every dead letter of the group");
    auto* seq = replay->add_option("--seq", options->seq, "the dead letter of this event (its seq)")
                    ->check(decimal_in(1, std::numeric_limits<std::int64_t>::max()));
    all->excludes(seq);
    replay->callback([&global, &action, options] {
        action = [&global, options] {
            if (!options->all && !options->seq) throw UsageError("dlq replay: say which: --all, or --seq N");
            postgres::PostgresSession session(global.database_url());
            postgres::PostgresGroupAdmin admin(session);
            const int replayed = admin.replay(options->group, options->seq);
            if (options->seq && replayed == 0)
                throw std::runtime_error("group " + options->group + " has no dead letter with seq " +
                                         std::to_string(*options->seq) + " (see `tributary dlq list " + options->group +
                                         "`)");
            std::cout << "replayed " << replayed << " dead letter" << (replayed == 1 ? "" : "s") << " of group "
                      << options->group << "\n";
            return 0;
        };
    });
}

}  // namespace tributary::cli
