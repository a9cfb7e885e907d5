#include <catch2/catch.hpp>

#include <algorithm>
#include <cctype>

#include "http/query_parameters.h"

using tributary::with_query_parameters;

namespace {

// Percent-encodings are case-insensitive (RFC 3986 §2.1); libcurl may write either.
std::string lower(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return s;
}

}  // namespace

TEST_CASE("query parameters are appended URL-encoded", "[credentials]") {
    CHECK(lower(with_query_parameters("https://api.example.com/v1/events?after_id=5&limit=10",
                                      {{"api_key", "a b&c=d"}})) ==
          "https://api.example.com/v1/events?after_id=5&limit=10&api_key=a%20b%26c%3dd");
    CHECK(with_query_parameters("https://api.example.com/v1/events", {{"k", "1"}, {"x y", "2"}}) ==
          "https://api.example.com/v1/events?k=1&x%20y=2");
    CHECK(with_query_parameters("https://api.example.com/v1/events#top", {}) == "https://api.example.com/v1/events");
}
