#include "source_edit_commands.h"

#include <iostream>

#include "core/names.h"
#include "exit_codes.h"
#include "http/shown_url.h"
#include "postgres/postgres_session.h"
#include "postgres/postgres_source_registry.h"
#include "source_check.h"
#include "source_settings_flags.h"
#include "usage_error.h"

namespace tributary::cli {

namespace {

/// The registered source of that name; throws NameError when there is none.
postgres::SourceRecord find_source(postgres::PostgresSourceRegistry& registry, const std::string& name) {
    for (auto& record : registry.list())
        if (record.source.name == name) return std::move(record);
    throw postgres::PostgresSourceRegistry::NameError("no source named '" + name + "' (see `tributary source list`)");
}

}  // namespace

/// `source check NAME`: the next page or two the loader would ask for, and
/// what it would make of them, stored nowhere (docs/sources.md).
void add_source_check_command(CLI::App& source, const GlobalOptions& global, Action& action) {
    auto* check = source.add_subcommand(
        "check",
        "Ask a source for its next page or two as the loader would, and show what would be stored "
        "(nothing is): exit 1 when the page would fail");
    auto name = std::make_shared<std::string>();
    auto json = std::make_shared<bool>(false);
    check->add_option("NAME", *name, "source name")->required();
    check->add_flag("--json", *json, "machine-readable output");
    check->callback([&global, &action, name, json] {
        action = [&global, name, json] {
            check_source_name(*name);
            postgres::PostgresSession session(global.database_url());
            postgres::PostgresSourceRegistry registry(session);
            const auto record = find_source(registry, *name);
            if (record.kind != postgres::SourceKind::pulled) {
                print_nothing_to_check(*name, record.kind, *json);
                return static_cast<int>(exit_ok);
            }
            const auto start = registry.cursor(*name, record.source.keyed_by_id());
            if (!start) throw std::runtime_error("source '" + *name + "' has no cursor");
            return static_cast<int>(
                print_check(record.source, *start, check_pages(record.source, *start), *json) ? exit_ok : exit_failure);
        };
    });
}

/// `source edit NAME --flag ...`: the flags of `source add` given change
/// those settings (sql/api/86_source_edit.sql says which need a rewind).
void add_source_edit_command(CLI::App& source, const GlobalOptions& global, Action& action) {
    auto* edit =
        source.add_subcommand("edit",
                              "Change a pulled source's settings (the flags of `source add`; only those given change); "
                              "loaders take them at their next turn");
    auto name = std::make_shared<std::string>();
    auto settings = std::make_shared<SourceSettingsFlags>();
    auto rewind_to = std::make_shared<std::string>();
    auto check = std::make_shared<bool>(false);
    edit->add_option("NAME", *name, "source name")->required();
    settings->declare(*edit);
    // A flag not given keeps what is stored: `source add`'s defaults mean nothing here.
    for (CLI::Option* option : edit->get_options()) option->default_str("");
    auto* rewind_option = edit->add_option(
        "--rewind-to", *rewind_to,
        "move the cursor here with the change (an id for after-id, else a position; \"\" = the start): "
        "needed by changes to what the cursor means");
    edit->add_flag("--check", *check,
                   "ask the source with the new settings first (1-2 requests); change nothing if the page would fail");
    edit->callback([&global, &action, name, settings, rewind_to, rewind_option, check, edit] {
        action = [&global, name, rewind_to, rewind_option, check, edit] {
            check_source_name(*name);
            postgres::PostgresSession session(global.database_url());
            postgres::PostgresSourceRegistry registry(session);
            const auto record = find_source(registry, *name);
            if (record.kind != postgres::SourceKind::pulled)
                throw UsageError(std::string("source '") + *name + "' is " +
                                 (record.kind == postgres::SourceKind::pushed ? "pushed" : "published") +
                                 ": only a pulled source (--url) can be edited");
            auto spec = edited_settings(record.source, *edit);
            if (spec.url.empty()) throw UsageError("--url cannot be empty");
            check_source_spec(spec);
            std::optional<std::string> rewind;
            if (rewind_option->count() > 0) rewind = *rewind_to;
            if (*check) {
                const auto edited = source_of(spec);
                auto start = registry.cursor(*name, edited.keyed_by_id());
                if (rewind && !edited.keyed_by_id()) start = Cursor::at(*rewind);
                if (rewind && edited.keyed_by_id()) {
                    if (rewind->empty() || rewind->size() > 18 ||
                        rewind->find_first_not_of("0123456789") != std::string::npos)
                        throw UsageError("source '" + *name + "' is read by id: --rewind-to must be an id (0 or more)");
                    start = Cursor::at_id(std::stoll(*rewind));
                }
                if (start && !print_check(edited, *start, check_pages(edited, *start), false)) {
                    std::cerr << "tributary: source " << *name << " not changed: its next page would fail\n";
                    return static_cast<int>(exit_failure);
                }
            }
            const auto done = registry.edit(*name, spec, rewind);
            if (done.changed.empty()) {
                std::cout << "source " << *name << ": nothing to change\n";
                return static_cast<int>(exit_ok);
            }
            std::cout << "edited " << *name << ": ";
            for (std::size_t i = 0; i < done.changed.size(); ++i) std::cout << (i ? ", " : "") << done.changed[i];
            std::cout << " (revision " << done.revision << ")";
            if (done.rewound_from) {
                const auto shown = [](const std::string& p) {
                    return p.empty() ? std::string("\"\"") : p.rfind("http", 0) == 0 ? shown_url(p) : p;
                };
                std::cout << "; cursor rewound from " << shown(*done.rewound_from) << " to " << shown(*rewind);
            }
            std::cout << "\n";
            return static_cast<int>(exit_ok);
        };
    });
}

}  // namespace tributary::cli
