#include "batch_rules.h"

#include <spdlog/fmt/fmt.h>

namespace tributary {

std::optional<std::string> batch_violation(const EventBatch& batch, std::int64_t after_id) {
    std::int64_t previous = after_id;
    for (std::size_t i = 0; i < batch.size(); ++i) {
        const std::int64_t id = batch[i].id;
        if (id <= after_id)
            return fmt::format("event #{} has id {}, not greater than the cursor {} (after_id)", i, id, after_id);
        if (id <= previous)
            return fmt::format("ids not strictly increasing: event #{} has id {} after id {}", i, id, previous);
        previous = id;
    }
    return std::nullopt;
}

}  // namespace tributary
