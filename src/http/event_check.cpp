#include "event_check.h"

#include <cmath>
#include <limits>

#include <nlohmann/json.hpp>
#include <spdlog/fmt/fmt.h>

namespace tributary {

IdReading read_id(std::int64_t value) { return {value, {}}; }

IdReading read_id(std::uint64_t value) {
    if (value > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
        return {0, fmt::format("id {} is out of the 64-bit signed integer range", value)};
    return {static_cast<std::int64_t>(value), {}};
}

IdReading read_id(double value) {
    // Printed as nlohmann prints a double (1e3 as 1000.0), as the messages
    // always have. The parser turns integers too large even for uint64 into
    // doubles; name those as out of range rather than as fractions.
    const std::string text = nlohmann::json(value).dump();
    if (std::trunc(value) == value && (value >= 0x1p63 || value <= -0x1p63))
        return {0, fmt::format("id {} is out of the 64-bit signed integer range", text)};
    return {0, fmt::format("id is a floating-point number ({}), expected an integer", text)};
}

IdReading read_id(JsonKind kind) { return {0, fmt::format("id is {}, expected an integer", describe(kind))}; }

std::string event_label(const EventFields& event) {
    if (event.id && event.id->problem.empty()) return fmt::format("event #{} (id {})", event.index, event.id->value);
    return fmt::format("event #{}", event.index);
}

std::optional<std::string> event_problem(const EventFields& event) {
    if (event.kind != JsonKind::object)
        return fmt::format("event #{} is {}, expected an object with \"id\" and \"payload\"", event.index,
                           describe(event.kind));
    if (!event.id) return fmt::format("event #{}: id is missing", event.index);
    if (!event.id->problem.empty()) return fmt::format("event #{}: {}", event.index, event.id->problem);
    if (!event.has_payload) return fmt::format("{}: payload is missing", event_label(event));
    if (event.payload_nul != nullptr)
        return fmt::format("{}: payload has U+0000 in {}, which PostgreSQL jsonb cannot store", event_label(event),
                           event.payload_nul);
    return std::nullopt;
}

}  // namespace tributary
