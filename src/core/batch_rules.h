#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "event.h"

namespace tributary {

/// The protocol's rules for a batch, independent of how it travelled: ids
/// strictly increasing and all greater than `after_id`. Returns the reason the
/// batch breaks them (naming the offending id), or nothing when it is good.
std::optional<std::string> batch_violation(const EventBatch& batch, std::int64_t after_id);

}  // namespace tributary
