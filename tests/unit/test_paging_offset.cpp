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

TEST_CASE("offset: a page larger than asked is refused, storing nothing of it (an API that ignores limit)") {
    // json-server asked _start=0&limit=100 serves its whole list: 8 800 records.
    auto paging = paging_of(PagingStyle::offset);
    paging.cursor_param = "_start";
    const auto strategy = make_paging_strategy(paging);
    PageFixture all{records_counted(8800)};
    const auto outcome = strategy->advance(Cursor::at(""), all.view(), 100);
    REQUIRE(outcome.problem);
    CHECK(*outcome.problem ==
          "the page at offset 0 holds 8800 records, more than the 100 asked: the API ignores limit; set "
          "--limit-param to the parameter it reads (e.g. _limit, per_page) or --batch-size to its page size");
    CHECK(outcome.next == Cursor::at(""));

    paging.limit_param = "";
    CHECK_THAT(*make_paging_strategy(paging)->advance(Cursor::at(""), all.view(), 100).problem,
               Catch::Contains("no page size is sent (--limit-param \"\")"));
}

TEST_CASE("offset: a short page while the answer says more follow is refused") {
    const auto strategy = make_paging_strategy(paging_of(PagingStyle::offset));
    PageFixture page{records_counted(10)};
    page.total_count = 300;
    const auto outcome = strategy->advance(Cursor::at("200"), page.view(), 100);
    REQUIRE(outcome.problem);
    CHECK_THAT(*outcome.problem, Catch::Contains("the page at offset 200 holds 10 records, fewer than the 100 asked, "
                                                 "yet the answer says more follow (X-Total-Count 300)"));
    // At the end of the list the total is reached: the end.
    page.total_count = 210;
    const auto end = strategy->advance(Cursor::at("200"), page.view(), 100);
    CHECK_FALSE(end.problem);
    CHECK(end.at_end);
    CHECK(end.next == Cursor::at("210"));
}

TEST_CASE("offset: an offset that runs past the total means the API ignores the offset parameter") {
    // ?offset=200&_limit=100 to json-server: offset is no parameter of its, the first 100 again.
    auto paging = paging_of(PagingStyle::offset);
    paging.limit_param = "_limit";
    const auto strategy = make_paging_strategy(paging);
    PageFixture first{records_counted(100)};
    first.total_count = 250;
    CHECK_FALSE(strategy->advance(Cursor::at("100"), first.view(), 100).problem);
    const auto outcome = strategy->advance(Cursor::at("200"), first.view(), 100);
    REQUIRE(outcome.problem);
    CHECK(*outcome.problem ==
          "the page at offset 200 holds 100 records, ending at record 300, past the X-Total-Count 250: the API "
          "ignores offset? set --cursor-param to the parameter it reads (e.g. _page, _start, skip)");
    CHECK(printable_line(*outcome.problem));
}
