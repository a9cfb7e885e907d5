#include <catch2/catch.hpp>

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "http/batch_parser.h"

using tributary::FetchLimits;
using tributary::FetchResult;
using tributary::parse_batch;
using Status = FetchResult::Status;

namespace {

const FetchLimits defaults{};

std::string event(const std::string& id, const std::string& payload) {
    return R"({"id":)" + id + R"(,"payload":)" + payload + "}";
}

std::string wrapped(const std::vector<std::string>& events) {
    std::string out = R"({"events":[)";
    for (std::size_t i = 0; i < events.size(); ++i) out += (i ? "," : "") + events[i];
    return out + "]}";
}

// Errors are stored in PostgreSQL and shown by `status`, whatever the body held.
bool printable_ascii(const std::string& s) {
    for (unsigned char c : s)
        if (c < 0x20 || c > 0x7e) return false;
    return true;
}

std::vector<std::int64_t> ids(const FetchResult& r) {
    std::vector<std::int64_t> out;
    for (const auto& e : r.events) out.push_back(e.id);
    return out;
}

}  // namespace

TEST_CASE("parse_batch accepts both shapes and keeps the first `limit` events", "[batch_parser]") {
    struct Case {
        const char* name;
        std::string body;
        std::int64_t after_id;
        int limit;
        std::vector<std::int64_t> expected;
    };
    const std::vector<Case> cases = {
        {"object shape", wrapped({event("101", "{}"), event("102", "[]")}), 100, 10, {101, 102}},
        {"bare array", "[" + event("5", "1") + "," + event("9", "2") + "]", 0, 10, {5, 9}},
        {"empty object list", R"({"events":[]})", 7, 10, {}},
        {"empty bare array", "[]", 7, 10, {}},
        {"whitespace around", " \n\t[ ]\r\n", 0, 10, {}},
        {"other top-level keys ignored", R"({"next":"x","events":[)" + event("3", "null") + "]}", 0, 10, {3}},
        {"other event keys ignored", R"([{"id":4,"payload":1,"ts":"2024"}])", 0, 10, {4}},
        {"limit truncates", wrapped({event("1", "1"), event("2", "2"), event("3", "3")}), 0, 2, {1, 2}},
        {"limit equal to size", wrapped({event("1", "1"), event("2", "2")}), 0, 2, {1, 2}},
        {"limit zero", wrapped({event("1", "1")}), 0, 0, {}},
        {"ids may skip", wrapped({event("10", "1"), event("20", "2")}), 9, 10, {10, 20}},
        {"int64 max id", wrapped({event("9223372036854775807", "1")}), 0, 10, {INT64_MAX}},
        {"negative ids above a negative cursor", wrapped({event("-5", "1"), event("-2", "1")}), -10, 10, {-5, -2}},
        {"brackets inside strings do not count as depth",
         wrapped({event("1", "\"" + std::string(200, '[') + "\"")}),
         0,
         10,
         {1}},
        {"escaped quote inside string", wrapped({event("1", R"({"a\"[":"\\\"{{"})")}), 0, 10, {1}},
    };
    for (const auto& c : cases) {
        INFO(c.name);
        const FetchResult r = parse_batch(c.body, c.after_id, c.limit, defaults);
        CHECK(r.status == Status::ok);
        CHECK(r.error.empty());
        CHECK(ids(r) == c.expected);
    }
}

TEST_CASE("parse_batch rejects bad bodies with the right status and a message naming the cause", "[batch_parser]") {
    struct Case {
        const char* name;
        std::string body;
        Status status;
        std::string message;
        std::int64_t after_id = 0;
        int limit = 1000;
    };
    const std::vector<Case> cases = {
        // The body itself: transient, the next response may be whole.
        {"empty body", "", Status::transient, "malformed JSON body"},
        {"truncated", R"({"events":[{"id":1,"payload":{"a":)", Status::transient, "unexpected end of input"},
        {"not JSON", "<html><body>Bad gateway</body></html>", Status::transient, "malformed JSON body"},
        {"syntax error has position", R"({"events":[{"id":1,"payload":1},]})", Status::transient, "column 33"},
        {"trailing garbage", "[] []", Status::transient, "malformed JSON body"},
        {"invalid UTF-8", wrapped({event("1", "\"\xff\xfe\"")}), Status::transient, "malformed JSON body"},
        {"lone surrogate", wrapped({event("1", R"("\ud800")")}), Status::transient, "surrogate"},
        {"top-level number", "42", Status::transient, "top-level JSON is an integer"},
        {"top-level string", "\"events\"", Status::transient, "top-level JSON is a string"},
        {"top-level null", "null", Status::transient, "top-level JSON is null"},
        {"object without events", R"({"data":[]})", Status::transient, "no \"events\" member"},
        {"events not an array", R"({"events":{"id":1}})", Status::transient, "\"events\" is an object"},
        {"too deep", wrapped({event("1", std::string(62, '[') + std::string(62, ']'))}), Status::transient,
         "nested deeper than 64 levels"},
        // The events: failing, the source is wrong.
        {"element not an object", "[1]", Status::failing, "event #0 is an integer, expected an object"},
        {"id missing", wrapped({event("1", "1"), R"({"payload":1})"}), Status::failing, "event #1: id is missing"},
        {"id string", wrapped({event("1", "1"), event("2", "2"), event("3", "3"), event("\"4\"", "4")}),
         Status::failing, "event #3: id is a string, expected an integer"},
        {"id float", wrapped({event("1.5", "1")}), Status::failing, "id is a floating-point number (1.5)"},
        {"id integral float", wrapped({event("2.0", "1")}), Status::failing, "id is a floating-point number"},
        {"id exponent", wrapped({event("1e3", "1")}), Status::failing, "id is a floating-point number"},
        {"id boolean", wrapped({event("true", "1")}), Status::failing, "id is a boolean"},
        {"id null", wrapped({event("null", "1")}), Status::failing, "id is null"},
        {"id object", wrapped({event("{}", "1")}), Status::failing, "id is an object"},
        {"id just over int64", wrapped({event("9223372036854775808", "1")}), Status::failing,
         "id 9223372036854775808 is out of the 64-bit signed integer range"},
        {"id over uint64", wrapped({event("99999999999999999999999", "1")}), Status::failing,
         "out of the 64-bit signed integer range"},
        {"id under int64", wrapped({event("-9223372036854775809", "1")}), Status::failing,
         "out of the 64-bit signed integer range", INT64_MIN, 1000},
        {"payload missing", wrapped({event("1", "1"), R"({"id":2})"}), Status::failing,
         "event #1 (id 2): payload is missing"},
        {"NUL in value", wrapped({event("7", R"({"a":"x\u0000y"})")}), Status::failing,
         "event #0 (id 7): payload has U+0000 in a string value"},
        {"NUL in key", wrapped({event("7", R"({"a\u0000":1})")}), Status::failing,
         "event #0 (id 7): payload has U+0000 in a key"},
        {"NUL deep in an array", wrapped({event("1", "1"), event("8", R"([1,[{"k":["\u0000"]}]])")}), Status::failing,
         "event #1 (id 8): payload has U+0000"},
        {"NUL as the payload", wrapped({event("9", R"("\u0000")")}), Status::failing, "(id 9): payload has U+0000"},
        {"ids not increasing", wrapped({event("5", "1"), event("5", "1")}), Status::failing, "not strictly increasing"},
        {"ids decreasing", wrapped({event("6", "1"), event("5", "1")}), Status::failing, "not strictly increasing"},
        {"id equal to cursor", wrapped({event("10", "1")}), Status::failing, "not greater than the cursor", 10},
        {"id below cursor", wrapped({event("3", "1")}), Status::failing, "not greater than the cursor", 10},
        // The whole body is checked, not only the events that the limit keeps.
        {"bad id beyond the limit", wrapped({event("1", "1"), event("\"x\"", "1")}), Status::failing,
         "event #1: id is a string", 0, 1},
        {"disorder beyond the limit", wrapped({event("2", "1"), event("1", "1")}), Status::failing,
         "not strictly increasing", 0, 1},
        {"NUL beyond the limit", wrapped({event("1", "1"), event("2", R"("\u0000")")}), Status::failing,
         "(id 2): payload has U+0000", 0, 1},
    };
    for (const auto& c : cases) {
        INFO(c.name << ": " << c.body.substr(0, 200));
        const FetchResult r = parse_batch(c.body, c.after_id, c.limit, defaults);
        CHECK(r.status == c.status);
        CHECK_THAT(r.error, Catch::Contains(c.message));
        CHECK(printable_ascii(r.error));
        CHECK(r.events.empty());
    }
}

TEST_CASE("parse_batch counts the envelope in the depth limit", "[batch_parser]") {
    // {"events":[{"payload": ...}]} is 3 levels, so 61 more fit in 64.
    const std::string fits = wrapped({event("1", std::string(61, '[') + std::string(61, ']'))});
    CHECK(parse_batch(fits, 0, 10, defaults).status == Status::ok);
    const std::string deeper = wrapped({event("1", std::string(62, '{') + std::string(62, '}'))});
    CHECK(parse_batch(deeper, 0, 10, defaults).status == Status::transient);

    FetchLimits shallow;
    shallow.max_depth = 3;
    CHECK(parse_batch(wrapped({event("1", "1")}), 0, 10, shallow).status == Status::ok);
    const FetchResult r = parse_batch(wrapped({event("1", "[]")}), 0, 10, shallow);
    CHECK(r.status == Status::transient);
    CHECK_THAT(r.error, Catch::Contains("deeper than 3 levels (at byte 29)"));
}

TEST_CASE("parse_batch rejects hostile nesting quickly and without recursion", "[batch_parser]") {
    const auto started = std::chrono::steady_clock::now();
    for (const std::string open : {"[", "{\"a\":"}) {
        std::string deep;
        for (int i = 0; i < 100000; ++i) deep += open;
        INFO("opening with " << open);
        const FetchResult bare = parse_batch(deep, 0, 10, defaults);
        CHECK(bare.status == Status::transient);
        CHECK_THAT(bare.error, Catch::Contains("nested deeper than 64 levels"));
        const FetchResult inside = parse_batch(wrapped({event("1", deep)}), 0, 10, defaults);
        CHECK(inside.status == Status::transient);
    }
    const std::string million = std::string(1000000, '[') + std::string(1000000, ']');
    CHECK(parse_batch(million, 0, 10, defaults).status == Status::transient);
    CHECK(std::chrono::steady_clock::now() - started < std::chrono::seconds(1));
}

TEST_CASE("parse_batch rejects a body over max_body_bytes", "[batch_parser]") {
    FetchLimits small;
    small.max_body_bytes = 16;
    const FetchResult r = parse_batch(wrapped({event("1", "1")}), 0, 10, small);
    CHECK(r.status == Status::transient);
    CHECK_THAT(r.error, Catch::Contains("larger than 16 bytes"));
}

TEST_CASE("parse_batch keeps each payload as the source wrote it", "[batch_parser]") {
    // The payload's own bytes, only the whitespace around the value dropped:
    // nothing is re-serialised, so jsonb sees what the source sent.
    struct Case {
        std::string payload;
        std::string expected;
    };
    const std::vector<Case> cases = {
        {R"({"a": 1})", R"({"a": 1})"},
        {R"( { "b" : [ 1 , 2.5 , "x" , null , true , false ] , "a" : { } } )",
         R"({ "b" : [ 1 , 2.5 , "x" , null , true , false ] , "a" : { } })"},
        {"\n\tnull\r\n", "null"},
        {"-0", "-0"},
        {"42", "42"},
        {"1E2", "1E2"},
        {R"("caf\u00e9 \u2603")", R"("caf\u00e9 \u2603")"},
        {"\"caf\xc3\xa9\"", "\"caf\xc3\xa9\""},
        {R"("tab\t quote\" slash\\ ctl\u0001 \/")", R"("tab\t quote\" slash\\ ctl\u0001 \/")"},
        {R"("\ud83d\ude00")", R"("\ud83d\ude00")"},
        {"[[[]]]", "[[[]]]"},
        {R"({"k":"}]\\"})", R"({"k":"}]\\"})"},
    };
    for (const auto& c : cases) {
        INFO(c.payload);
        const FetchResult r = parse_batch(wrapped({event("1", c.payload)}), 0, 10, defaults);
        REQUIRE(r.status == Status::ok);
        REQUIRE(r.events.size() == 1);
        CHECK(r.events[0].payload == c.expected);
    }
}

