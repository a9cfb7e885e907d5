#include <catch2/catch.hpp>

#include "support/paging_fixture.h"

using namespace tributary;
using namespace tributary::testing;

TEST_CASE("after-key asks from the start without the cursor parameter, then after the last stored key") {
    const auto strategy = make_paging_strategy(paging_of(PagingStyle::after_key));
    CHECK(query_of(strategy->request(Cursor::at(""), 10)) == "limit=10");
    CHECK(query_of(strategy->request(Cursor::at("evt_3"), 10)) == "starting_after=evt_3&limit=10");
}

TEST_CASE("after-key moves to the last record's key, nothing skipped") {
    const auto strategy = make_paging_strategy(paging_of(PagingStyle::after_key));
    PageFixture page{records_keyed({"evt_4", "evt_5", "evt_6"})};
    const auto outcome = strategy->advance(Cursor::at("evt_3"), page.view(), 3);
    CHECK_FALSE(outcome.problem);
    CHECK(outcome.first_new == 0);
    CHECK(outcome.next == Cursor::at("evt_6"));
    CHECK_FALSE(outcome.at_end);
}

TEST_CASE("after-key is at the end on a short page, on has-more false; an empty page keeps the cursor") {
    const auto strategy = make_paging_strategy(paging_of(PagingStyle::after_key));
    PageFixture short_page{records_keyed({"a"})};
    CHECK(strategy->advance(Cursor::at(""), short_page.view(), 2).at_end);

    PageFixture full{records_keyed({"a", "b"})};
    full.has_more = false;
    const auto outcome = strategy->advance(Cursor::at(""), full.view(), 2);
    CHECK(outcome.at_end);
    CHECK(outcome.next == Cursor::at("b"));

    PageFixture empty;
    const auto nothing = strategy->advance(Cursor::at("b"), empty.view(), 2);
    CHECK(nothing.next == Cursor::at("b"));
    CHECK(nothing.at_end);
}

TEST_CASE("after-key: a page after X that ends with X means the API ignored the parameter") {
    auto paging = paging_of(PagingStyle::after_key);
    paging.cursor_param = "after";
    const auto strategy = make_paging_strategy(paging);
    PageFixture again{records_keyed({"a", "b", "c"})};
    const auto outcome = strategy->advance(Cursor::at("c"), again.view(), 3);
    REQUIRE(outcome.problem);
    CHECK(*outcome.problem == R"(the API ignored after: the page after "c" ends with "c")");
    CHECK(outcome.next == Cursor::at("c"));
}

TEST_CASE("after-key refuses a last key over 8 KB, quoting only its start") {
    const auto strategy = make_paging_strategy(paging_of(PagingStyle::after_key));
    PageFixture page{records_keyed({"a", std::string(kMaxCursorBytes + 1, 'x')})};
    const auto outcome = strategy->advance(Cursor::at(""), page.view(), 10);
    REQUIRE(outcome.problem);
    CHECK(printable_line(*outcome.problem));
    CHECK(outcome.problem->find("over 8192 bytes") != std::string::npos);
    CHECK(outcome.problem->find("(8193 characters)") != std::string::npos);

    PageFixture exactly{records_keyed({std::string(kMaxCursorBytes, 'x')})};
    CHECK_FALSE(strategy->advance(Cursor::at(""), exactly.view(), 10).problem);
}

TEST_CASE("after-key: a key with control characters is quoted printable") {
    const auto strategy = make_paging_strategy(paging_of(PagingStyle::after_key));
    PageFixture page{records_keyed({"a\nb"})};
    const auto outcome = strategy->advance(Cursor::at("a\nb"), page.view(), 10);
    REQUIRE(outcome.problem);
    CHECK(printable_line(*outcome.problem));
    CHECK(outcome.problem->find("\"a?b\"") != std::string::npos);
}

TEST_CASE("after-key refuses an event-id cursor") {
    const auto strategy = make_paging_strategy(paging_of(PagingStyle::after_key));
    CHECK(strategy->request(Cursor::at_id(3), 10).problem);
    PageFixture empty;
    CHECK(strategy->advance(Cursor::at_id(3), empty.view(), 10).problem);
}

TEST_CASE("an empty --cursor-param stands for the style's default") {
    Paging paging;
    paging.style = PagingStyle::after_key;
    paging.cursor_param = "";
    CHECK(query_of(make_paging_strategy(paging)->request(Cursor::at("k"), 5)) == "starting_after=k&limit=5");
}

TEST_CASE("after-key --inclusive: the page after X starts with X, which is skipped; X alone is the end, ok") {
    auto paging = paging_of(PagingStyle::after_key);
    paging.cursor_param = "id_gte";
    paging.inclusive = true;
    const auto strategy = make_paging_strategy(paging);
    PageFixture page{records_keyed({"c", "d", "e"})};
    auto outcome = strategy->advance(Cursor::at("c"), page.view(), 3);
    CHECK_FALSE(outcome.problem);
    CHECK(outcome.first_new == 1);
    CHECK(outcome.next == Cursor::at("e"));

    PageFixture end{records_keyed({"e"})};
    outcome = strategy->advance(Cursor::at("e"), end.view(), 3);
    CHECK_FALSE(outcome.problem);
    CHECK(outcome.first_new == 1);
    CHECK(outcome.next == Cursor::at("e"));
    CHECK(outcome.at_end);

    // An API that ignores the parameter still gives itself away: the page after "c" ends with "c".
    PageFixture ignored{records_keyed({"a", "b", "c"})};
    outcome = strategy->advance(Cursor::at("c"), ignored.view(), 3);
    REQUIRE(outcome.problem);
    CHECK_THAT(*outcome.problem, Catch::Contains("the API ignored id_gte"));
}

TEST_CASE("after-key without --inclusive: X alone after X is still an API that ignores the parameter") {
    const auto strategy = make_paging_strategy(paging_of(PagingStyle::after_key));
    PageFixture end{records_keyed({"e"})};
    CHECK(strategy->advance(Cursor::at("e"), end.view(), 3).problem);
}

TEST_CASE("after-key: a short page with a Link rel=next is not the end") {
    const auto strategy = make_paging_strategy(paging_of(PagingStyle::after_key));
    PageFixture page{records_keyed({"a", "b"})};
    page.link_header_next = true;
    CHECK_FALSE(strategy->advance(Cursor::at(""), page.view(), 100).at_end);
    page.link_header_next = false;
    CHECK(strategy->advance(Cursor::at(""), page.view(), 100).at_end);
}

TEST_CASE("--inclusive: the cursor's record alone is the end even when the answer says more (no request loop)") {
    for (const auto style : {PagingStyle::after_id, PagingStyle::after_key}) {
        auto paging = paging_of(style);
        paging.inclusive = true;
        const auto strategy = make_paging_strategy(paging);
        const bool by_id = style == PagingStyle::after_id;
        PageFixture alone{by_id ? records_with_ids({9}) : records_keyed({"9"})};
        alone.link_header_next = true;
        alone.has_more = true;
        const Cursor at = by_id ? Cursor::at_id(9) : Cursor::at("9");
        const auto outcome = strategy->advance(at, alone.view(), 50);
        CHECK_FALSE(outcome.problem);
        CHECK(outcome.first_new == 1);
        CHECK(outcome.next == at);
        CHECK(outcome.at_end);
    }
}
