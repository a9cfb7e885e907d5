#pragma once

#include <optional>
#include <string>

#include "cursor.h"
#include "fetch_result.h"
#include "source.h"

namespace tributary {

/// What the loader makes of a good answer asked at `at`, shared with `source check` so that the
/// check refuses what a loader would, in the same words.

/// Why the page's records break the rules (batch_rules.h: ids, or keys), naming the cursor
/// parameter sent; nothing when they are good. The source then fails with it.
std::optional<std::string> page_violation(const Source& source, const Cursor& at, const EventBatch& events);

/// The page as stored: a source keyed by id keeps at most its batch size of records (an API that
/// sends more), its cursor then at the last id kept. Returns where the cursor goes after the page:
/// what the fetcher said, or for a source keyed by id, its last id (`at` when there is none).
Cursor take_page(const Source& source, const Cursor& at, FetchResult& result);

}  // namespace tributary
