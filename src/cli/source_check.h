#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/cursor.h"
#include "core/fetch_result.h"
#include "core/source.h"
#include "postgres/source_records.h"

namespace tributary::cli {

/// One page `source check` asked for, and what the loader would make of it.
struct CheckedPage {
    Cursor asked;  ///< the cursor it was asked at
    FetchResult result;
    /// A batch the fetcher passed but the loader refuses all the same
    /// (page_taking.h); the page then fails.
    std::optional<std::string> violation;
    Cursor next;  ///< where the loader's cursor would go (ok pages)
    std::vector<std::pair<std::string, std::string>> rate_limit_headers;

    bool ok() const { return result.status == FetchResult::Status::ok && !violation; }
};

/// `source check`: the first page at `start` and, when it is ok, not the end
/// and moves the cursor, the second (two requests at most, plus a token
/// request for an OAuth2 source), fetched, parsed and paged by the loader's
/// own code (CurlEventFetcher, the paging strategies, page_taking), with an
/// OAuth2 token kept in memory only. Stores nothing anywhere.
std::vector<CheckedPage> check_pages(const Source& source, const Cursor& start);

/// The source `source add` would register from `spec` (a pulled one).
Source source_of(const postgres::SourceSpec& spec);
/// Where a new source of `spec` starts: --after-id or --start.
Cursor start_of(const postgres::SourceSpec& spec);

/// Prints the check (a table, or one JSON document) to stdout; returns
/// whether every page was ok.
bool print_check(const Source& source, const Cursor& start, const std::vector<CheckedPage>& pages, bool json);

/// What `source check` says of a pushed or published source: nothing to
/// ask, so nothing to check.
void print_nothing_to_check(const std::string& name, postgres::SourceKind kind, bool json);

}  // namespace tributary::cli
