#include <catch2/catch.hpp>

#include "support/paging_fixture.h"

using namespace tributary;
using namespace tributary::testing;
using namespace std::chrono_literals;

namespace {

Paging time_paging(std::chrono::seconds lookback = 0s) {
    auto paging = paging_of(PagingStyle::time);
    paging.cursor_param = "updated_since";
    paging.time_field = "/updated_at";
    paging.lookback = lookback;
    return paging;
}

PageFixture timed(std::vector<std::string> times) {
    PageFixture page{records_counted(times.size())};
    page.times = std::move(times);
    return page;
}

}  // namespace

TEST_CASE("time: nothing sent before a watermark; without a lookback the watermark as read") {
    const auto strategy = make_paging_strategy(time_paging());
    CHECK(query_of(strategy->request(Cursor::at(""), 100)) == "limit=100");
    CHECK(query_of(strategy->request(Cursor::at("2024-01-01T01:00:00+01:00"), 100)) ==
          "updated_since=2024-01-01T01:00:00+01:00&limit=100");
    CHECK(query_of(strategy->request(Cursor::at("1700000000.5"), 100)) == "updated_since=1700000000.5&limit=100");
}

TEST_CASE("time: with a lookback, the watermark minus it, in the watermark's own format") {
    const auto strategy = make_paging_strategy(time_paging(60s));
    CHECK(query_of(strategy->request(Cursor::at("2024-01-01T01:00:00+01:00"), 10)) ==
          "updated_since=2023-12-31T23:59:00Z&limit=10");
    CHECK(query_of(strategy->request(Cursor::at("2024-01-01T00:00:00.250Z"), 10)) ==
          "updated_since=2023-12-31T23:59:00.250Z&limit=10");
    CHECK(query_of(strategy->request(Cursor::at("1700000000"), 10)) == "updated_since=1699999940&limit=10");
}

TEST_CASE("time: a watermark that is no timestamp is a problem, not an exception") {
    const auto strategy = make_paging_strategy(time_paging(60s));
    const auto request = strategy->request(Cursor::at("yesterday"), 10);
    REQUIRE(request.problem);
    CHECK(*request.problem == R"(--paginate time: the cursor "yesterday" is no timestamp)");
    auto page = timed({"2024-01-01T00:00:00Z"});
    CHECK(strategy->advance(Cursor::at("yesterday"), page.view(), 10).problem);
}

TEST_CASE("time: the new watermark is the latest record's time as written, compared as instants") {
    const auto strategy = make_paging_strategy(time_paging());
    auto page = timed({"2024-01-01T00:00:05Z", "2024-01-01T01:00:09+01:00", "1704067207"});
    const auto outcome = strategy->advance(Cursor::at("2024-01-01T00:00:00Z"), page.view(), 10);
    CHECK_FALSE(outcome.problem);
    CHECK(outcome.first_new == 0);
    CHECK(outcome.next == Cursor::at("2024-01-01T01:00:09+01:00"));
    CHECK(outcome.at_end);
}

TEST_CASE("time: the first page sets the watermark; an empty page leaves it") {
    const auto strategy = make_paging_strategy(time_paging());
    auto page = timed({"1700000001", "1700000003"});
    CHECK(strategy->advance(Cursor::at(""), page.view(), 2).next == Cursor::at("1700000003"));
    PageFixture empty;
    const auto outcome = strategy->advance(Cursor::at("1700000003"), empty.view(), 2);
    CHECK(outcome.next == Cursor::at("1700000003"));
    CHECK(outcome.at_end);
}

TEST_CASE("time: the body's next start time wins over the records' (Zendesk end_time)") {
    auto paging = time_paging();
    paging.next = "/end_time";
    paging.end_of_stream = "/end_of_stream";
    const auto strategy = make_paging_strategy(paging);
    auto page = timed({"1700000001", "1700000002"});
    page.next = "1700000010";
    page.end_of_stream = false;
    auto outcome = strategy->advance(Cursor::at("1700000000"), page.view(), 1000);
    CHECK(outcome.next == Cursor::at("1700000010"));
    CHECK_FALSE(outcome.at_end);  // end_of_stream false: more, though the page is short

    page.end_of_stream = true;
    CHECK(strategy->advance(Cursor::at("1700000000"), page.view(), 1000).at_end);

    // Without --time-field values, --next alone moves the watermark.
    PageFixture bare{records_counted(2)};
    bare.next = "1700000020";
    CHECK(strategy->advance(Cursor::at("1700000000"), bare.view(), 2).next == Cursor::at("1700000020"));
}

TEST_CASE("time: a record time that is no timestamp names the record and the value, cut") {
    const auto strategy = make_paging_strategy(time_paging());
    auto page = timed({"1700000001", "not a time at all, and far longer than forty characters"});
    const auto outcome = strategy->advance(Cursor::at(""), page.view(), 10);
    REQUIRE(outcome.problem);
    CHECK(printable_line(*outcome.problem));
    CHECK(outcome.problem->find(R"(--time-field /updated_at of record #1 (key "k1") is no timestamp: )") == 0);
    CHECK(outcome.problem->find("characters)") != std::string::npos);
    CHECK(outcome.problem->find("forty characters\"") == std::string::npos);
}

