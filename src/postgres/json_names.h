#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <pqxx/pqxx>

namespace tributary::postgres {

/// A field holding a JSON array of names (groups, partitions), as the SQL
/// functions return them (jsonb: no text[] literal to unquote); NULL is none.
inline std::vector<std::string> json_names(const pqxx::field& field) {
    if (field.is_null()) return {};
    return nlohmann::json::parse(field.c_str()).get<std::vector<std::string>>();
}

}  // namespace tributary::postgres
