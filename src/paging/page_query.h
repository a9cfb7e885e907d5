#pragma once

#include <optional>
#include <string>

#include "core/reading.h"
#include "paging_strategy.h"

namespace tributary {

/// A request to the source's own URL: the fixed `--param`s in their order,
/// then the cursor parameter when there is a value to send, then the limit
/// (unless `--limit-param` is empty).
PageRequest page_query(const Paging& paging, const std::optional<std::string>& cursor_value, int limit);

/// A request that must not be sent, and why.
PageRequest refused_request(std::string problem);

/// An outcome that stores nothing and fails the source, and why.
PageOutcome refused_page(const Cursor& at, std::string problem);

}  // namespace tributary
