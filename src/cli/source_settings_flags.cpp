#include "source_settings_flags.h"

#include <algorithm>
#include <limits>
#include <stdexcept>

#include "flag_checks.h"
#include "postgres/source_reading.h"
#include "usage_error.h"

namespace tributary::cli {

namespace {

/// The flags that stand for `stored`'s settings: what `source add` would
/// have been given to register it as it is now. Keep in step with
/// ReadingFlags::apply_to (a setting it fills must be read back here):
/// edited_settings() refuses to edit a source whose settings do not come
/// back unchanged, rather than drop one.
void fill_from(const Source& stored, bool style_changes, SourceSettingsFlags& f) {
    postgres::SourceSpec& spec = f.spec;
    spec.url = stored.endpoint.url;
    spec.headers = stored.endpoint.headers;
    spec.interval_ms = static_cast<int>(stored.interval.count());
    spec.batch_size = stored.batch_size;
    spec.timeout_ms = static_cast<int>(stored.endpoint.timeout.count());

    ReadingFlags& r = f.reading;
    const RecordLayout& layout = stored.layout;
    r.records_given = layout.records.has_value();
    r.records = layout.records.value_or("");
    r.keys = layout.key;
    r.payload_given = layout.payload.has_value();
    r.payload = layout.payload.value_or("");
    r.newest_first = layout.newest_first;

    const Paging& paging = stored.paging;
    r.paginate = to_string(paging.style);
    r.limit_param = paging.limit_param;
    for (const auto& [name, value] : paging.params) r.params.push_back(name + "=" + value);
    // A new style starts from its own defaults for what belongs to a style.
    if (!style_changes) {
        r.cursor_param_given = paging.cursor_param != default_cursor_param(paging.style);
        if (r.cursor_param_given) r.cursor_param = paging.cursor_param;
        r.next = paging.next;
        r.has_more = paging.has_more;
        r.end_of_stream = paging.end_of_stream;
        r.time_field = paging.time_field;
        if (paging.lookback.count() != 0) r.lookback = std::to_string(paging.lookback.count()) + "s";
        r.first_page = paging.first_page;
        r.allowed_hosts = paging.allowed_hosts;
        r.inclusive = paging.inclusive;
    }

    const EnvAuth& auth = stored.endpoint.auth;
    r.bearer_env = auth.bearer;
    if (!auth.basic_user.empty()) r.basic_env = auth.basic_user + ":" + auth.basic_password;
    for (const auto& [name, variable] : auth.headers) r.header_env.push_back(name + ": " + variable);
    for (const auto& [name, variable] : auth.query) r.query_env.push_back(name + "=" + variable);
    if (auth.oauth2) {
        r.oauth2_token_url = auth.oauth2->token_url;
        r.client_id_env = auth.oauth2->client_id;
        r.client_secret_env = auth.oauth2->client_secret;
        r.scope = auth.oauth2->scope;
    }
}

/// The settings `flags` stand for, as `source add` checks and stores them.
postgres::SourceSpec applied(const SourceSettingsFlags& flags) {
    postgres::SourceSpec spec = flags.spec;
    flags.reading.apply_to(spec);
    return spec;
}

bool same_settings(const postgres::SourceSpec& spec, const Source& stored) {
    return spec.url == stored.endpoint.url && spec.headers == stored.endpoint.headers &&
           spec.interval_ms == stored.interval.count() && spec.batch_size == stored.batch_size &&
           spec.timeout_ms == stored.endpoint.timeout.count() &&
           postgres::reading_json(spec.layout, spec.paging, spec.auth) ==
               postgres::reading_json(stored.layout, stored.paging, stored.endpoint.auth);
}

/// A list flag given once with an empty value ("--header ''") empties the
/// list: each given list replaces the stored one whole.
void empty_if_cleared(std::vector<std::string>& list) {
    if (list.size() == 1 && list.front().empty()) list.clear();
}

/// `command`'s given flags as arguments for CLI::App::parse (which takes
/// them last first).
std::vector<std::string> replayed_arguments(const CLI::App& command, const std::vector<std::string>& names) {
    std::vector<std::string> args;
    for (const auto& name : names) {
        const CLI::Option* option = command.get_option(name);
        if (option->get_expected_min() == 0) {  // a flag: true, or the value given (--newest-first=false)
            args.push_back(name + "=" + (option->results().empty() ? "true" : option->results().back()));
            continue;
        }
        for (const auto& value : option->results()) {
            args.push_back(name);
            args.push_back(value);
        }
    }
    std::reverse(args.begin(), args.end());
    return args;
}

}  // namespace

void SourceSettingsFlags::declare(CLI::App& command) {
    command.add_option("--url", spec.url, "events endpoint; after_id and limit are appended");
    command.add_option("--interval-ms", spec.interval_ms, "minimum pause between two requests")
        ->capture_default_str()
        ->check(decimal_in(1, 86400000));
    command.add_option("--batch-size", spec.batch_size, "events per request (limit)")
        ->capture_default_str()
        ->check(decimal_in(1, 10000));
    command.add_option("--after-id", spec.after_id, "start after this id")
        ->capture_default_str()
        ->check(decimal_in(0, std::numeric_limits<std::int64_t>::max()));
    command.add_option("--header", spec.headers, "request header \"Name: value\" (repeatable; stored, never logged)");
    command.add_option("--timeout-ms", spec.timeout_ms, "whole-request timeout")
        ->capture_default_str()
        ->check(decimal_in(1, 3600000));
    reading.declare(command);
}

std::vector<std::string> given_flags(const CLI::App& command, const std::vector<std::string>& except) {
    std::vector<std::string> names;
    for (const CLI::Option* option : command.get_options()) {
        if (option->count() == 0 || option->get_lnames().empty()) continue;
        const std::string name = "--" + option->get_lnames().front();
        if (std::find(except.begin(), except.end(), name) == except.end()) names.push_back(name);
    }
    return names;
}

postgres::SourceSpec edited_settings(const Source& stored, const CLI::App& edit) {
    if (!stored.misconfigured.empty()) throw std::runtime_error(stored.misconfigured);
    SourceSettingsFlags as_stored;
    fill_from(stored, false, as_stored);
    if (!same_settings(applied(as_stored), stored))
        throw std::runtime_error("source " + stored.name +
                                 " has settings this tributary cannot carry over unchanged (a newer version wrote "
                                 "them): edit it with that version");

    const auto given = given_flags(edit, {"--rewind-to", "--check", "--json", "--help"});
    for (const char* initial : {"--after-id", "--start"})
        if (std::find(given.begin(), given.end(), initial) != given.end())
            throw UsageError(std::string(initial) +
                             " sets a new source's first cursor: to move an existing one, use --rewind-to");
    const bool style_changes = std::find(given.begin(), given.end(), "--paginate") != given.end();
    SourceSettingsFlags merged;
    fill_from(stored, style_changes, merged);
    CLI::App replay;
    merged.declare(replay);
    auto args = replayed_arguments(edit, given);
    replay.parse(args);
    for (auto* list : {&merged.spec.headers, &merged.reading.keys, &merged.reading.params,
                       &merged.reading.allowed_hosts, &merged.reading.header_env, &merged.reading.query_env})
        empty_if_cleared(*list);
    merged.spec.name = stored.name;
    return applied(merged);
}

}  // namespace tributary::cli
