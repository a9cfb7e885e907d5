// consumer_next's events array read into LoggedEvents: payloads cut out byte
// for byte, keys decoded, anything else refused.

#include <catch2/catch.hpp>

#include "postgres/batch_events_json.h"

using namespace tributary;
using tributary::postgres::MalformedBatchJson;
using tributary::postgres::read_batch_events;

TEST_CASE("batch events json: each payload is the exact text PostgreSQL printed") {
    // As json_agg(json_build_object(...)) prints it, spaces and all.
    const std::string json =
        R"([{"seq" : 7, "source" : "a.b", "event_id" : 9, "event_key" : "9", )"
        R"("payload" : {"n": 1.50, "big": 123456789012345678901234567890, "s": "\u0001 \"q\""}, "delivery" : 2}, )"
        "\n "
        R"({"seq" : 8, "source" : "c.d", "event_id" : null, "event_key" : "[\"42\",\"x\\y \u00e9\"]", )"
        R"("payload" : [1, {"a": []}], "delivery" : 2}, )"
        R"({"seq" : 9, "source" : "c.d", "event_id" : null, "event_key" : "k", "payload" : "text", "delivery" : 2}])";
    const auto events = read_batch_events(json);
    REQUIRE(events.size() == 3);
    CHECK(events[0].seq == 7);
    CHECK(events[0].source == "a.b");
    CHECK(events[0].event_id == std::optional<std::int64_t>(9));
    CHECK(events[0].event_key == "9");
    CHECK(events[0].payload == R"({"n": 1.50, "big": 123456789012345678901234567890, "s": "\u0001 \"q\""})");
    CHECK_FALSE(events[1].event_id.has_value());
    CHECK(events[1].event_key == "[\"42\",\"x\\y \xc3\xa9\"]");
    CHECK(events[1].payload == R"([1, {"a": []}])");
    CHECK(events[2].payload == R"("text")");
}

TEST_CASE("batch events json: an empty array is no events") { CHECK(read_batch_events("[]").empty()); }

TEST_CASE("batch events json: what consumer_next does not print is refused") {
    const auto refused = [](const std::string& json) { CHECK_THROWS_AS(read_batch_events(json), MalformedBatchJson); };
    refused("");
    refused("{}");
    refused("[1]");
    refused(R"([{"seq" : 1, "source" : "a", "event_key" : "1"}])");  // no payload
    refused(R"([{"seq" : 1.5, "source" : "a", "event_key" : "1", "payload" : {}}])");
    refused(R"([{"seq" : 99999999999999999999, "source" : "a", "event_key" : "1", "payload" : {}}])");
    refused(R"([{"seq" : 1, "source" : 3, "event_key" : "1", "payload" : {}}])");
    refused(R"([{"seq" : 1, "source" : "a", "event_key" : "1", "payload" : {}])");  // cut short
    refused(R"([{"seq" : 1, "source" : "a", "event_key" : "1", "payload" : {}}] x)");
}
