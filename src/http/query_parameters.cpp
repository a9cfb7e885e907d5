#include "query_parameters.h"

#include <memory>

#include <curl/curl.h>

namespace tributary {
namespace {

struct UrlFree {
    void operator()(CURLU* url) const noexcept { curl_url_cleanup(url); }
};

std::string escaped(const std::string& text) {
    std::unique_ptr<char, decltype(&curl_free)> out(
        curl_easy_escape(nullptr, text.c_str(), static_cast<int>(text.size())), &curl_free);
    if (!out) throw std::bad_alloc();
    return out.get();
}

}  // namespace

std::string with_query_parameters(const std::string& url,
                                  const std::vector<std::pair<std::string, std::string>>& parameters) {
    const std::string base = url.substr(0, url.find('#'));
    if (parameters.empty()) return base;
    std::unique_ptr<CURLU, UrlFree> parsed(curl_url());
    if (!parsed || curl_url_set(parsed.get(), CURLUPART_URL, base.c_str(), 0) != CURLUE_OK) return base;
    for (const auto& [name, value] : parameters) {
        const std::string pair = escaped(name) + "=" + escaped(value);
        if (curl_url_set(parsed.get(), CURLUPART_QUERY, pair.c_str(), CURLU_APPENDQUERY) != CURLUE_OK) return base;
    }
    char* out = nullptr;
    if (curl_url_get(parsed.get(), CURLUPART_URL, &out, 0) != CURLUE_OK) return base;
    std::string result(out);
    curl_free(out);
    return result;
}

}  // namespace tributary
