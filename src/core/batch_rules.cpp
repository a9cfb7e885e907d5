#include "batch_rules.h"

#include <spdlog/fmt/fmt.h>

namespace tributary {

std::optional<std::string> id_violation(std::size_t index, std::int64_t id, std::int64_t previous,
                                        std::int64_t after_id) {
    if (id <= after_id)
        return fmt::format("event #{} has id {}, not greater than the cursor {} (after_id)", index, id, after_id);
    if (id <= previous)
        return fmt::format("ids not strictly increasing: event #{} has id {} after id {}", index, id, previous);
    return std::nullopt;
}

std::optional<std::string> batch_violation(const EventBatch& batch, std::int64_t after_id) {
    std::int64_t previous = after_id;
    for (std::size_t i = 0; i < batch.size(); ++i) {
        if (auto why = id_violation(i, batch[i].id, previous, after_id)) return why;
        previous = batch[i].id;
    }
    return std::nullopt;
}

std::optional<std::string> key_violation(const EventBatch& batch) {
    for (std::size_t i = 0; i < batch.size(); ++i) {
        if (batch[i].key.empty()) return fmt::format("record #{} has an empty key", i);
        if (batch[i].key.size() > kMaxKeyBytes)
            return fmt::format("record #{} has a key of {} bytes, more than the {} a key may have", i,
                               batch[i].key.size(), kMaxKeyBytes);
    }
    return std::nullopt;
}

}  // namespace tributary
