#pragma once

#include <optional>

#include <pqxx/pqxx>

namespace tributary::postgres {

/// A field that may be NULL, as std::optional: bookworm's libpqxx (6.4) is
/// built without its own std::optional conversions.
template <typename T>
std::optional<T> optional_field(const pqxx::field& field) {
    if (field.is_null()) return std::nullopt;
    return field.as<T>();
}

}  // namespace tributary::postgres
