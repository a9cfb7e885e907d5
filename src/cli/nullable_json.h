#pragma once

#include <optional>

#include <nlohmann/json.hpp>

namespace tributary::cli {

/// `value` as JSON, null when there is none: nlohmann 3.11 (bookworm's)
/// converts no std::optional by itself.
template <typename T>
nlohmann::ordered_json nullable_json(const std::optional<T>& value) {
    return value ? nlohmann::ordered_json(*value) : nlohmann::ordered_json();
}

}  // namespace tributary::cli
