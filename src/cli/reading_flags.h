#pragma once

#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "postgres/source_records.h"

namespace tributary::cli {

/// `source add`'s flags for how a source is read, paged and authenticated
/// (docs/sources.md), as typed; applied to a SourceSpec once all are parsed,
/// because their defaults depend on each other (--paginate picks the
/// cursor parameter's default; --records the payload's).
struct ReadingFlags {
    std::string records;
    bool records_given = false;
    std::vector<std::string> keys;
    std::string payload;
    bool payload_given = false;
    bool newest_first = false;
    std::string paginate = "after-id";
    std::string cursor_param;
    bool cursor_param_given = false;
    std::string limit_param = "limit";
    std::vector<std::string> params;  ///< NAME=VALUE
    std::string next, has_more, end_of_stream, time_field;
    std::string lookback;  ///< empty: none
    std::int64_t first_page = 1;
    bool inclusive = false;
    std::vector<std::string> allowed_hosts;
    std::string start;
    std::string bearer_env, basic_env;
    std::vector<std::string> header_env;  ///< "Name: VAR"
    std::vector<std::string> query_env;   ///< NAME=VAR
    std::string oauth2_token_url, client_id_env, client_secret_env, scope;

    /// Declares the flags on `add`.
    void declare(CLI::App& add);
    /// Checks the flags together and fills `spec`'s layout, paging, auth and
    /// start; throws UsageError naming the flag that is wrong.
    void apply_to(postgres::SourceSpec& spec) const;
};

/// Why `pointer` is not an RFC 6901 JSON pointer ("" or "/..." with ~
/// only as ~0 or ~1); empty when it is one.
std::string pointer_problem(const std::string& pointer);

}  // namespace tributary::cli