TEST_CASE("parse_batch keeps every digit of numbers a double cannot hold", "[batch_parser]") {
    // A dump() would print 1.2345678901234568e+22 and 0.1; jsonb keeps them exact.
    for (const std::string number : {
             "12345678901234567890123",
             "-12345678901234567890123",
             "18446744073709551616",  // uint64 max + 1
             "0.1000000000000000055511151231257827",
             "3.141592653589793238462643383279502884197",
             "-99999999999999999999999999.000000000000000000001e-7",
             "2.5e-400",  // a double would make it 0.0
         }) {
        INFO(number);
        for (const std::string& payload : {number, R"({"n": )" + number + "}", "[" + number + ",1]"}) {
            const FetchResult r = parse_batch(wrapped({event("1", payload)}), 0, 10, defaults);
            REQUIRE(r.status == Status::ok);
            REQUIRE(r.events.size() == 1);
            CHECK(r.events[0].payload == payload);
        }
    }
}

TEST_CASE("parse_batch takes the payload nlohmann reads, whatever the envelope looks like", "[batch_parser]") {
    struct Case {
        const char* name;
        std::string body;
        std::vector<std::string> expected;
        int limit = 10;
    };
    const std::vector<Case> cases = {
        {"bare array with whitespace",
         " [ {\n\"payload\" : { \"x\" : 1 } ,\"id\":1 } ,\t{\"id\":2,\"payload\":\"two\"\n} ] ",
         {R"({ "x" : 1 })", R"("two")"}},
        {"payload before id", R"({"events":[{"payload":[1, 2],"id":1}]})", {"[1, 2]"}},
        {"duplicate payload key: the last, as nlohmann", R"([{"id":1,"payload":1,"payload":{"last": true}}])",
         {R"({"last": true})"}},
        {"duplicate events key: the last, as nlohmann",
         R"({"events":[{"id":1,"payload":"old"}],"events":[{"id":2,"payload":"new"}]})", {R"("new")"}},
        {"escaped key", R"({"ev\u0065nts":[{"id":1,"pay\u006coad":{"a": 1}}]})", {R"({"a": 1})"}},
        {"nested payload and events keys are not the event's",
         R"({"meta":{"events":[]},"events":[{"id":1,"x":{"payload":0},"payload":"mine"}]})", {R"("mine")"}},
        {"byte order mark", "\xEF\xBB\xBF[{\"id\":1,\"payload\":{\"a\": 1}}]", {R"({"a": 1})"}},
        {"the limit cuts the right events",
         wrapped({event("1", "[ 1 ]"), event("2", "{ }"), event("3", "3")}), {"[ 1 ]", "{ }"}, 2},
    };
    for (const auto& c : cases) {
        INFO(c.name << ": " << c.body);
        const FetchResult r = parse_batch(c.body, 0, c.limit, defaults);
        REQUIRE(r.status == Status::ok);
        std::vector<std::string> payloads;
        for (const auto& e : r.events) payloads.push_back(e.payload);
        CHECK(payloads == c.expected);
    }
}
