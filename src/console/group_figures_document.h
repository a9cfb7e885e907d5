#pragma once

#include <string>
#include <vector>

#include "core/group_figures.h"

namespace tributary::console {

/// The groups' figures from the document of GET /api/groups
/// (tributary.console_groups()): `{"groups": [{"name", "events_behind",
/// "events_behind_capped", "oldest_unprocessed_age", ...}]}`. A null age
/// (nothing waiting) is 0; without events_behind_capped the count is exact.
/// Throws std::runtime_error for a document not of that shape.
std::vector<GroupFigures> group_figures(const std::string& groups_document);

}  // namespace tributary::console
