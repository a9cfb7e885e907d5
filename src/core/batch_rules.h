#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "event.h"

namespace tributary {

/// The protocol's rules for a batch, independent of how it travelled: ids
/// strictly increasing and all greater than `after_id`. Returns the reason the
/// batch breaks them (naming the offending id), or nothing when it is good.
std::optional<std::string> batch_violation(const EventBatch& batch, std::int64_t after_id);

/// The same rule for one event, for a reader that sees ids one at a time:
/// event #`index` has `id`, after `previous` (the id before it, or `after_id`
/// for the first).
std::optional<std::string> id_violation(std::size_t index, std::int64_t id, std::int64_t previous,
                                        std::int64_t after_id);

/// The longest key a record may have: an index entry of PostgreSQL's btree
/// holds at most about 2700 bytes, and a key is an identifier, not data.
constexpr std::size_t kMaxKeyBytes = 1024;

/// The rule for a batch keyed by text: every key non-empty and at most
/// kMaxKeyBytes. (A key seen again is no violation: the store skips it.)
std::optional<std::string> key_violation(const EventBatch& batch);

}  // namespace tributary
