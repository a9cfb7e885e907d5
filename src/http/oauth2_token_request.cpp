#include "oauth2_token_request.h"

#include <memory>
#include <string_view>

#include <curl/curl.h>
#include <spdlog/fmt/fmt.h>
#include <nlohmann/json.hpp>

#include "shown_url.h"

namespace tributary {
namespace {

using Status = FetchResult::Status;

constexpr std::size_t kMaxAnswerBytes = 64 * 1024;
constexpr std::size_t kMaxTokenBytes = 8 * 1024;

struct EasyFree {
    void operator()(CURL* easy) const noexcept { curl_easy_cleanup(easy); }
};
struct SlistFree {
    void operator()(curl_slist* list) const noexcept { curl_slist_free_all(list); }
};

struct Answer {
    std::string body;
    bool too_large = false;
};

std::size_t on_answer(char* data, std::size_t size, std::size_t count, void* user) {
    auto& answer = *static_cast<Answer*>(user);
    const std::size_t n = size * count;
    if (answer.body.size() + n > kMaxAnswerBytes) {
        answer.too_large = true;
        return 0;
    }
    answer.body.append(data, n);
    return n;
}

/// Printable, short: the server's OAuth2 error code goes into `status`.
std::string shown_code(const std::string& code) {
    std::string out = code.substr(0, 60);
    for (char& c : out)
        if (c < 0x20 || c > 0x7e) c = '?';
    return out;
}

/// A token goes into a header line: visible ASCII only (RFC 6750 b64token is narrower still).
bool usable_in_header(const std::string& token) {
    for (unsigned char c : token)
        if (c < 0x21 || c > 0x7e) return false;
    return !token.empty();
}

std::string form_value(CURL* easy, const std::string& value) {
    std::unique_ptr<char, decltype(&curl_free)> escaped(
        curl_easy_escape(easy, value.c_str(), static_cast<int>(value.size())), &curl_free);
    return escaped ? std::string(escaped.get()) : std::string();
}

FetchResult failure(Status status, const std::string& url, const std::string& what) {
    return FetchResult::failure(status, fmt::format("OAuth2 token request to {}: {}", url, what));
}

std::variant<IssuedToken, FetchResult> read_answer(const std::string& body, const std::string& url) {
    const auto json = nlohmann::json::parse(body, nullptr, false);
    if (json.is_discarded() || !json.is_object())
        return failure(Status::failing, url, "the answer is not a JSON object");
    const auto token = json.find("access_token");
    if (token == json.end() || !token->is_string())
        return failure(Status::failing, url, "the answer has no access_token string");
    IssuedToken issued{token->get<std::string>(), std::nullopt};
    if (issued.value.size() > kMaxTokenBytes)
        return failure(Status::failing, url, fmt::format("the access token is over {} bytes", kMaxTokenBytes));
    if (!usable_in_header(issued.value))
        return failure(Status::failing, url, "the access token holds characters a header cannot carry");
    const auto expires = json.find("expires_in");
    if (expires != json.end() && expires->is_number() && expires->get<double>() > 0)
        issued.lifetime = std::chrono::seconds(static_cast<long long>(std::min(expires->get<double>(), 1e9)));
    else if (expires != json.end() && expires->is_string() && !expires->get<std::string>().empty() &&
             expires->get<std::string>().size() < 10 &&
             expires->get<std::string>().find_first_not_of("0123456789") == std::string::npos)
        issued.lifetime = std::chrono::seconds(std::stoll(expires->get<std::string>()));
    return issued;
}

FetchResult http_failure(long code, const std::string& body, const std::string& url) {
    std::string detail = fmt::format("HTTP {}", code);
    const auto json = nlohmann::json::parse(body, nullptr, false);
    if (!json.is_discarded() && json.is_object() && json.contains("error") && json["error"].is_string())
        detail += fmt::format(" ({})", shown_code(json["error"].get<std::string>()));
    const bool transient = code == 408 || code == 429 || code >= 500;
    if (!transient) detail += ": check --client-id-env, --client-secret-env, --scope and --oauth2-token-url";
    return failure(transient ? Status::transient : Status::failing, url, detail);
}

}  // namespace

std::variant<IssuedToken, FetchResult> request_oauth2_token(const Source& source, const EnvLookup& env) {
    const EnvAuth::OAuth2& oauth2 = *source.endpoint.auth.oauth2;
    const std::string url = shown_url(oauth2.token_url);
    auto id = environment_value(env, oauth2.client_id, "--client-id-env");
    if (auto* missing = std::get_if<FetchResult>(&id)) return std::move(*missing);
    auto secret = environment_value(env, oauth2.client_secret, "--client-secret-env");
    if (auto* missing = std::get_if<FetchResult>(&secret)) return std::move(*missing);
    const std::string authorization =
        "Authorization: Basic " + base64(std::get<std::string>(id) + ":" + std::get<std::string>(secret));

    std::unique_ptr<CURL, EasyFree> easy(curl_easy_init());
    if (!easy) return failure(Status::transient, url, "libcurl could not create a handle");
    std::string form = "grant_type=client_credentials";
    if (!oauth2.scope.empty()) form += "&scope=" + form_value(easy.get(), oauth2.scope);

    std::unique_ptr<curl_slist, SlistFree> headers(curl_slist_append(nullptr, authorization.c_str()));
    if (!headers || curl_slist_append(headers.get(), "Accept: application/json") == nullptr) throw std::bad_alloc();

    Answer answer;
    char error[CURL_ERROR_SIZE] = {};
    CURL* h = easy.get();
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, error);
    curl_easy_setopt(h, CURLOPT_URL, oauth2.token_url.c_str());
#if LIBCURL_VERSION_NUM >= 0x075500
    curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
#else
    curl_easy_setopt(h, CURLOPT_PROTOCOLS, static_cast<long>(CURLPROTO_HTTP | CURLPROTO_HTTPS));
#endif
    curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, static_cast<long>(source.endpoint.timeout.count()));
    curl_easy_setopt(h, CURLOPT_USERAGENT, "tributary/0.1");
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers.get());
    curl_easy_setopt(h, CURLOPT_POSTFIELDS, form.c_str());
    curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE, static_cast<long>(form.size()));
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_answer);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &answer);

    if (const CURLcode rc = curl_easy_perform(h); rc != CURLE_OK) {
        if (answer.too_large)
            return failure(Status::failing, url, fmt::format("answer over {} bytes", kMaxAnswerBytes));
        const bool permanent = rc == CURLE_URL_MALFORMAT || rc == CURLE_UNSUPPORTED_PROTOCOL;
        return failure(permanent ? Status::failing : Status::transient, url,
                       error[0] != '\0' ? error : curl_easy_strerror(rc));
    }
    long code = 0;
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
    if (code != 200) return http_failure(code, answer.body, url);
    return read_answer(answer.body, url);
}

}  // namespace tributary
