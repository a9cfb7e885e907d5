#include <catch2/catch.hpp>

#include "support/paging_fixture.h"

using namespace tributary;
using namespace tributary::testing;

TEST_CASE("page: the first page is --first-page, sent from the start") {
    auto paging = paging_of(PagingStyle::page);
    paging.limit_param = "per_page";
    CHECK(query_of(make_paging_strategy(paging)->request(Cursor::at(""), 100)) == "page=1&per_page=100");
    paging.first_page = 0;
    CHECK(query_of(make_paging_strategy(paging)->request(Cursor::at(""), 100)) == "page=0&per_page=100");
    CHECK(query_of(make_paging_strategy(paging)->request(Cursor::at("7", 30), 100)) == "page=7&per_page=100");
}

TEST_CASE("page: a full page moves to the next number; a short one stays, its size taken") {
    const auto strategy = make_paging_strategy(paging_of(PagingStyle::page));
    PageFixture full{records_counted(3)};
    auto outcome = strategy->advance(Cursor::at(""), full.view(), 3);
    CHECK(outcome.first_new == 0);
    CHECK(outcome.next == Cursor::at("2", 0));
    CHECK_FALSE(outcome.at_end);

    PageFixture short_page{records_counted(2)};
    outcome = strategy->advance(Cursor::at("2"), short_page.view(), 3);
    CHECK(outcome.next == Cursor::at("2", 2));
    CHECK(outcome.at_end);

    // Asked again: one record appended since, the page now full.
    outcome = strategy->advance(Cursor::at("2", 2), full.view(), 3);
    CHECK(outcome.first_new == 2);
    CHECK(outcome.next == Cursor::at("3", 0));
}

TEST_CASE("page: nothing new gives back the cursor it was asked at") {
    const auto strategy = make_paging_strategy(paging_of(PagingStyle::page));
    PageFixture empty;
    CHECK(strategy->advance(Cursor::at(""), empty.view(), 3).next == Cursor::at(""));
    PageFixture same{records_counted(2)};
    CHECK(strategy->advance(Cursor::at("4", 2), same.view(), 3).next == Cursor::at("4", 2));
}

TEST_CASE("page: has-more false makes a full page the last, has-more true a short one not") {
    const auto strategy = make_paging_strategy(paging_of(PagingStyle::page));
    PageFixture page{records_counted(3)};
    page.has_more = false;
    auto outcome = strategy->advance(Cursor::at("5"), page.view(), 3);
    CHECK(outcome.next == Cursor::at("5", 3));
    CHECK(outcome.at_end);

    page.has_more = true;
    outcome = strategy->advance(Cursor::at("5"), page.view(), 100);
    CHECK(outcome.next == Cursor::at("6", 0));
    CHECK_FALSE(outcome.at_end);
}

TEST_CASE("page: a page that shrank is refused") {
    const auto strategy = make_paging_strategy(paging_of(PagingStyle::page));
    PageFixture page{records_counted(1)};
    const auto outcome = strategy->advance(Cursor::at("3", 4), page.view(), 10);
    REQUIRE(outcome.problem);
    CHECK(*outcome.problem == "page 3 shrank from 4 to 1 records (the list is not append-only?)");
    CHECK(outcome.next == Cursor::at("3", 4));
}

TEST_CASE("page: a position that is no page number is a problem, not an exception") {
    const auto strategy = make_paging_strategy(paging_of(PagingStyle::page));
    for (const char* bad : {"abc", "-1", " 2", "2.0", "99999999999999999999"}) {
        const auto request = strategy->request(Cursor::at(bad), 10);
        REQUIRE(request.problem);
        CHECK(request.problem->find("is no page number") != std::string::npos);
        PageFixture page{records_counted(1)};
        CHECK(strategy->advance(Cursor::at(bad), page.view(), 10).problem);
    }
    CHECK(strategy->request(Cursor::at_id(1), 10).problem);
}

TEST_CASE("page: no page after the largest number") {
    const auto strategy = make_paging_strategy(paging_of(PagingStyle::page));
    PageFixture full{records_counted(1)};
    CHECK(strategy->advance(Cursor::at("9223372036854775807"), full.view(), 1).problem);
}

TEST_CASE("page: a page larger than the limit asked is refused unless the source says whether more follow") {
    auto paging = paging_of(PagingStyle::page);
    paging.limit_param = "per_page";
    const auto strategy = make_paging_strategy(paging);
    PageFixture big{records_counted(5)};
    auto outcome = strategy->advance(Cursor::at("2"), big.view(), 3);
    REQUIRE(outcome.problem);
    CHECK(*outcome.problem ==
          "page 2 holds 5 records, more than the 3 asked (the API ignored per_page): set --batch-size to the API's "
          "page size");

    big.has_more = true;
    outcome = strategy->advance(Cursor::at("2"), big.view(), 3);
    CHECK_FALSE(outcome.problem);
    CHECK(outcome.next == Cursor::at("3", 0));
}
