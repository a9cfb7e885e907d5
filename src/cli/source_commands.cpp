#include <iostream>

#include <nlohmann/json.hpp>

#include "command.h"
#include "core/names.h"
#include "exit_codes.h"
#include "flag_checks.h"
#include "http/page_paths.h"
#include "http/shown_url.h"
#include "postgres/postgres_session.h"
#include "postgres/postgres_source_registry.h"
#include "postgres/source_reading.h"
#include "postgres/source_receiving.h"
#include "push_flags.h"
#include "reading_flags.h"
#include "source_check.h"
#include "source_edit_commands.h"
#include "source_settings_flags.h"
#include "usage_error.h"

namespace tributary::cli {

namespace {

void check_name(const std::string& name) {
    if (!is_valid_name(name)) throw UsageError("invalid source name '" + name + "': use 1 to 100 of A-Z a-z 0-9 . _ -");
}

void check_spec(const postgres::SourceSpec& spec) {
    check_name(spec.name);
    // The URL is not quoted back: it may hold credentials, or the very bytes
    // that are wrong with it.
    if (const auto problem = url_problem(spec.url); !problem.empty()) throw UsageError("invalid --url: " + problem);
    // The reader's own checks, so that a layout it cannot read is refused
    // now rather than at the first page.
    Source reading;
    reading.layout = spec.layout;
    reading.paging = spec.paging;
    PagePaths paths;
    if (const auto problem = compile_page_paths(reading, paths)) throw UsageError(*problem);
    for (const auto& header : spec.headers) {
        const auto colon = header.find(':');
        if (colon == std::string::npos || colon == 0 || header.find_first_of("\r\n") != std::string::npos)
            throw UsageError("invalid --header: expected \"Name: value\" on one line");
    }
}

/// Header names stay visible; values may be credentials.
std::vector<std::string> redacted(const std::vector<std::string>& headers) {
    std::vector<std::string> out;
    for (const auto& h : headers) out.push_back(h.substr(0, h.find(':')) + ": <redacted>");
    return out;
}

/// A pushed or published source in `source list`: no URL or timing; how it
/// is authenticated (variable names only), keyed, or who may publish.
nlohmann::json unasked_json(const postgres::SourceRecord& r) {
    nlohmann::json j = {
        {"id", r.source.id}, {"name", r.source.name}, {"kind", postgres::kind_name(r.kind)}, {"enabled", r.enabled}};
    if (r.kind == postgres::SourceKind::published) j["publishers"] = r.publishers;
    else if (!r.push.misconfigured.empty()) j["misconfigured"] = r.push.misconfigured;
    else j["receiving"] = nlohmann::json::parse(postgres::receiving_json(r.push));
    return j;
}

std::string unasked_line(const postgres::SourceRecord& r) {
    std::string line = r.source.name + (r.enabled ? "" : " (paused)") + "  " + postgres::kind_name(r.kind);
    if (r.kind == postgres::SourceKind::published) {
        line += "  publishers=";
        for (std::size_t i = 0; i < r.publishers.size(); ++i) line += (i ? "," : "") + r.publishers[i];
        return line;
    }
    if (!r.push.misconfigured.empty()) return line + "  misconfigured: " + r.push.misconfigured;
    line += "  auth=" + r.push.auth.name + (r.push.auth.variable.empty() ? "" : " (" + r.push.auth.variable + ")");
    line += "  key=";
    for (std::size_t i = 0; i < r.push.key.size(); ++i) line += (i ? "," : "") + r.push.key[i];
    return line + " key-header=" + r.push.key_header + " max-body=" + std::to_string(r.push.max_body_bytes);
}

void print_sources(const std::vector<postgres::SourceRecord>& records, bool json) {
    if (json) {
        auto all = nlohmann::json::array();
        for (const auto& r : records)
            if (r.kind != postgres::SourceKind::pulled) all.push_back(unasked_json(r));
            else
                all.push_back({{"id", r.source.id},
                               {"name", r.source.name},
                               {"url", shown_url(r.source.endpoint.url)},
                               {"headers", redacted(r.source.endpoint.headers)},
                               {"interval_ms", r.source.interval.count()},
                               {"batch_size", r.source.batch_size},
                               {"timeout_ms", r.source.endpoint.timeout.count()},
                               {"reading", nlohmann::json::parse(postgres::reading_json(
                                               r.source.layout, r.source.paging, r.source.endpoint.auth))},
                               {"enabled", r.enabled}});
        std::cout << all.dump(2) << "\n";
        return;
    }
    for (const auto& r : records)
        if (r.kind != postgres::SourceKind::pulled) std::cout << unasked_line(r) << "\n";
        else
            std::cout << r.source.name << (r.enabled ? "" : " (paused)") << "  " << shown_url(r.source.endpoint.url)
                      << "  interval=" << r.source.interval.count() << "ms batch=" << r.source.batch_size
                      << " timeout=" << r.source.endpoint.timeout.count() << "ms"
                      << (r.source.keyed_by_id() ? "" : std::string(" paginate=") + to_string(r.source.paging.style))
                      << (r.source.endpoint.headers.empty()
                              ? ""
                              : " headers=" + std::to_string(r.source.endpoint.headers.size()))
                      << "\n";
}

/// Runs `work` against the registry of a fresh session.
template <typename Work>
int with_registry(const GlobalOptions& global, Work work) {
    postgres::PostgresSession session(global.database_url());
    postgres::PostgresSourceRegistry registry(session);
    work(registry);
    return 0;
}

void add_switch(CLI::App& source, const char* name, const char* help, bool enabled, const GlobalOptions& global,
                Action& action) {
    auto* cmd = source.add_subcommand(name, help);
    auto target = std::make_shared<std::string>();
    cmd->add_option("NAME", *target, "source name")->required();
    cmd->callback([&global, &action, target, enabled, name] {
        action = [&global, target, enabled, name] {
            return with_registry(global, [&](postgres::PostgresSourceRegistry& r) {
                r.set_enabled(*target, enabled);
                std::cout << name << "d " << *target << "\n";
            });
        };
    });
}

}  // namespace

void check_source_name(const std::string& name) { check_name(name); }
void check_source_spec(const postgres::SourceSpec& spec) { check_spec(spec); }

void add_source_commands(CLI::App& app, const GlobalOptions& global, Action& action) {
    auto* source = app.add_subcommand("source", "Register and manage sources");
    source->require_subcommand(1);

    auto* add = source->add_subcommand("add", "Register a source: asked over HTTP (--url), pushed or published");
    auto settings = std::make_shared<SourceSettingsFlags>();
    auto* spec = &settings->spec;
    auto* reading = &settings->reading;
    add->add_option("NAME", spec->name, "unique name, e.g. orders.eu ([A-Za-z0-9._-]{1,100})")->required();
    settings->declare(*add);
    auto push = std::make_shared<PushFlags>();
    push->declare(*add);
    auto add_check = std::make_shared<bool>(false);
    add->add_flag("--check", *add_check,
                  "ask the source first (1-2 requests, as `source check`); register nothing if the page would fail");
    add->callback([&global, &action, settings, spec, reading, push, add, add_check] {
        action = [&global, settings, spec, reading, push, add, add_check] {
            if (push->any()) {
                push->apply_to(*spec, reading->keys, *add);
                check_name(spec->name);
                if (*add_check) print_nothing_to_check(spec->name, spec->kind, false);
                return with_registry(global, [&](postgres::PostgresSourceRegistry& r) {
                    const int id = r.add(*spec);
                    std::cout << "added " << (push->push ? "pushed" : "published") << " source " << spec->name
                              << " (id " << id << ")\n";
                });
            }
            if (spec->url.empty()) throw UsageError("source add needs --url URL, --push or --published");
            reading->apply_to(*spec);
            if (spec->after_id != 0 && spec->paging.style != PagingStyle::after_id)
                throw UsageError("--after-id is for --paginate after-id; other styles start at --start");
            check_spec(*spec);
            if (*add_check) {
                // Before the registry: a name taken is then found after the
                // requests, but nothing is written for a page that fails.
                const auto source = source_of(*spec);
                const auto start = start_of(*spec);
                if (!print_check(source, start, check_pages(source, start), false)) {
                    std::cerr << "tributary: source " << spec->name << " not added: its first page would fail\n";
                    return static_cast<int>(exit_failure);
                }
            }
            return with_registry(global, [&](postgres::PostgresSourceRegistry& r) {
                const int id = r.add(*spec);
                std::cout << "added source " << spec->name << " (id " << id << ")\n";
            });
        };
    });

    auto* list = source->add_subcommand("list", "List registered sources (header values redacted)");
    auto json = std::make_shared<bool>(false);
    list->add_flag("--json", *json, "machine-readable output");
    list->callback([&global, &action, json] {
        action = [&global, json] {
            return with_registry(global, [&](postgres::PostgresSourceRegistry& r) { print_sources(r.list(), *json); });
        };
    });

    auto* rewind = source->add_subcommand(
        "rewind", "Move a source's cursor back, to read again from there (what is stored is skipped by key)");
    auto rewind_name = std::make_shared<std::string>();
    auto rewind_to = std::make_shared<std::string>();
    rewind->add_option("NAME", *rewind_name, "source name")->required();
    rewind
        ->add_option("--to", *rewind_to,
                     "the cursor to read from: an id (after-id) or a position (key, token, "
                     "URL, time, page, offset; \"\" = the start)")
        ->required();
    rewind->callback([&global, &action, rewind_name, rewind_to] {
        action = [&global, rewind_name, rewind_to] {
            check_name(*rewind_name);
            return with_registry(global, [&](postgres::PostgresSourceRegistry& r) {
                const auto from = r.rewind(*rewind_name, *rewind_to);
                // A next link's query may echo a credential: shown as status shows it.
                const auto shown = [](const std::string& position) {
                    return position.rfind("http", 0) == 0 ? shown_url(position) : position;
                };
                std::cout << "rewound " << *rewind_name << " from " << shown(from) << " to " << shown(*rewind_to)
                          << "\n";
            });
        };
    });

    add_source_check_command(*source, global, action);
    add_source_edit_command(*source, global, action);

    add_switch(*source, "pause", "Stop loading a source (its cursor is kept)", false, global, action);
    add_switch(*source, "resume", "Resume loading a paused source", true, global, action);

    auto* remove = source->add_subcommand("remove", "Remove a source that has stored no events");
    auto target = std::make_shared<std::string>();
    remove->add_option("NAME", *target, "source name")->required();
    remove->callback([&global, &action, target] {
        action = [&global, target] {
            return with_registry(global, [&](postgres::PostgresSourceRegistry& r) {
                r.remove(*target);
                std::cout << "removed " << *target << "\n";
            });
        };
    });
}

}  // namespace tributary::cli
