#include <catch2/catch.hpp>

#include "support/paging_fixture.h"

using namespace tributary;
using namespace tributary::testing;

TEST_CASE("offset: sent from 0 on") {
    const auto strategy = make_paging_strategy(paging_of(PagingStyle::offset));
    CHECK(query_of(strategy->request(Cursor::at(""), 50)) == "offset=0&limit=50");
    CHECK(query_of(strategy->request(Cursor::at("150"), 50)) == "offset=150&limit=50");
}

TEST_CASE("offset moves by the page's records; a short page is the end") {
    const auto strategy = make_paging_strategy(paging_of(PagingStyle::offset));
    PageFixture full{records_counted(3)};
    auto outcome = strategy->advance(Cursor::at(""), full.view(), 3);
    CHECK(outcome.first_new == 0);
    CHECK(outcome.next == Cursor::at("3"));
    CHECK_FALSE(outcome.at_end);

    PageFixture short_page{records_counted(2)};
    outcome = strategy->advance(Cursor::at("3"), short_page.view(), 3);
    CHECK(outcome.next == Cursor::at("5"));
    CHECK(outcome.at_end);
}

TEST_CASE("offset: an empty page gives back the cursor it was asked at") {
    const auto strategy = make_paging_strategy(paging_of(PagingStyle::offset));
    PageFixture empty;
    auto outcome = strategy->advance(Cursor::at(""), empty.view(), 3);
    CHECK(outcome.next == Cursor::at(""));
    CHECK(outcome.at_end);
    outcome = strategy->advance(Cursor::at("5"), empty.view(), 3);
    CHECK(outcome.next == Cursor::at("5"));
}

TEST_CASE("offset: has-more decides the end over the page's size") {
    const auto strategy = make_paging_strategy(paging_of(PagingStyle::offset));
    PageFixture page{records_counted(2)};
    page.has_more = false;
    CHECK(strategy->advance(Cursor::at("0"), page.view(), 2).at_end);
    page.has_more = true;
    CHECK_FALSE(strategy->advance(Cursor::at("0"), page.view(), 10).at_end);
}

TEST_CASE("offset: a position that is no offset is a problem, not an exception") {
    const auto strategy = make_paging_strategy(paging_of(PagingStyle::offset));
    const auto request = strategy->request(Cursor::at("ten"), 10);
    REQUIRE(request.problem);
    CHECK(*request.problem == R"(--paginate offset: the cursor "ten" is no offset)");
    PageFixture page{records_counted(1)};
    CHECK(strategy->advance(Cursor::at("ten"), page.view(), 10).problem);
    CHECK(strategy->advance(Cursor::at("9223372036854775807"), page.view(), 10).problem);
}
