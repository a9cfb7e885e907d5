#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <random>
#include <string>
#include <unordered_map>

#include <httplib.h>

namespace tributary::source_server {

// --oauth-client ID:SECRET --oauth-expires-s N: an OAuth2 client-credentials token endpoint
// (RFC 6749 §4.4) and the check every style route makes against the tokens it issued.
class OAuthIssuer {
public:
    OAuthIssuer(std::string client_id, std::string client_secret, std::int64_t expires_s);

    // POST /oauth/token: grant_type=client_credentials, the client's credentials as HTTP
    // Basic or as client_id/client_secret form fields, an optional scope.
    void serve_token(const httplib::Request& req, httplib::Response& res);
    // True when the request carries "Authorization: Bearer T" with T issued and unexpired;
    // else fills `res` with the 401 and counts it.
    bool admit(const httplib::Request& req, httplib::Response& res);
    // POST /_oauth/revoke: every token issued so far stops working.
    void revoke_all();
    // {"token_requests":N,"tokens_issued":N,"rejected":N}
    std::string stats_json() const;

private:
    using Clock = std::chrono::steady_clock;
    bool valid_client(const httplib::Request& req) const;
    std::string new_token();

    const std::string client_id_;
    const std::string client_secret_;
    const std::int64_t expires_s_;
    std::mutex mutex_;
    std::mt19937_64 random_;
    std::unordered_map<std::string, Clock::time_point> expiry_by_token_;
    std::atomic<std::int64_t> token_requests_{0};
    std::atomic<std::int64_t> tokens_issued_{0};
    std::atomic<std::int64_t> rejected_{0};
};

}  // namespace tributary::source_server
