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
          "page 2 holds 5 records, more than the 3 asked: the API ignores per_page; set --limit-param to the "
          "parameter it reads (e.g. _limit, per_page) or --batch-size to its page size");
    CHECK(printable_line(*outcome.problem));

    big.has_more = true;
    outcome = strategy->advance(Cursor::at("2"), big.view(), 3);
    CHECK_FALSE(outcome.problem);
    CHECK(outcome.next == Cursor::at("3", 0));
}

TEST_CASE("page: a short page while the answer says more follow is refused, naming --limit-param (json-server)") {
    // json-server asked page=1&limit=100 with --cursor-param _page: pages of its own 10, a
    // Link rel="next" and X-Total-Count. Taken as the last page, the source would stay at "+10".
    auto paging = paging_of(PagingStyle::page);
    paging.cursor_param = "_page";
    const auto strategy = make_paging_strategy(paging);
    PageFixture page{records_counted(10)};
    page.link_header_next = true;
    page.total_count = 8800;
    auto outcome = strategy->advance(Cursor::at(""), page.view(), 100);
    REQUIRE(outcome.problem);
    CHECK(*outcome.problem ==
          "page 1 holds 10 records, fewer than the 100 asked, yet the answer says more follow (a Link "
          "rel=\"next\" and X-Total-Count 8800): the API ignores limit or caps it; set --limit-param to the "
          "parameter it reads (e.g. _limit, per_page) or --batch-size 10");
    CHECK(printable_line(*outcome.problem));
    CHECK(outcome.next == Cursor::at(""));

    // Either sign alone is enough.
    page.link_header_next = false;
    CHECK(strategy->advance(Cursor::at(""), page.view(), 100).problem);
    page.total_count.reset();
    page.link_header_next = true;
    CHECK(strategy->advance(Cursor::at(""), page.view(), 100).problem);

    // The body saying where the end is: an API paging by its own size, and saying so.
    page.has_more = true;
    outcome = strategy->advance(Cursor::at(""), page.view(), 100);
    CHECK_FALSE(outcome.problem);
    CHECK(outcome.next == Cursor::at("2", 0));
}

TEST_CASE("page: the true last page, its total reached, is the end; one past the total is refused") {
    auto paging = paging_of(PagingStyle::page);
    paging.cursor_param = "_page";
    paging.limit_param = "_limit";
    const auto strategy = make_paging_strategy(paging);
    PageFixture last{records_counted(50)};
    last.total_count = 250;  // pages 1 and 2 of 100, then these 50
    auto outcome = strategy->advance(Cursor::at("3"), last.view(), 100);
    CHECK_FALSE(outcome.problem);
    CHECK(outcome.at_end);
    CHECK(outcome.next == Cursor::at("3", 50));

    // An API that ignores the page parameter serves page 1 as page 4: 400 records would be past 250.
    PageFixture again{records_counted(100)};
    again.total_count = 250;
    again.link_header_next = true;
    outcome = strategy->advance(Cursor::at("4"), again.view(), 100);
    REQUIRE(outcome.problem);
    CHECK_THAT(*outcome.problem, Catch::Contains("page 4 holds 100 records, ending at record 400, past the "
                                                 "X-Total-Count 250: the API ignores _page? set --cursor-param"));
    CHECK(printable_line(*outcome.problem));
}
