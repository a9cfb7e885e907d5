#include "request_log.h"

#include "event_generator.h"

namespace tributary::source_server {
namespace {

void append_string(std::string& out, const std::string& s) { out += json_string(s); }

void append_optional(std::string& out, const std::optional<std::int64_t>& v) {
    if (v) {
        append_int(out, *v);
    } else {
        out += "null";
    }
}

}  // namespace

void RequestLog::add(RequestRecord record) {
    std::lock_guard lock(mutex_);
    records_.push_back(std::move(record));
}

std::int64_t RequestLog::size() const {
    std::lock_guard lock(mutex_);
    return static_cast<std::int64_t>(records_.size());
}

std::string RequestLog::to_json(const std::optional<std::string>& source) const {
    std::string out = "[";
    std::lock_guard lock(mutex_);
    bool first = true;
    for (const auto& r : records_) {
        if (source && r.source != *source) continue;
        if (!first) out += ',';
        first = false;
        out += "{\"source\":";
        append_string(out, r.source);
        out += ",\"arrival_us\":";
        append_int(out, r.arrival_us);
        out += ",\"after_id\":";
        append_optional(out, r.after_id);
        out += ",\"limit\":";
        append_optional(out, r.limit);
        out += ",\"status\":";
        append_int(out, r.status);
        out += ",\"events\":";
        append_int(out, r.events);
        out += ",\"fault\":\"";
        out += fault_mode_name(r.fault);
        out += "\",\"retry_after\":";
        if (r.retry_after.empty()) {
            out += "null";
        } else {
            append_string(out, r.retry_after);
        }
        if (!r.style.empty()) {  // the events route's entries keep their shape
            out += ",\"style\":";
            append_string(out, r.style);
            out += ",\"query\":";
            append_string(out, r.query);
        }
        out += '}';
    }
    out += ']';
    return out;
}

}  // namespace tributary::source_server
