#include <catch2/catch.hpp>

#include "support/paging_fixture.h"

using namespace tributary;
using namespace tributary::testing;

TEST_CASE("cursor: the first page is asked without a token, the next with the token that names it") {
    auto paging = paging_of(PagingStyle::cursor);
    paging.params = {{"types", "message"}};
    const auto strategy = make_paging_strategy(paging);
    CHECK(query_of(strategy->request(Cursor::at(""), 200)) == "types=message&limit=200");
    CHECK(query_of(strategy->request(Cursor::at("dXNlcjpVMEc5V0ZYTlo=", 3), 200)) ==
          "types=message&cursor=dXNlcjpVMEc5V0ZYTlo=&limit=200");
}

TEST_CASE("cursor: a page with a next token stores the records not taken yet and moves to the token") {
    const auto strategy = make_paging_strategy(paging_of(PagingStyle::cursor));
    PageFixture page{records_counted(4)};
    page.next = "t2";
    auto outcome = strategy->advance(Cursor::at("t1"), page.view(), 4);
    CHECK_FALSE(outcome.problem);
    CHECK(outcome.first_new == 0);
    CHECK(outcome.next == Cursor::at("t2", 0));
    CHECK_FALSE(outcome.at_end);

    // The last page, asked again after more records were appended to it.
    outcome = strategy->advance(Cursor::at("t1", 3), page.view(), 4);
    CHECK(outcome.first_new == 3);
    CHECK(outcome.next == Cursor::at("t2", 0));
}

TEST_CASE("cursor: without a next token the page is the last: kept as the position with its size taken") {
    const auto strategy = make_paging_strategy(paging_of(PagingStyle::cursor));
    PageFixture page{records_counted(3)};
    auto outcome = strategy->advance(Cursor::at("t1", 1), page.view(), 10);
    CHECK(outcome.first_new == 1);
    CHECK(outcome.next == Cursor::at("t1", 3));
    CHECK(outcome.at_end);

    // Asked again with nothing new: the same cursor, nothing to store.
    outcome = strategy->advance(Cursor::at("t1", 3), page.view(), 10);
    CHECK(outcome.first_new == 3);
    CHECK(outcome.next == Cursor::at("t1", 3));

    // Slack's last page: an empty next_cursor.
    page.next = "";
    CHECK(strategy->advance(Cursor::at("", 0), page.view(), 10).next == Cursor::at("", 3));
}

TEST_CASE("cursor: has-more false outranks a token") {
    const auto strategy = make_paging_strategy(paging_of(PagingStyle::cursor));
    PageFixture page{records_counted(2)};
    page.next = "t9";
    page.has_more = false;
    const auto outcome = strategy->advance(Cursor::at("t8"), page.view(), 2);
    CHECK(outcome.next == Cursor::at("t8", 2));
    CHECK(outcome.at_end);
}

TEST_CASE("cursor: a page smaller than what was taken from it is refused") {
    const auto strategy = make_paging_strategy(paging_of(PagingStyle::cursor));
    PageFixture page{records_counted(2)};
    const auto outcome = strategy->advance(Cursor::at("t1", 3), page.view(), 10);
    REQUIRE(outcome.problem);
    CHECK(outcome.problem->find("shrank from 3 to 2 records") != std::string::npos);
    CHECK(outcome.next == Cursor::at("t1", 3));
}

TEST_CASE("cursor: a next token that repeats the current one is a loop") {
    const auto strategy = make_paging_strategy(paging_of(PagingStyle::cursor));
    PageFixture page{records_counted(2)};
    page.next = "same";
    const auto outcome = strategy->advance(Cursor::at("same"), page.view(), 2);
    REQUIRE(outcome.problem);
    CHECK(*outcome.problem == R"(the next token repeats the current one "same": the API would loop)");
}

TEST_CASE("cursor: a next token over 8 KB is refused") {
    const auto strategy = make_paging_strategy(paging_of(PagingStyle::cursor));
    PageFixture page{records_counted(1)};
    page.next = std::string(kMaxCursorBytes + 1, 'z');
    const auto outcome = strategy->advance(Cursor::at(""), page.view(), 1);
    REQUIRE(outcome.problem);
    CHECK(printable_line(*outcome.problem));
    CHECK(outcome.problem->find("next token is over 8192 bytes") != std::string::npos);
}

TEST_CASE("cursor: a walk over an API that grows its last page stores every record once") {
    // Pages of 2: t0 -> [k0 k1] next t1 -> [k2] (no next). Later k3, k4 are
    // appended: t1 -> [k2 k3] next t2 -> [k4].
    const auto strategy = make_paging_strategy(paging_of(PagingStyle::cursor));
    std::vector<std::string> stored;
    auto take = [&](Cursor& at, const PageFixture& page) {
        const auto outcome = strategy->advance(at, page.view(), 2);
        REQUIRE_FALSE(outcome.problem);
        for (auto i = outcome.first_new; i < page.records.size(); ++i) stored.push_back(page.records[i].key);
        at = outcome.next;
        return outcome.at_end;
    };
    Cursor at = Cursor::at("");
    PageFixture first{records_counted(2)};
    first.next = "t1";
    CHECK_FALSE(take(at, first));
    PageFixture second{records_counted(1, 2)};
    CHECK(take(at, second));
    CHECK(at == Cursor::at("t1", 1));
    PageFixture grown{records_counted(2, 2)};
    grown.next = "t2";
    CHECK_FALSE(take(at, grown));
    PageFixture last{records_counted(1, 4)};
    CHECK(take(at, last));
    CHECK(stored == std::vector<std::string>{"k0", "k1", "k2", "k3", "k4"});
}
