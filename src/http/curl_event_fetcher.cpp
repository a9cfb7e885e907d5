#include "curl_event_fetcher.h"
#include "shown_url.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <ctime>
#include <limits>
#include <mutex>
#include <new>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <curl/curl.h>
#include <spdlog/fmt/fmt.h>
#include <spdlog/spdlog.h>

#include "batch_parser.h"
#include "body_budget.h"
#include "core/shared_access_token.h"
#include "curl_response_headers.h"
#include "link_header.h"
#include "next_link_policy.h"
#include "page_parser.h"
#include "paging/paging_strategy.h"
#include "query_parameters.h"
#include "rate_limit_headers.h"
#include "request_credentials.h"
#include "total_count_header.h"

namespace tributary {
namespace {

using Status = FetchResult::Status;
using Cause = FetchResult::Cause;
constexpr long kMaxRetryAfterS = 24 * 60 * 60;
constexpr std::size_t kMaxShownContentType = 100;
constexpr std::chrono::milliseconds kDefaultTimeout{10000};  ///< for a source without its own timeout

// libcurl wants one global init before any handle exists; call_once makes
// that safe when workers start fetchers concurrently. There is deliberately no
// matching curl_global_cleanup: the process keeps libcurl until it exits.
void init_curl_once() {
    static std::once_flag once;
    static CURLcode result = CURLE_OK;
    std::call_once(once, [] { result = curl_global_init(CURL_GLOBAL_DEFAULT); });
    if (result != CURLE_OK)
        throw std::runtime_error(std::string("libcurl initialisation failed: ") + curl_easy_strerror(result));
}

struct SlistFree {
    void operator()(curl_slist* list) const noexcept { curl_slist_free_all(list); }
};
using HeaderList = std::unique_ptr<curl_slist, SlistFree>;

/// The first buffer for a body of unknown length; it then doubles, up to
/// the limit.
constexpr std::size_t kFirstBodyBuffer = 64 * 1024;

// What one request accumulates; the callbacks reach it through their user pointer.
struct Transfer {
    explicit Transfer(BodyBudget* budget) : allowance(budget) {}

