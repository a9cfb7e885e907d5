#include "reading_flags.h"

#include <tuple>

#include "duration.h"
#include "flag_checks.h"
#include "http/request_credentials.h"
#include "usage_error.h"

namespace tributary::cli {

namespace {

void check_pointer(const std::string& flag, const std::string& pointer) {
    if (const auto problem = pointer_problem(pointer); !problem.empty())
        throw UsageError("invalid " + flag + " '" + pointer + "': " + problem);
}

/// Query parameter names and values go into URLs: printable, no spaces or
/// controls (they are percent-encoded when sent).
void check_param_name(const std::string& flag, const std::string& name) {
    if (name.empty() || name.find_first_of(" \t\r\n&=#") != std::string::npos)
        throw UsageError("invalid " + flag + " '" + name + "': a query parameter name without spaces, '&', '=' or '#'");
}

/// NAME=VALUE, split at the first '='.
std::pair<std::string, std::string> split_pair(const std::string& flag, const std::string& text, char separator) {
    const auto at = text.find(separator);
    if (at == std::string::npos || at == 0)
        throw UsageError("invalid " + flag + " '" + text + "': expected NAME" + separator + "VALUE");
    return {text.substr(0, at), text.substr(at + 1)};
}

std::string trimmed(const std::string& text) {
    const auto first = text.find_first_not_of(' ');
    if (first == std::string::npos) return "";
    return text.substr(first, text.find_last_not_of(' ') - first + 1);
}

/// The credential flags as an EnvAuth. Only their syntax is read here; what
/// the fetcher needs of them (variable and header names, one Authorization
/// at most, an http(s) token URL) is env_auth_problem()'s to say.
EnvAuth auth_of(const ReadingFlags& f) {
    EnvAuth auth;
    auth.bearer = f.bearer_env;
    if (!f.basic_env.empty())
        std::tie(auth.basic_user, auth.basic_password) = split_pair("--basic-env", f.basic_env, ':');
    for (const auto& entry : f.header_env) {
        const auto [name, variable] = split_pair("--header-env", entry, ':');
        auth.headers.emplace_back(name, trimmed(variable));
    }
    for (const auto& entry : f.query_env) {
        const auto [name, variable] = split_pair("--query-env", entry, '=');
        check_param_name("--query-env", name);
        auth.query.emplace_back(name, variable);
    }
    const bool any_oauth2 = !f.oauth2_token_url.empty() || !f.client_id_env.empty() || !f.client_secret_env.empty();
    if (any_oauth2) {
        if (f.oauth2_token_url.empty() || f.client_id_env.empty() || f.client_secret_env.empty())
            throw UsageError("OAuth2 needs all of --oauth2-token-url, --client-id-env and --client-secret-env");
        if (const auto problem = url_problem(f.oauth2_token_url); !problem.empty())
            throw UsageError("invalid --oauth2-token-url: " + problem);
        auth.oauth2 = EnvAuth::OAuth2{f.oauth2_token_url, f.client_id_env, f.client_secret_env, f.scope};
    } else if (!f.scope.empty()) {
        throw UsageError("--scope is for OAuth2 (--oauth2-token-url)");
    }
    if (const auto problem = env_auth_problem(auth)) throw UsageError(*problem);
    return auth;
}

/// Flags that mean something for some styles only: refused elsewhere, so
/// that a typo in --paginate does not silently ignore them.
void check_style_flags(const ReadingFlags& f, PagingStyle style) {
    const auto only = [&](bool given, const char* flag, std::initializer_list<PagingStyle> styles) {
        if (!given) return;
        for (const auto s : styles)
            if (s == style) return;
        throw UsageError(std::string(flag) + " does not apply to --paginate " + to_string(style));
    };
    using S = PagingStyle;
    only(!f.next.empty(), "--next", {S::cursor, S::link, S::time});
    only(!f.has_more.empty(), "--has-more", {S::after_key, S::cursor, S::link, S::time, S::page, S::offset});
    only(!f.end_of_stream.empty(), "--end-of-stream", {S::time});
    only(!f.time_field.empty(), "--time-field", {S::time});
    only(!f.lookback.empty(), "--lookback", {S::time});
    only(f.first_page != 1, "--first-page", {S::page});
    only(!f.allowed_hosts.empty(), "--allow-redirect-host", {S::link});
    only(f.inclusive, "--inclusive", {S::after_id, S::after_key});
    only(f.cursor_param_given, "--cursor-param", {S::after_id, S::after_key, S::cursor, S::time, S::page, S::offset});
    only(!f.start.empty(), "--start", {S::after_key, S::cursor, S::link, S::time, S::page, S::offset});
    if (style == S::cursor && f.next.empty())
        throw UsageError("--paginate cursor needs --next POINTER (where the body gives the next token)");
    if (style == S::time && f.next.empty() && f.time_field.empty())
        throw UsageError("--paginate time needs --time-field POINTER (or --next POINTER for the next start time)");
    if (style == S::after_id && f.keys.size() > 1)
        throw UsageError("--paginate after-id takes one --key (an integer id); composite keys need another style");
}

}  // namespace

std::string pointer_problem(const std::string& pointer) {
    if (pointer.empty()) return "";
    if (pointer.front() != '/') return "a JSON pointer starts with '/' (or is empty for the whole value)";
    for (std::size_t i = 0; i < pointer.size(); ++i) {
        const auto byte = static_cast<unsigned char>(pointer[i]);
        if (byte < 0x20 || byte == 0x7f) return "control characters are not allowed";
        if (pointer[i] == '~' && (i + 1 == pointer.size() || (pointer[i + 1] != '0' && pointer[i + 1] != '1')))
            return "'~' must be written ~0 (and '/' in a name ~1)";
    }
    return "";
}

void ReadingFlags::declare(CLI::App& add) {
    add.add_option("--records", records,
                   "JSON pointer to the array of records (\"\" = the body); default: "
                   "tributary's protocol (\"events\" or a bare array)")
        ->each([this](const std::string&) { records_given = true; });
    add.add_option("--key", keys, "JSON pointer to a record's key (repeatable: a composite key); default /id");
    add.add_option("--payload", payload,
                   "JSON pointer to what is stored of a record; default the whole record "
                   "(/payload without --records)")
        ->each([this](const std::string&) { payload_given = true; });
    add.add_flag("--newest-first", newest_first,
                 "each page lists its records newest first (Stripe's ending_before, Slack): read it in reverse");
    add.add_option("--paginate", paginate, "after-id | after-key | cursor | link | time | page | offset")
        ->capture_default_str();
    add.add_option("--cursor-param", cursor_param, "query parameter that carries the cursor (default per style)")
        ->each([this](const std::string&) { cursor_param_given = true; });
    add.add_option("--limit-param", limit_param, "query parameter for the batch size (\"\" = none sent)")
        ->capture_default_str();
    add.add_option("--param", params, "fixed query parameter NAME=VALUE (repeatable)");
    add.add_option("--next", next, "JSON pointer to the next token (cursor), URL (link) or start time (time)");
    add.add_option("--has-more", has_more, "JSON pointer to a boolean: false = nothing more for now");
    add.add_option("--end-of-stream", end_of_stream, "JSON pointer to a boolean: true = nothing more (time)");
    add.add_option("--time-field", time_field, "JSON pointer to a record's timestamp (time)");
    add.add_option("--lookback", lookback, "time: re-ask this far before the watermark, e.g. 5m (default none)")
        ->check(duration_value());
    add.add_option("--first-page", first_page, "page: the number of the first page")
        ->capture_default_str()
        ->check(decimal_in(0, 1000000000));
    add.add_flag("--inclusive", inclusive,
                 "after-id, after-key: the cursor parameter is inclusive (id_gte, PostgREST's gte.): a page may "
                 "start with the last record stored");
    add.add_option("--allow-redirect-host", allowed_hosts, "link: a host next links may lead to (repeatable)");
    add.add_option("--start", start, "initial cursor of a style other than after-id (a key, token, URL, time...)");
    add.add_option("--bearer-env", bearer_env, "send Authorization: Bearer $VAR");
    add.add_option("--basic-env", basic_env, "send HTTP Basic auth from USERVAR:PASSVAR");
    add.add_option("--header-env", header_env, "send header \"Name: VAR\" with $VAR's value (repeatable)");
    add.add_option("--query-env", query_env, "send query parameter NAME=VAR with $VAR's value (repeatable)");
    add.add_option("--oauth2-token-url", oauth2_token_url, "OAuth2 client credentials: the token endpoint");
    add.add_option("--client-id-env", client_id_env, "OAuth2: variable holding the client id");
    add.add_option("--client-secret-env", client_secret_env, "OAuth2: variable holding the client secret");
    add.add_option("--scope", scope, "OAuth2: the scope asked for");
}

void ReadingFlags::apply_to(postgres::SourceSpec& spec) const {
    const auto style = paging_style_named(paginate);
    if (!style)
        throw UsageError("invalid --paginate '" + paginate +
                         "': use after-id, after-key, cursor, link, time, page or offset");
    check_style_flags(*this, *style);
    RecordLayout& layout = spec.layout;
    if (records_given) check_pointer("--records", *(layout.records = records));
    if (!keys.empty()) layout.key = keys;
    for (const auto& key : layout.key) check_pointer("--key", key);
    if (payload_given) check_pointer("--payload", *(layout.payload = payload));
    layout.newest_first = newest_first;
    Paging& paging = spec.paging;
    paging.style = *style;
    paging.cursor_param = cursor_param_given ? cursor_param : default_cursor_param(*style);
    if (paging.style != PagingStyle::link) check_param_name("--cursor-param", paging.cursor_param);
    paging.limit_param = limit_param;
    if (!limit_param.empty()) check_param_name("--limit-param", limit_param);
    for (const auto& entry : params) {
        auto pair = split_pair("--param", entry, '=');
        check_param_name("--param", pair.first);
        if (pair.second.find_first_of("\r\n") != std::string::npos)
            throw UsageError("invalid --param '" + pair.first + "': the value has a line break");
        paging.params.push_back(std::move(pair));
    }
    check_pointer("--next", paging.next = next);
    check_pointer("--has-more", paging.has_more = has_more);
    check_pointer("--end-of-stream", paging.end_of_stream = end_of_stream);
    check_pointer("--time-field", paging.time_field = time_field);
    if (!lookback.empty()) paging.lookback = std::chrono::duration_cast<std::chrono::seconds>(parse_duration(lookback));
    paging.first_page = first_page;
    paging.inclusive = inclusive;
    if (inclusive && spec.batch_size < 2)
        throw UsageError(
            "--inclusive needs --batch-size 2 or more: a page of one record would hold only the "
            "cursor's own");
    for (const auto& host : allowed_hosts)
        if (host.empty() || host.find_first_of("/:@ \t\r\n?#") != std::string::npos)
            throw UsageError("invalid --allow-redirect-host '" + host + "': a host name, e.g. api.example.com");
    paging.allowed_hosts = allowed_hosts;
    if (start.size() > 8192) throw UsageError("--start is longer than 8192 bytes");
    spec.start = start;
    spec.auth = auth_of(*this);
}

}  // namespace tributary::cli
