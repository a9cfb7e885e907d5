#include "curl_response_headers.h"

#include <curl/curl.h>

namespace tributary {

HeaderLookup response_headers(void* easy) {
    return [easy](const char* name) -> std::optional<std::string> {
        curl_header* header = nullptr;
        // -1: the last request of the transfer (no redirects are followed).
        if (curl_easy_header(easy, name, 0, CURLH_HEADER, -1, &header) != CURLHE_OK) return std::nullopt;
        return std::string(header->value);
    };
}

std::vector<std::string> response_header_values(void* easy, const char* name) {
    std::vector<std::string> values;
    curl_header* header = nullptr;
    if (curl_easy_header(easy, name, 0, CURLH_HEADER, -1, &header) != CURLHE_OK) return values;
    const std::size_t count = header->amount;
    values.emplace_back(header->value);
    for (std::size_t i = 1; i < count; ++i)
        if (curl_easy_header(easy, name, i, CURLH_HEADER, -1, &header) == CURLHE_OK) values.emplace_back(header->value);
    return values;
}

}  // namespace tributary