TEST_CASE("time: a --next that is no timestamp is refused") {
    auto paging = time_paging();
    paging.next = "/end_time";
    const auto strategy = make_paging_strategy(paging);
    auto page = timed({"1700000001"});
    page.next = "soon";
    const auto outcome = strategy->advance(Cursor::at(""), page.view(), 10);
    REQUIRE(outcome.problem);
    CHECK(*outcome.problem == R"(--next /end_time is no timestamp: "soon")");
}

TEST_CASE("time: a watermark gone back beyond the lookback is refused") {
    const auto strategy = make_paging_strategy(time_paging(60s));
    auto page = timed({"2024-01-01T00:08:00Z"});
    const auto outcome = strategy->advance(Cursor::at("2024-01-01T00:10:00Z"), page.view(), 10);
    REQUIRE(outcome.problem);
    CHECK(
        *outcome.problem ==
        R"(watermark went back from "2024-01-01T00:10:00Z" to "2024-01-01T00:08:00Z", beyond the --lookback of 60 s)");
    CHECK(outcome.next == Cursor::at("2024-01-01T00:10:00Z"));
}

TEST_CASE("time: records within the lookback, read again, leave the watermark where it was") {
    const auto strategy = make_paging_strategy(time_paging(60s));
    auto page = timed({"2024-01-01T00:09:10Z", "2024-01-01T00:09:30Z"});
    const auto outcome = strategy->advance(Cursor::at("2024-01-01T00:10:00Z"), page.view(), 10);
    CHECK_FALSE(outcome.problem);
    CHECK(outcome.first_new == 0);
    CHECK(outcome.next == Cursor::at("2024-01-01T00:10:00Z"));
    CHECK(outcome.at_end);
}

TEST_CASE("time: the same instant written otherwise keeps the watermark's text") {
    const auto strategy = make_paging_strategy(time_paging());
    auto page = timed({"2024-01-01T01:00:00+01:00"});
    CHECK(strategy->advance(Cursor::at("2024-01-01T00:00:00Z"), page.view(), 10).next ==
          Cursor::at("2024-01-01T00:00:00Z"));
}

TEST_CASE("time: a full page that cannot move the watermark would loop: refused") {
    auto page = timed({"1700000000", "1700000000", "1700000000"});
    auto outcome = make_paging_strategy(time_paging())->advance(Cursor::at("1700000000"), page.view(), 3);
    REQUIRE(outcome.problem);
    CHECK(*outcome.problem == R"(more than 3 records at one timestamp "1700000000": raise --batch-size)");

    auto window = timed({"2024-01-01T00:09:10Z", "2024-01-01T00:09:20Z", "2024-01-01T00:09:30Z"});
    outcome = make_paging_strategy(time_paging(60s))->advance(Cursor::at("2024-01-01T00:10:00Z"), window.view(), 3);
    REQUIRE(outcome.problem);
    CHECK(*outcome.problem ==
          R"(more than 3 records from "2024-01-01T00:09:00Z" to "2024-01-01T00:10:00Z" (the --lookback of 60 s): )"
          "raise --batch-size or lower --lookback");

    // The same page with the source saying it is the end: nothing loops.
    page.has_more = false;
    outcome = make_paging_strategy(time_paging())->advance(Cursor::at("1700000000"), page.view(), 3);
    CHECK_FALSE(outcome.problem);
    CHECK(outcome.at_end);
}

TEST_CASE("time: a full page that moves the watermark is not the end") {
    auto page = timed({"1700000000", "1700000001", "1700000002"});
    const auto outcome = make_paging_strategy(time_paging())->advance(Cursor::at("1700000000"), page.view(), 3);
    CHECK_FALSE(outcome.problem);
    CHECK(outcome.next == Cursor::at("1700000002"));
    CHECK_FALSE(outcome.at_end);
}

TEST_CASE("time: a page cut by the limit must come oldest first, or the rest would be skipped") {
    const auto strategy = make_paging_strategy(time_paging());
    auto page = timed({"1700000005", "1700000009", "1700000007"});
    auto outcome = strategy->advance(Cursor::at("1700000000"), page.view(), 3);
    REQUIRE(outcome.problem);
    CHECK(*outcome.problem ==
          R"(records are not oldest first by --time-field /updated_at: record #2 (key "k2") has "1700000007" after )"
          R"("1700000009")");

    // The whole window in one page (the end): its order does not matter.
    outcome = strategy->advance(Cursor::at("1700000000"), page.view(), 10);
    CHECK_FALSE(outcome.problem);
    CHECK(outcome.next == Cursor::at("1700000009"));

    // Ties are in order.
    auto ties = timed({"1700000005", "1700000005", "1700000006"});
    CHECK_FALSE(strategy->advance(Cursor::at("1700000000"), ties.view(), 3).problem);
}
