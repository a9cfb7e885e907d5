#include <catch2/catch.hpp>

#include "support/paging_fixture.h"

using namespace tributary;
using namespace tributary::testing;

TEST_CASE("link: the first page is the source URL with its parameters; a next link is asked as it is") {
    auto paging = paging_of(PagingStyle::link);
    paging.params = {{"status", "any"}};
    const auto strategy = make_paging_strategy(paging);
    const auto first = strategy->request(Cursor::at(""), 250);
    CHECK(first.url.empty());
    CHECK(query_of(first) == "status=any&limit=250");

    const auto next = strategy->request(Cursor::at("https://shop.example/orders.json?page_info=abc&limit=250", 4), 250);
    CHECK(next.url == "https://shop.example/orders.json?page_info=abc&limit=250");
    CHECK(next.query.empty());
    CHECK_FALSE(next.problem);
}

TEST_CASE("link: moves to the next link, and stays on the last page with its size taken") {
    const auto strategy = make_paging_strategy(paging_of(PagingStyle::link));
    PageFixture page{records_counted(3)};
    page.link_next = "https://api.example/e?page=2";
    page.next = "ignored: link reads link_next";
    auto outcome = strategy->advance(Cursor::at(""), page.view(), 3);
    CHECK(outcome.next == Cursor::at("https://api.example/e?page=2", 0));
    CHECK_FALSE(outcome.at_end);

    page.link_next.reset();
    outcome = strategy->advance(Cursor::at("https://api.example/e?page=2", 1), page.view(), 3);
    CHECK(outcome.first_new == 1);
    CHECK(outcome.next == Cursor::at("https://api.example/e?page=2", 3));
    CHECK(outcome.at_end);
}

TEST_CASE("link: a next link to the current page is a loop; one over 8 KB is refused") {
    const auto strategy = make_paging_strategy(paging_of(PagingStyle::link));
    PageFixture page{records_counted(1)};
    page.link_next = "https://api.example/e?page=2";
    auto outcome = strategy->advance(Cursor::at("https://api.example/e?page=2"), page.view(), 1);
    REQUIRE(outcome.problem);
    CHECK(outcome.problem->find("next link repeats the current one") != std::string::npos);
    CHECK(printable_line(*outcome.problem));

    page.link_next = "https://api.example/" + std::string(kMaxCursorBytes, 'p');
    outcome = strategy->advance(Cursor::at(""), page.view(), 1);
    REQUIRE(outcome.problem);
    CHECK(outcome.problem->find("next link is over 8192 bytes") != std::string::npos);
}

TEST_CASE("link: a page that shrank is refused") {
    const auto strategy = make_paging_strategy(paging_of(PagingStyle::link));
    PageFixture page;
    const auto outcome = strategy->advance(Cursor::at("https://api.example/e?page=9", 2), page.view(), 5);
    REQUIRE(outcome.problem);
    CHECK(outcome.problem->find(R"(the page at "https://api.example/e?..." shrank from 2 to 0)") != std::string::npos);
}

TEST_CASE("link: messages quote a link without its query or credentials") {
    const auto strategy = make_paging_strategy(paging_of(PagingStyle::link));
    PageFixture page{records_counted(1)};
    page.link_next = "https://user:secret@graph.example/v1/feed?access_token=SECRET&after=x";
    const auto outcome = strategy->advance(Cursor::at(*page.link_next), page.view(), 1);
    REQUIRE(outcome.problem);
    CHECK(*outcome.problem ==
          R"(the next link repeats the current one "https://graph.example/v1/feed?...": the API would loop)");
    CHECK(outcome.problem->find("SECRET") == std::string::npos);
    CHECK(outcome.problem->find("secret") == std::string::npos);
}