    CURL* easy = nullptr;
    std::string body;
    std::size_t max_body = 0;
    bool too_large = false;
    bool over_budget = false;
    BodyAllowance allowance;                         ///< the body's capacity, from the process's budget
    std::chrono::steady_clock::time_point deadline;  ///< the request's own timeout
    /// The first request is not sent after this (the loader's claim); the
    /// pages followed within the same fetch are the same turn's.
    std::chrono::steady_clock::time_point send_by = std::chrono::steady_clock::time_point::max();
    bool late = false;
    const StopSignal* stop = nullptr;
    char error[CURL_ERROR_SIZE] = {};
};

// The capacity the body needs to take `needed` bytes: the declared
// Content-Length at once when it is sane (no copy as the body grows), else
// doubling, never past the limit (a doubling past it would allocate twice
// the largest body a source may send).
std::size_t body_capacity(const Transfer& transfer, std::size_t needed) {
    std::size_t capacity = transfer.body.capacity() * 2;
    if (transfer.body.empty()) {
        curl_off_t declared = -1;
        curl_easy_getinfo(transfer.easy, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &declared);
        // Compressed bodies declare their compressed size: a floor, not the size.
        capacity = declared > 0 && static_cast<std::size_t>(declared) <= transfer.max_body
                       ? static_cast<std::size_t>(declared)
                       : kFirstBodyBuffer;
    }
    return std::min(std::max(capacity, needed), transfer.max_body);
}

std::size_t on_body(char* data, std::size_t size, std::size_t count, void* user) {
    auto& transfer = *static_cast<Transfer*>(user);
    const std::size_t n = size * count;
    if (n > transfer.max_body - transfer.body.size()) {
        transfer.too_large = true;
        return 0;  // anything but n aborts the transfer (CURLE_WRITE_ERROR)
    }
    if (transfer.body.size() + n > transfer.body.capacity()) {
        const std::size_t capacity = body_capacity(transfer, transfer.body.size() + n);
        if (!transfer.allowance.grow_to(capacity, transfer.deadline, *transfer.stop)) {
            transfer.over_budget = true;
            return 0;
        }
        transfer.body.reserve(capacity);
    }
    transfer.body.append(data, n);
    return n;
}

// Called during the transfer, at least about once a second even when the
// source sends nothing, so a stop cuts a slow request short.
int on_progress(void* user, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
    return static_cast<const Transfer*>(user)->stop->stop_requested() ? 1 : 0;
}

/// libcurl's last call before it writes a request: refuses to send one
/// past Transfer::send_by.
int before_sending(void* user, char*, char*, int, int) {
    auto* transfer = static_cast<Transfer*>(user);
    if (std::chrono::steady_clock::now() > transfer->send_by) {
        transfer->late = true;
        return CURL_PREREQFUNC_ABORT;
    }
    transfer->send_by = std::chrono::steady_clock::time_point::max();
    return CURL_PREREQFUNC_OK;
}

std::string lowercase(std::string_view s) {
    std::string out(s);
    std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
    return out;
}

std::string_view trimmed(std::string_view s) {
    const auto first = s.find_first_not_of(" \t");
    if (first == std::string_view::npos) return {};
    return s.substr(first, s.find_last_not_of(" \t") - first + 1);
}

bool starts_with(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

void append_line(HeaderList& list, const std::string& line) {
    curl_slist* grown = curl_slist_append(list.get(), line.c_str());
    if (grown == nullptr) throw std::bad_alloc();
    if (!list) list.reset(grown);  // appending to a list keeps its head
}

void append_lines(HeaderList& list, const std::vector<std::string>& lines) {
    for (const auto& line : lines) append_line(list, line);
}

// The source's headers (after a check that none smuggles in another line)
// plus ours; the source may override Accept.
std::optional<std::string> build_headers(const Endpoint& endpoint, HeaderList& list) {
    bool has_accept = false;
    for (std::size_t i = 0; i < endpoint.headers.size(); ++i) {
        const std::string& line = endpoint.headers[i];
        if (line.find_first_of(std::string_view("\r\n\0", 3)) != std::string::npos)
            return fmt::format("header #{} of the source contains a line break or NUL", i);
        has_accept = has_accept || starts_with(lowercase(line), "accept:");
    }
    auto append = [&list](const std::string& line) {
        curl_slist* grown = curl_slist_append(list.get(), line.c_str());
        if (grown == nullptr) throw std::bad_alloc();
        if (!list) list.reset(grown);  // appending to a list keeps its head
    };
    if (!has_accept) append("Accept: application/json");
    for (const auto& line : endpoint.headers) append(line);
    return std::nullopt;
}

/// The whole request's time: the source's, else the default. curl's own
/// timeout and the body budget's wait both end with it.
std::chrono::milliseconds request_timeout(const Endpoint& endpoint) {
    return endpoint.timeout.count() > 0 ? endpoint.timeout : kDefaultTimeout;
}

CURLcode set_options(CURL* easy, const std::string& url, const Endpoint& endpoint, const curl_slist* headers,
                     const FetchLimits& limits, Transfer& transfer) {
    CURLcode rc = CURLE_OK;
    auto keep_first = [&rc](CURLcode r) {
        if (rc == CURLE_OK) rc = r;
    };
    const auto max_file =
        static_cast<curl_off_t>(std::min<std::size_t>(limits.max_body_bytes, std::numeric_limits<curl_off_t>::max()));

    keep_first(curl_easy_setopt(easy, CURLOPT_ERRORBUFFER, transfer.error));
    keep_first(curl_easy_setopt(easy, CURLOPT_URL, url.c_str()));
    keep_first(curl_easy_setopt(easy, CURLOPT_HTTPGET, 1L));
#if LIBCURL_VERSION_NUM >= 0x075500
    keep_first(curl_easy_setopt(easy, CURLOPT_PROTOCOLS_STR, "http,https"));  // no file://, smtp://, ...
#else
    keep_first(curl_easy_setopt(easy, CURLOPT_PROTOCOLS, static_cast<long>(CURLPROTO_HTTP | CURLPROTO_HTTPS)));
#endif
    keep_first(curl_easy_setopt(easy, CURLOPT_FOLLOWLOCATION, 0L));
    keep_first(curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L));  // signals are for the CLI's handler, not libcurl
    keep_first(curl_easy_setopt(easy, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(limits.connect_timeout.count())));
    keep_first(curl_easy_setopt(easy, CURLOPT_TIMEOUT_MS, static_cast<long>(request_timeout(endpoint).count())));
    keep_first(curl_easy_setopt(easy, CURLOPT_ACCEPT_ENCODING, ""));  // every encoding this libcurl decodes
    keep_first(curl_easy_setopt(easy, CURLOPT_USERAGENT, "tributary/0.1"));
    keep_first(curl_easy_setopt(easy, CURLOPT_HTTPHEADER, headers));
    keep_first(curl_easy_setopt(easy, CURLOPT_TCP_KEEPALIVE, 1L));
    keep_first(curl_easy_setopt(easy, CURLOPT_TCP_KEEPIDLE, 30L));
    keep_first(curl_easy_setopt(easy, CURLOPT_TCP_KEEPINTVL, 15L));
    // Refuses a declared Content-Length over the limit before any body arrives;
    // on_body still enforces it for chunked and compressed bodies.
    keep_first(curl_easy_setopt(easy, CURLOPT_MAXFILESIZE_LARGE, max_file));
    keep_first(curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, on_body));
    keep_first(curl_easy_setopt(easy, CURLOPT_WRITEDATA, &transfer));
    keep_first(curl_easy_setopt(easy, CURLOPT_NOPROGRESS, 0L));
    keep_first(curl_easy_setopt(easy, CURLOPT_XFERINFOFUNCTION, on_progress));
    keep_first(curl_easy_setopt(easy, CURLOPT_XFERINFODATA, &transfer));
    keep_first(curl_easy_setopt(easy, CURLOPT_PREREQFUNCTION, before_sending));
    keep_first(curl_easy_setopt(easy, CURLOPT_PREREQDATA, &transfer));
    return rc;
}

std::string reason_phrase(long code) {
    switch (code) {
        case 204: return " No Content";
        case 301: return " Moved Permanently";
        case 302: return " Found";
        case 303: return " See Other";
        case 304: return " Not Modified";
        case 307: return " Temporary Redirect";
        case 308: return " Permanent Redirect";
        case 400: return " Bad Request";
        case 401: return " Unauthorized";
        case 403: return " Forbidden";
        case 404: return " Not Found";
        case 405: return " Method Not Allowed";
        case 406: return " Not Acceptable";
        case 408: return " Request Timeout";
        case 410: return " Gone";
        case 429: return " Too Many Requests";
        case 500: return " Internal Server Error";
        case 501: return " Not Implemented";
        case 502: return " Bad Gateway";
        case 503: return " Service Unavailable";
        case 504: return " Gateway Timeout";
        default: return "";
    }
}

// Seconds ("120") or an HTTP-date; nothing when the value is neither.
std::optional<long> parse_retry_after(std::string_view raw, std::time_t now) {
    const std::string_view value = trimmed(raw);
    if (value.empty()) return std::nullopt;
    if (value.find_first_not_of("0123456789") == std::string_view::npos) {
        long seconds = 0;
        for (char c : value) {
            seconds = seconds * 10 + (c - '0');
            if (seconds > kMaxRetryAfterS) return kMaxRetryAfterS;  // also keeps the sum from overflowing
        }
        return seconds;
    }
    const std::time_t at = curl_getdate(std::string(value).c_str(), nullptr);
    if (at == -1) return std::nullopt;
    const auto delta = static_cast<long long>(at) - static_cast<long long>(now);
    return static_cast<long>(std::clamp<long long>(delta, 0, kMaxRetryAfterS));
}

std::optional<long> retry_after(CURL* easy) {
    curl_header* header = nullptr;
    if (curl_easy_header(easy, "Retry-After", 0, CURLH_HEADER, -1, &header) != CURLHE_OK) return std::nullopt;
    return parse_retry_after(header->value, std::time(nullptr));
}

FetchResult http_failure(CURL* easy, long code, const std::string& url) {
    const std::string status = fmt::format("HTTP {}{}", code, reason_phrase(code));
    if (code == 429 || code == 503) {
        if (const auto seconds = retry_after(easy))
            return FetchResult::failure(Status::throttled,
                                        fmt::format("{} from {}: retry after {} s", status, url, *seconds),
                                        std::chrono::seconds(*seconds));
    }
    if (code == 408 || code == 429 || (code >= 500 && code < 600))
        return FetchResult::failure(Status::transient, fmt::format("{} from {}", status, url));
    if (code >= 300 && code < 400)
        return FetchResult::failure(
            Status::failing, fmt::format("{} from {}: redirects are not followed; check the source URL", status, url));
    if (code >= 400 && code < 500)
        return FetchResult::failure(Status::failing,
                                    fmt::format("{} from {}: check the source URL/credentials", status, url));
    return FetchResult::failure(Status::failing, fmt::format("{} from {}: expected HTTP 200", status, url));
}

// application/json or any */*+json, parameters (charset, ...) allowed.
bool is_json(const char* content_type) {
    if (content_type == nullptr) return false;
    const std::string_view full(content_type);
    const std::string media = lowercase(trimmed(full.substr(0, full.find(';'))));
    if (media == "application/json") return true;
    const auto slash = media.find('/');
    const std::string_view suffix = "+json";
    return slash != std::string::npos && slash > 0 && media.find('/', slash + 1) == std::string::npos &&
           media.size() > slash + 1 + suffix.size() &&
           media.compare(media.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// The server's header goes into a message stored in PostgreSQL: short and
// printable ASCII only.
FetchResult content_type_failure(const char* content_type, const std::string& url) {
    std::string shown = content_type == nullptr ? "(none)" : fmt::format("\"{}\"", content_type);
    if (shown.size() > kMaxShownContentType) shown = shown.substr(0, kMaxShownContentType) + "...";
    for (char& c : shown)
        if (c < 0x20 || c > 0x7e) c = '?';
    return FetchResult::failure(
        Status::transient, fmt::format("unexpected content type {} from {}, expected application/json", shown, url));
}

FetchResult transport_failure(CURLcode rc, const Transfer& transfer, const FetchLimits& limits,
                              const BodyBudget* budget, const std::string& url) {
    if ((rc == CURLE_ABORTED_BY_CALLBACK || transfer.over_budget) && transfer.stop->stop_requested())
        return FetchResult::failure(Status::stopped, fmt::format("stopping: request to {} abandoned", url));
    if (transfer.late)
        return FetchResult::failure(Status::late, fmt::format("too long since the claim: request to {} not sent", url));
    if (transfer.over_budget && budget != nullptr)
        return FetchResult::failure(
            Status::transient,
            fmt::format("response body from {} abandoned at {} bytes: the process's memory budget for bodies in "
                        "flight (--max-body-bytes-in-flight {}) is taken by other workers' responses",
                        url, transfer.body.size(), budget->total()));
    if (transfer.too_large || rc == CURLE_FILESIZE_EXCEEDED)
        return FetchResult::failure(Status::transient,
                                    fmt::format("response larger than {} bytes from {}", limits.max_body_bytes, url));
    const char* detail = transfer.error[0] != '\0' ? transfer.error : curl_easy_strerror(rc);
    // A URL libcurl cannot use will not get better by waiting; the user must fix it.
    const bool permanent = rc == CURLE_URL_MALFORMAT || rc == CURLE_UNSUPPORTED_PROTOCOL;
    return FetchResult::failure(permanent ? Status::failing : Status::transient,
                                fmt::format("GET {} failed: {}", url, detail));
}

// ---- hooks: credentials into the request, rate limits out of the response ----

const char* environment_variable(const char* name) { return std::getenv(name); }

/// What a request carries for its source's auth: header lines, query
/// parameters, and the shared OAuth2 token sent (for a 401 to reject).
struct RequestAuth {
    RequestCredentials credentials;
    std::optional<AccessToken> oauth2_token;
};

std::variant<RequestAuth, FetchResult> request_auth(const Source& source, SharedAccessToken* access_tokens) {
    auto read = request_credentials(source.endpoint.auth, environment_variable);
    if (auto* failure = std::get_if<FetchResult>(&read)) return std::move(*failure);
    RequestAuth auth{std::move(std::get<RequestCredentials>(read)), std::nullopt};
    if (!source.endpoint.auth.oauth2) return auth;
    if (access_tokens == nullptr)
        return FetchResult::failure(Status::failing, "this loader cannot share OAuth2 tokens (no token store)");
    std::variant<AccessToken, FetchResult> token = FetchResult{};
    try {
        token = access_tokens->token_for(source);
    } catch (const std::exception& e) {
        // The token store is the database: its outage is the source's
        // transient failure here, like a network error.
        return FetchResult::failure(Status::transient,
                                    std::string("the shared OAuth2 token cannot be read: ") + e.what());
    }
    if (auto* failure = std::get_if<FetchResult>(&token)) return std::move(*failure);
    auth.oauth2_token = std::get<AccessToken>(std::move(token));
    auth.credentials.headers.push_back("Authorization: Bearer " + auth.oauth2_token->value);
    return auth;
}

/// The server's clock (its Date header) when it sends one, else ours: a Unix
/// reset time is the server's, and so is the wait until it.
std::time_t server_time(CURL* easy) {
    curl_header* header = nullptr;
    if (curl_easy_header(easy, "Date", 0, CURLH_HEADER, -1, &header) == CURLHE_OK) {
        const std::time_t date = curl_getdate(header->value, nullptr);
        if (date != -1) return date;
    }
    return std::time(nullptr);
}

/// A spent rate limit in the response's headers; its note (an absurd
/// value, clamped) logged once.
std::chrono::seconds spent_rate_limit(CURL* easy, const Source& source) {
    const RateLimitWait wait = rate_limit_wait(response_headers(easy), server_time(easy));
    if (!wait.note.empty()) spdlog::warn("source {}: rate-limit headers: {}", source.name, wait.note);
    return wait.wait;
}

/// The rate-limit headers a response has, as `source check` shows them.
std::vector<std::pair<std::string, std::string>> seen_rate_limit_headers(CURL* easy) {
    static const char* const kNames[] = {
        "RateLimit",         "RateLimit-Policy",      "RateLimit-Limit",  "RateLimit-Remaining", "RateLimit-Reset",
        "X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Used", "X-RateLimit-Reset",   "Retry-After"};
    const auto header = response_headers(easy);
    std::vector<std::pair<std::string, std::string>> seen;
    for (const char* name : kNames)
        if (auto value = header(name)) seen.emplace_back(name, std::move(*value));
    return seen;
}

/// 429 or 403 without Retry-After whose rate-limit headers say the limit is
/// spent (GitHub answers 403 so): throttled until the reset.
std::optional<FetchResult> rate_limited(CURL* easy, long code, const Source& source, const std::string& url) {
    if ((code != 429 && code != 403) || retry_after(easy)) return std::nullopt;
    const auto wait = spent_rate_limit(easy, source);
    if (wait.count() == 0) return std::nullopt;
    return FetchResult::failure(
        Status::throttled,
        fmt::format("HTTP {}{} from {}: rate limit spent, reset in {} s", code, reason_phrase(code), url, wait.count()),
        wait);
}

/// 401 to an OAuth2 token: rejected for everyone; transient, since the next
/// request asks for a new one.
FetchResult oauth2_rejected(SharedAccessToken& access_tokens, const Source& source, const AccessToken& token,
                            const std::string& url) {
    access_tokens.rejected(source, token);
    return FetchResult::failure(
        Status::transient,
        fmt::format("HTTP 401 Unauthorized from {}: the OAuth2 access token was rejected; the next request asks "
                    "for a new one",
                    url));
}

// ---- paging: the URL a page is asked at, and what a page means ----

/// Whether `url`'s query already has parameter `name` (a next link that
/// carries the credentials the source URL was given).
bool has_query_parameter(const std::string& url, const std::string& name) {
    const auto query = url.find('?');
    if (query == std::string::npos) return false;
    const std::string_view rest(url.data() + query, url.size() - query);
    for (const char lead : {'?', '&'})
        if (rest.find(std::string(1, lead) + name + "=") != std::string_view::npos) return true;
    return false;
}

/// The URL to GET for `request`: the source URL with the style's and the
/// credentials' parameters; or a next link, checked again against the hosts
/// it may lead to (a rewind may have put it there), with only those
/// credential parameters it does not carry already.
std::variant<std::string, RefusedLink> page_url(const Source& source, const PageRequest& request,
                                                const std::vector<std::pair<std::string, std::string>>& credentials) {
    if (request.url.empty()) {
        auto parameters = request.query;
        parameters.insert(parameters.end(), credentials.begin(), credentials.end());
        return with_query_parameters(source.endpoint.url, parameters);
    }
    auto checked =
        resolve_next_link(source.endpoint.url, source.endpoint.url, request.url, source.paging.allowed_hosts);
    if (std::holds_alternative<RefusedLink>(checked)) return checked;
    std::vector<std::pair<std::string, std::string>> missing;
    for (const auto& parameter : credentials)
        if (!has_query_parameter(std::get<std::string>(checked), parameter.first)) missing.push_back(parameter);
    if (missing.empty()) return checked;
    return with_query_parameters(std::get<std::string>(checked), missing);
}

/// Link style: the next page's URL, from the body (--next) or the Link
/// header, absolute and allowed; nothing at the end. An error message when
/// the link leads where it may not.
std::variant<std::optional<std::string>, RefusedLink> next_page_link(const Source& source, const std::string& asked,
                                                                     CURL* easy, const ParsedPage& page) {
    const std::optional<std::string> reference =
        source.paging.next.empty() ? next_link(response_header_values(easy, "Link")) : page.next;
    if (!reference || reference->empty()) return std::optional<std::string>();
    auto resolved = resolve_next_link(source.endpoint.url, asked, *reference, source.paging.allowed_hosts);
    if (auto* refused = std::get_if<RefusedLink>(&resolved)) return *refused;
    return std::optional<std::string>(std::get<std::string>(std::move(resolved)));
}

/// Lets the style judge the page: keeps the records it says are new, and
/// sets the cursor after them. Returns why the page cannot be used.
std::optional<std::string> follow_page(const Source& source, const PagingStrategy& paging, const Cursor& cursor,
                                       int limit, const std::string& asked, CURL* easy, const ParsedPage& page,
                                       FetchResult& result) {
    std::optional<std::string> link;
    if (source.paging.style == PagingStyle::link) {
        auto next = next_page_link(source, asked, easy, page);
        if (auto* refused = std::get_if<RefusedLink>(&next)) return refused->why;
        link = std::get<std::optional<std::string>>(std::move(next));
    }
    // What the headers say of the whole list, for the styles that count records.
    const auto next_in_header = next_link(response_header_values(easy, "Link"));
    const PageView view{result.events,
                        page.times,
                        page.next,
                        page.has_more,
                        page.end_of_stream,
                        link,
                        next_in_header && !next_in_header->empty(),
                        total_count(response_header_values(easy, "X-Total-Count"))};
    PageOutcome outcome = paging.advance(cursor, view, limit);
    if (outcome.problem) return outcome.problem;
    const auto first_new = std::min(outcome.first_new, result.events.size());
    result.events.erase(result.events.begin(), result.events.begin() + static_cast<std::ptrdiff_t>(first_new));
    result.next = std::move(outcome.next);
    result.at_end = outcome.at_end;
    return std::nullopt;
}

}  // namespace

void CurlEventFetcher::EasyCleanup::operator()(void* easy) const noexcept { curl_easy_cleanup(easy); }

CurlEventFetcher::CurlEventFetcher(FetchLimits limits, const StopSignal& stop, BodyBudget* budget)
    : limits_(limits), stop_(stop), budget_(budget) {
    init_curl_once();
    easy_.reset(curl_easy_init());
    if (!easy_) throw std::runtime_error("libcurl could not create a handle");
}

FetchResult CurlEventFetcher::fetch(const Source& source, const Cursor& cursor, int limit) {
    const std::string url = shown_url(source.endpoint.url);
    if (stop_.stop_requested())
        return FetchResult::failure(Status::stopped, fmt::format("stopping: request to {} not sent", url));
    if (!source.misconfigured.empty())
        return FetchResult::failure(Status::failing, source.misconfigured).because(Cause::invalid_batch);
    const auto paging = make_paging_strategy(source.paging);
    const PageRequest page_request = paging->request(cursor, limit);
    if (page_request.problem)
        return FetchResult::failure(Status::failing, *page_request.problem).because(Cause::invalid_batch);

    HeaderList headers;
    if (auto why = build_headers(source.endpoint, headers))
        return FetchResult::failure(Status::failing, *why).because(Cause::network);
    auto auth = request_auth(source, access_tokens_);
    if (auto* failure = std::get_if<FetchResult>(&auth)) return std::move(*failure).because(Cause::network);
    const RequestAuth& sent_auth = std::get<RequestAuth>(auth);
    append_lines(headers, sent_auth.credentials.headers);
    auto full_url = page_url(source, page_request, sent_auth.credentials.query);
    if (auto* refused = std::get_if<RefusedLink>(&full_url))
        return FetchResult::failure(Status::failing, refused->why).because(Cause::invalid_batch);
    const std::string& asked = std::get<std::string>(full_url);
    // From here on, messages name the URL asked: a next link may lead to another path or host.
    const std::string shown_asked = shown_url(asked);

    CURL* easy = easy_.get();
    // Reset clears the previous source's options but keeps the handle's
    // connection and DNS caches, which is why the handle is reused.
    curl_easy_reset(easy);
    Transfer transfer(budget_);
    transfer.easy = easy;
    transfer.max_body = limits_.max_body_bytes;
    transfer.stop = &stop_;
    transfer.deadline = std::chrono::steady_clock::now() + request_timeout(source.endpoint);
    transfer.send_by = send_by_;
    send_by_ = Clock::time_point::max();  // for this fetch only
    if (const CURLcode rc = set_options(easy, asked, source.endpoint, headers.get(), limits_, transfer); rc != CURLE_OK)
        return FetchResult::failure(Status::transient, fmt::format("cannot prepare the request to {}: {}", shown_asked,
                                                                   curl_easy_strerror(rc)))
            .because(Cause::network);

    rate_limit_headers_.clear();
    if (const CURLcode rc = curl_easy_perform(easy); rc != CURLE_OK)
        return transport_failure(rc, transfer, limits_, budget_, shown_asked).because(Cause::network);
    if (keep_rate_limit_headers_) rate_limit_headers_ = seen_rate_limit_headers(easy);

    long code = 0;
    curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &code);
    if (code == 401 && sent_auth.oauth2_token)
        return oauth2_rejected(*access_tokens_, source, *sent_auth.oauth2_token, shown_asked)
            .because(Cause::http_status);
    if (auto throttled = rate_limited(easy, code, source, shown_asked))
        return std::move(*throttled).because(Cause::http_status);
    if (code != 200) return http_failure(easy, code, shown_asked).because(Cause::http_status);
    const auto hold_off = spent_rate_limit(easy, source);
    const char* content_type = nullptr;
    curl_easy_getinfo(easy, CURLINFO_CONTENT_TYPE, &content_type);
    if (!is_json(content_type)) return content_type_failure(content_type, shown_asked).because(Cause::invalid_batch);
    ParsedPage page = parse_page(std::move(transfer.body), source, cursor, limit, limits_);
    FetchResult result = std::move(page.batch);
    if (result.status == Status::ok) {
        if (auto why = follow_page(source, *paging, cursor, limit, asked, easy, page, result))
            return FetchResult::failure(Status::failing, *why).because(Cause::invalid_batch);
        result.hold_off = hold_off;
    }
    // The body is gone; what the batch keeps stays counted until it is stored.
    std::size_t kept = 0;
    for (const auto& event : result.events) kept += event.payload.capacity();
    transfer.allowance.shrink_to(kept);
    if (kept > 0) result.memory_hold = std::make_shared<BodyAllowance>(std::move(transfer.allowance));
    return result;
}

}  // namespace tributary
