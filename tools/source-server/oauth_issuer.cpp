#include "oauth_issuer.h"

#include "base64.h"
#include "event_generator.h"

namespace tributary::source_server {
namespace {

constexpr const char* kJson = "application/json";

void oauth_error(httplib::Response& res, int status, const std::string& code) {
    res.status = status;
    res.set_content("{\"error\":\"" + code + "\"}", kJson);
}

}  // namespace

OAuthIssuer::OAuthIssuer(std::string client_id, std::string client_secret, std::int64_t expires_s)
    : client_id_(std::move(client_id)),
      client_secret_(std::move(client_secret)),
      expires_s_(expires_s),
      random_(std::random_device{}()) {}

bool OAuthIssuer::valid_client(const httplib::Request& req) const {
    const std::string authorization = req.get_header_value("Authorization");
    if (authorization.rfind("Basic ", 0) == 0) {
        auto decoded = base64_decode(authorization.substr(6));
        return decoded && *decoded == client_id_ + ":" + client_secret_;
    }
    return req.get_param_value("client_id") == client_id_ && req.get_param_value("client_secret") == client_secret_;
}

std::string OAuthIssuer::new_token() {
    static constexpr char kHex[] = "0123456789abcdef";
    std::string token;
    for (int word = 0; word < 4; ++word) {
        std::uint64_t bits = random_();
        for (int i = 0; i < 16; ++i, bits >>= 4) token += kHex[bits & 15];
    }
    return token;
}

void OAuthIssuer::serve_token(const httplib::Request& req, httplib::Response& res) {
    token_requests_.fetch_add(1, std::memory_order_relaxed);
    if (req.get_param_value("grant_type") != "client_credentials")
        return oauth_error(res, 400, "unsupported_grant_type");
    if (!valid_client(req)) {
        res.set_header("WWW-Authenticate", "Basic realm=\"oauth\"");
        return oauth_error(res, 401, "invalid_client");
    }
    std::string token;
    {
        std::lock_guard lock(mutex_);
        token = new_token();
        expiry_by_token_[token] = Clock::now() + std::chrono::seconds(expires_s_);
    }
    tokens_issued_.fetch_add(1, std::memory_order_relaxed);
    std::string out = "{\"access_token\":\"" + token + "\",\"token_type\":\"Bearer\",\"expires_in\":";
    append_int(out, expires_s_);
    if (req.has_param("scope")) out += ",\"scope\":" + json_string(req.get_param_value("scope"));
    out += '}';
    res.status = 200;
    res.set_header("Cache-Control", "no-store");
    res.set_content(out, kJson);
}

bool OAuthIssuer::admit(const httplib::Request& req, httplib::Response& res) {
    const std::string authorization = req.get_header_value("Authorization");
    if (authorization.rfind("Bearer ", 0) == 0) {
        const std::string token = authorization.substr(7);
        std::lock_guard lock(mutex_);
        auto it = expiry_by_token_.find(token);
        if (it != expiry_by_token_.end() && Clock::now() < it->second) return true;
    }
    rejected_.fetch_add(1, std::memory_order_relaxed);
    res.set_header("WWW-Authenticate", "Bearer error=\"invalid_token\"");
    oauth_error(res, 401, "invalid_token");
    return false;
}

void OAuthIssuer::revoke_all() {
    std::lock_guard lock(mutex_);
    expiry_by_token_.clear();
}

std::string OAuthIssuer::stats_json() const {
    std::string out = "{\"token_requests\":";
    append_int(out, token_requests_.load());
    out += ",\"tokens_issued\":";
    append_int(out, tokens_issued_.load());
    out += ",\"rejected\":";
    append_int(out, rejected_.load());
    out += '}';
    return out;
}

}  // namespace tributary::source_server
