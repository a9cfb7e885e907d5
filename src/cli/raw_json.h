#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace tributary::cli {

/// `object` as one line of JSON with one more member whose value is JSON text
/// used as it is: payloads are printed as stored, never parsed and
/// re-serialised (nlohmann would turn big integers into doubles).
inline std::string with_raw_member(const nlohmann::ordered_json& object, const std::string& key,
                                   const std::string& raw) {
    std::string out = object.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
    out.pop_back();  // the closing brace
    if (!object.empty()) out += ',';
    out += nlohmann::json(key).dump() + ':' + raw + '}';
    return out;
}

}  // namespace tributary::cli
