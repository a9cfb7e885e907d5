#include <catch2/catch.hpp>

#include "http/link_header.h"

using tributary::next_link;

TEST_CASE("GitHub's Link header: next among several links", "[link]") {
    const std::string github =
        "<https://api.github.com/repositories/1300192/issues?page=2>; rel=\"prev\", "
        "<https://api.github.com/repositories/1300192/issues?page=4>; rel=\"next\", "
        "<https://api.github.com/repositories/1300192/issues?page=515>; rel=\"last\", "
        "<https://api.github.com/repositories/1300192/issues?page=1>; rel=\"first\"";
    CHECK(next_link({github}) == "https://api.github.com/repositories/1300192/issues?page=4");
}

TEST_CASE("Shopify's Link header: page_info cursors", "[link]") {
    const std::string shopify =
        "<https://shop.myshopify.com/admin/api/2024-01/orders.json?limit=50&page_info=abc>; rel=\"previous\", "
        "<https://shop.myshopify.com/admin/api/2024-01/orders.json?limit=50&page_info=def>; rel=\"next\"";
    CHECK(next_link({shopify}) == "https://shop.myshopify.com/admin/api/2024-01/orders.json?limit=50&page_info=def");
    // The last page has only previous.
    CHECK_FALSE(next_link(
        {"<https://shop.myshopify.com/admin/api/2024-01/orders.json?limit=50&page_info=abc>; rel=\"previous\""}));
}

TEST_CASE("rel: unquoted, a list, any case; several headers", "[link]") {
    CHECK(next_link({"</page/2>; rel=next"}) == "/page/2");
    CHECK(next_link({"</page/2>; rel=\"last NEXT\""}) == "/page/2");
    CHECK(next_link({"</page/2>;rel=Next"}) == "/page/2");
    CHECK(next_link({"</a>; rel=\"prev\"", "</b>; title=\"x, y; z\"; rel=\"next\""}) == "/b");
    CHECK(next_link({"</a>; rel=\"nextish\""}) == std::nullopt);
    // Only the first rel counts (RFC 8288 §3.3).
    CHECK(next_link({"</a>; rel=prev; rel=next"}) == std::nullopt);
    // Other parameters with commas and semicolons in quotes.
    CHECK(next_link({"</a>; title=\"a, <b>; rel=next\"; rel=prev, </c>; rel=next"}) == "/c");
}

TEST_CASE("garbage: no next link", "[link]") {
    CHECK_FALSE(next_link({}));
    CHECK_FALSE(next_link({""}));
    CHECK_FALSE(next_link({"rel=next"}));
    CHECK_FALSE(next_link({"<https://x/unterminated; rel=next"}));
    CHECK_FALSE(next_link({"</a>; rel=\"next"}));
    CHECK_FALSE(next_link({"</a> junk; rel=next"}));
}
