#include "ndjson.h"

#include <nlohmann/json.hpp>

namespace tributary::process {

std::string batch_ndjson(const LeasedBatch& batch) {
    std::string out;
    std::size_t size = 0;
    for (const auto& e : batch.events) size += e.payload.size() + e.source.size() + e.event_key.size() + 112;
    out.reserve(size);
    const std::string delivery = std::to_string(batch.delivery);
    for (const auto& e : batch.events) {
        out += "{\"seq\":";
        out += std::to_string(e.seq);
        out += ",\"source\":";
        out += nlohmann::json(e.source).dump();
        out += ",\"event_id\":";
        out += e.event_id ? std::to_string(*e.event_id) : "null";
        out += ",\"event_key\":";
        out += nlohmann::json(e.event_key).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
        out += ",\"payload\":";
        out += e.payload;  // jsonb's text output never holds a raw newline
        out += ",\"delivery\":";
        out += delivery;
        out += "}\n";
    }
    return out;
}

}  // namespace tributary::process
