#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/event_fetcher.h"
#include "core/stop_signal.h"
#include "fetch_limits.h"

namespace tributary {

class BodyBudget;
class SharedAccessToken;

/// The EventFetcher for `http` sources (DESIGN §3), on libcurl.
///
/// GETs the page at the cursor as the source's paging style asks for it
/// (src/paging/: `<url>?after_id=N&limit=M` for today's protocol, the
/// parameters appended to any query the URL has; a next link as it is, once
/// checked against the hosts it may lead to) and classifies the outcome: transport errors, timeouts, 408, 5xx, a body
/// over `max_body_bytes`, a wrong content type or a malformed body -> transient; 429/503 with Retry-After -> throttled
/// (retry_after clamped to [0, 24 h]); redirects (never followed) and other 4xx -> failing; 200 -> parse_page() with
/// the source's layout, then the style's verdict on the page (a loop, a shrunk page, a link to a foreign host ->
/// failing), which keeps the records not yet taken and sets the next cursor. A body that cannot get its share of the
/// process's BodyBudget -> transient. A stop requested on `stop` abandons the transfer in progress -> stopped.
/// Credentials (EnvAuth) are read from the environment for each request
/// (request_credentials.h); an OAuth2 source's token comes from the shared
/// AccessTokens, and a 401 rejects it (transient: the next request renews
/// it). Rate-limit headers (rate_limit_headers.h): a spent limit on a 200 ->
/// hold_off; on a 429 or 403 without Retry-After -> throttled.
/// Error messages name the URL without its query or user info, and never a
/// header value: both may carry credentials.
///
/// One libcurl handle per instance, reused so that connections to a source
/// stay open between requests. Not thread-safe: one fetcher per worker.
class CurlEventFetcher : public EventFetcher {
public:
    /// Throws std::runtime_error when libcurl cannot be initialised. `stop`
    /// and `budget` must outlive the fetcher. With a budget, a body's
    /// capacity is taken from it as the body arrives (waiting for it when
    /// this fetcher holds none, else failing the fetch as transient), and
    /// what the batch keeps is held until the FetchResult is dropped.
    CurlEventFetcher(FetchLimits limits, const StopSignal& stop, BodyBudget* budget = nullptr);

    CurlEventFetcher(const CurlEventFetcher&) = delete;
    CurlEventFetcher& operator=(const CurlEventFetcher&) = delete;

    FetchResult fetch(const Source& source, const Cursor& cursor, int limit) override;
    /// Checked by libcurl's pre-request callback, after the connection is
    /// made and just before the request is written: the narrowest window.
    void send_no_later_than(Clock::time_point latest) override { send_by_ = latest; }

    /// Where OAuth2 sources (EnvAuth::oauth2) get their shared token; without
    /// it they fail. `tokens` must outlive the fetcher.
    void share_access_tokens(SharedAccessToken& tokens) { access_tokens_ = &tokens; }

    /// For `source check`: from now on, keeps the rate-limit headers of each
    /// response (RateLimit*, X-RateLimit-*, Retry-After: names and values,
    /// never a credential) for rate_limit_headers(). The loader does not ask.
    void keep_rate_limit_headers() { keep_rate_limit_headers_ = true; }
    /// Those of the last fetch's response, in the order above; empty when it
    /// had none or got no response.
    const std::vector<std::pair<std::string, std::string>>& rate_limit_headers() const { return rate_limit_headers_; }

private:
    // `CURL` is a typedef of void in curl.h; spelled out here to keep curl.h
    // out of this header.
    struct EasyCleanup {
        void operator()(void* easy) const noexcept;
    };

    FetchLimits limits_;
    const StopSignal& stop_;
    BodyBudget* budget_;
    std::unique_ptr<void, EasyCleanup> easy_;
    SharedAccessToken* access_tokens_ = nullptr;
    Clock::time_point send_by_ = Clock::time_point::max();  ///< for the next fetch only
    bool keep_rate_limit_headers_ = false;
    std::vector<std::pair<std::string, std::string>> rate_limit_headers_;
};

}  // namespace tributary
