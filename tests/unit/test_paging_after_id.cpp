#include <catch2/catch.hpp>

#include "support/paging_fixture.h"

using namespace tributary;
using namespace tributary::testing;

TEST_CASE("after-id asks after the cursor's id, from 0 on, limit last") {
    const auto strategy = make_paging_strategy(paging_of(PagingStyle::after_id));
    CHECK(query_of(strategy->request(Cursor(), 100)) == "after_id=0&limit=100");
    const auto request = strategy->request(Cursor::at_id(42), 100);
    CHECK(request.url.empty());
    CHECK_FALSE(request.problem);
    CHECK(query_of(request) == "after_id=42&limit=100");
}

TEST_CASE("after-id sends the fixed parameters first, in order, and no limit when its name is empty") {
    auto paging = paging_of(PagingStyle::after_id);
    paging.params = {{"type", "push"}, {"a", "1"}};
    paging.cursor_param = "since_id";
    paging.limit_param = "";
    CHECK(query_of(make_paging_strategy(paging)->request(Cursor::at_id(7), 50)) == "type=push&a=1&since_id=7");
}

TEST_CASE("after-id moves to the page's last id; a page short of the limit is the end") {
    const auto strategy = make_paging_strategy(paging_of(PagingStyle::after_id));
    PageFixture full{records_with_ids({5, 6, 9})};
    auto outcome = strategy->advance(Cursor::at_id(4), full.view(), 3);
    CHECK_FALSE(outcome.problem);
    CHECK(outcome.first_new == 0);
    CHECK(outcome.next == Cursor::at_id(9));
    CHECK_FALSE(outcome.at_end);

    outcome = strategy->advance(Cursor::at_id(4), full.view(), 4);
    CHECK(outcome.next == Cursor::at_id(9));
    CHECK(outcome.at_end);
}

TEST_CASE("after-id: an empty page leaves the cursor as it was, at the end") {
    const auto strategy = make_paging_strategy(paging_of(PagingStyle::after_id));
    PageFixture empty;
    const auto outcome = strategy->advance(Cursor::at_id(12), empty.view(), 10);
    CHECK(outcome.next == Cursor::at_id(12));
    CHECK(outcome.at_end);
}

TEST_CASE("after-id: what the source says about more outranks the page's size") {
    const auto strategy = make_paging_strategy(paging_of(PagingStyle::after_id));
    PageFixture page{records_with_ids({1, 2})};
    page.has_more = false;
    CHECK(strategy->advance(Cursor(), page.view(), 2).at_end);
    page.has_more = true;
    CHECK_FALSE(strategy->advance(Cursor(), page.view(), 10).at_end);
}

TEST_CASE("after-id refuses a position cursor as a problem, not an exception") {
    const auto strategy = make_paging_strategy(paging_of(PagingStyle::after_id));
    const auto request = strategy->request(Cursor::at("abc"), 10);
    REQUIRE(request.problem);
    CHECK(printable_line(*request.problem));
    CHECK(request.problem->find("--paginate after-id") != std::string::npos);
    PageFixture page{records_with_ids({1})};
    const auto outcome = strategy->advance(Cursor::at("abc"), page.view(), 10);
    REQUIRE(outcome.problem);
    CHECK(outcome.next == Cursor::at("abc"));
}

TEST_CASE("after-id --inclusive: a page that starts with the cursor's own record stores the rest") {
    auto paging = paging_of(PagingStyle::after_id);
    paging.cursor_param = "id_gte";
    paging.inclusive = true;
    const auto strategy = make_paging_strategy(paging);
    CHECK(query_of(strategy->request(Cursor::at_id(100), 3)) == "id_gte=100&limit=3");

    PageFixture page{records_with_ids({100, 101, 102})};
    auto outcome = strategy->advance(Cursor::at_id(100), page.view(), 3);
    CHECK_FALSE(outcome.problem);
    CHECK(outcome.first_new == 1);
    CHECK(outcome.next == Cursor::at_id(102));
    CHECK_FALSE(outcome.at_end);

    // The end of the stream: the cursor's record alone. Nothing new, still ok.
    PageFixture end{records_with_ids({102})};
    outcome = strategy->advance(Cursor::at_id(102), end.view(), 3);
    CHECK_FALSE(outcome.problem);
    CHECK(outcome.first_new == 1);
    CHECK(outcome.next == Cursor::at_id(102));
    CHECK(outcome.at_end);

    // Without that record (deleted, or the first page): all new.
    PageFixture first{records_with_ids({1, 2})};
    CHECK(strategy->advance(Cursor::at_id(0), first.view(), 3).first_new == 0);

    // A limit of one would ask for the cursor's record forever.
    outcome = strategy->advance(Cursor::at_id(102), end.view(), 1);
    REQUIRE(outcome.problem);
    CHECK_THAT(*outcome.problem, Catch::Contains("raise --batch-size"));
}

TEST_CASE("after-id: a short page with a Link rel=next is not the end (an API capping its page size)") {
    const auto strategy = make_paging_strategy(paging_of(PagingStyle::after_id));
    PageFixture page{records_with_ids({5, 6})};
    page.link_header_next = true;
    auto outcome = strategy->advance(Cursor::at_id(4), page.view(), 100);
    CHECK_FALSE(outcome.problem);
    CHECK(outcome.next == Cursor::at_id(6));
    CHECK_FALSE(outcome.at_end);
    // An empty page is the end, link or not; and the body's word outranks the header.
    PageFixture empty;
    empty.link_header_next = true;
    CHECK(strategy->advance(Cursor::at_id(6), empty.view(), 100).at_end);
    page.has_more = false;
    CHECK(strategy->advance(Cursor::at_id(4), page.view(), 100).at_end);
}
