#include "batch_rules.h"

#include <spdlog/fmt/fmt.h>

namespace tributary {

std::optional<std::string> id_violation(std::size_t index, std::int64_t id, std::int64_t previous,
                                        std::int64_t after_id, const SentCursor& sent) {
    if (sent.inclusive && index == 0 && id == after_id) return std::nullopt;
    if (id == after_id && index == 0)
        return fmt::format(
            "event #0 has id {}, not greater than the cursor {} ({}): if the parameter is inclusive, add --inclusive",
            id, after_id, sent.param);
    if (id <= after_id) {
        const char* relation = sent.inclusive ? "below" : "not greater than";
        return fmt::format(
            "event #{} has id {}, {} the cursor {} ({}{}): the API may ignore {} (set --cursor-param to the "
            "parameter it reads)",
            index, id, relation, after_id, sent.param, sent.inclusive ? ", inclusive" : "", sent.param);
    }
    if (id <= previous)
        return fmt::format("ids not strictly increasing: event #{} has id {} after id {}", index, id, previous);
    return std::nullopt;
}

std::optional<std::string> batch_violation(const EventBatch& batch, std::int64_t after_id, const SentCursor& sent) {
    std::int64_t previous = after_id;
    for (std::size_t i = 0; i < batch.size(); ++i) {
        if (auto why = id_violation(i, batch[i].id, previous, after_id, sent)) return why;
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
