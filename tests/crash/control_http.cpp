#include "control_http.h"

#include <stdexcept>

#include <httplib.h>

namespace tributary::crash {

namespace {

httplib::Client client(const std::string& base_url, int timeout_s) {
    httplib::Client c(base_url);
    c.set_connection_timeout(5, 0);
    c.set_read_timeout(timeout_s, 0);
    c.set_write_timeout(5, 0);
    return c;
}

}  // namespace

std::string http_get(const std::string& base_url, const std::string& path, int timeout_s) {
    auto c = client(base_url, timeout_s);
    const auto response = c.Get(path.c_str());
    if (!response)
        throw std::runtime_error("GET " + base_url + path + " failed: " + httplib::to_string(response.error()));
    if (response->status != 200)
        throw std::runtime_error("GET " + base_url + path + " answered " + std::to_string(response->status));
    return response->body;
}

std::string http_post(const std::string& base_url, const std::string& path) {
    auto c = client(base_url, 10);
    const auto response = c.Post(path.c_str());
    if (!response)
        throw std::runtime_error("POST " + base_url + path + " failed: " + httplib::to_string(response.error()));
    if (response->status != 200)
        throw std::runtime_error("POST " + base_url + path + " answered " + std::to_string(response->status) + ": " +
                                 response->body);
    return response->body;
}

}  // namespace tributary::crash
