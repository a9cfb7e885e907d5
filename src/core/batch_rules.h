#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "event.h"

namespace tributary {

/// How the cursor was sent, for the rules and their messages: the query
/// parameter's name, and whether it is inclusive (id_gte: the first record
/// may be the cursor's own).
struct SentCursor {
    std::string param = "after_id";
    bool inclusive = false;
};

/// The protocol's rules for a batch, independent of how it travelled: ids
/// strictly increasing and all greater than `after_id`. Returns the reason the
/// batch breaks them (naming the offending id and the parameter sent), or
/// nothing when it is good.
std::optional<std::string> batch_violation(const EventBatch& batch, std::int64_t after_id, const SentCursor& sent = {});

/// The same rule for one event, for a reader that sees ids one at a time:
/// event #`index` has `id`, after `previous` (the id before it, or `after_id`
/// for the first). With an inclusive cursor the first event may have
/// `after_id` itself. A message hints at the likely cause: an API that
/// ignores the parameter, or one that is inclusive without --inclusive.
std::optional<std::string> id_violation(std::size_t index, std::int64_t id, std::int64_t previous,
                                        std::int64_t after_id, const SentCursor& sent = {});

/// The longest key a record may have: an index entry of PostgreSQL's btree
/// holds at most about 2700 bytes, and a key is an identifier, not data.
constexpr std::size_t kMaxKeyBytes = 1024;

/// The rule for a batch keyed by text: every key non-empty and at most
/// kMaxKeyBytes. (A key seen again is no violation: the store skips it.)
std::optional<std::string> key_violation(const EventBatch& batch);

}  // namespace tributary
