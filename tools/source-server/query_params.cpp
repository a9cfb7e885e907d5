#include "query_params.h"

#include <algorithm>
#include <charconv>

#include "event_generator.h"

namespace tributary::source_server {

std::optional<std::int64_t> parse_int(const std::string& text) {
    std::int64_t value = 0;
    const char* end = text.data() + text.size();
    auto [ptr, ec] = std::from_chars(text.data(), end, value);
    if (text.empty() || ec != std::errc() || ptr != end) return std::nullopt;
    return value;
}

IntParam int_param(const httplib::Request& req, const char* name, std::int64_t fallback, std::int64_t lo,
                   std::int64_t hi) {
    IntParam param;
    param.value = fallback;
    if (!req.has_param(name)) return param;
    param.present = true;
    auto value = parse_int(req.get_param_value(name));
    param.valid = value && *value >= lo && *value <= hi;
    if (param.valid) param.value = *value;
    return param;
}

std::optional<std::int64_t> page_size_param(const httplib::Request& req, const char* name, std::int64_t fallback,
                                            std::int64_t cap) {
    if (!req.has_param(name)) return fallback;
    auto value = parse_int(req.get_param_value(name));
    if (!value || *value < 1) return std::nullopt;
    return std::min(*value, cap);
}

void json_error(httplib::Response& res, int status, const std::string& message) {
    res.status = status;
    res.set_content("{\"error\":" + json_string(message) + "}", "application/json");
}

std::string origin_of(const httplib::Request& req) {
    std::string host = req.get_header_value("Host");
    if (host.empty()) host = "localhost";
    return "http://" + host;
}

std::string query_of(const httplib::Request& req) {
    auto mark = req.target.find('?');
    return mark == std::string::npos ? std::string() : req.target.substr(mark + 1);
}

}  // namespace tributary::source_server
