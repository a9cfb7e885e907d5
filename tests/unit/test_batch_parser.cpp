#include <catch2/catch.hpp>

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/batch_rules.h"
#include "http/batch_parser.h"
#include "http/page_parser.h"

using tributary::FetchLimits;
using tributary::FetchResult;
using tributary::parse_batch;
using Status = FetchResult::Status;

namespace {

const FetchLimits kDefaults{};

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
        {"-0 is id 0", wrapped({event("-0", "1")}), -1, 10, {0}},
        {"a duplicate name elsewhere is not the loader's",
         R"({"x":1,"x":2,"events":[{"id":1,"a":1,"a":2,"payload":{"b":1,"b":2}}]})",
         0,
         10,
         {1}},
    };
    for (const auto& c : cases) {
        INFO(c.name);
        const FetchResult r = parse_batch(c.body, c.after_id, c.limit, kDefaults);
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
        // Ambiguity: a member the loader reads, twice.
        {"duplicate id", wrapped({event("1", "1"), R"({"id":2,"id":3,"payload":1})"}), Status::failing,
         "event #1: duplicate member \"id\""},
        {"duplicate payload", R"([{"id":1,"payload":1,"payload":2}])", Status::failing,
         "event #0: duplicate member \"payload\""},
        {"duplicate id, one escaped", R"([{"id":1,"i\u0064":1,"payload":1}])", Status::failing,
         "event #0: duplicate member \"id\""},
        {"duplicate events", R"({"events":[{"id":1,"payload":1}],"events":[{"id":2,"payload":2}]})", Status::failing,
         "duplicate member \"events\" in the top-level object"},
        {"duplicate remaining", R"({"remaining":1,"events":[],"remaining":2})", Status::failing,
         "duplicate member \"remaining\" in the top-level object"},
        {"duplicate events beats a bad event", R"({"events":[1],"ev\u0065nts":5})", Status::failing,
         "duplicate member \"events\""},
        {"id overflowing a double", wrapped({event("1e400", "1")}), Status::failing,
         "event #0: id is a floating-point number (1e400), expected an integer"},
        {"a long id is cut short", wrapped({event("1" + std::string(400, '0'), "1")}), Status::failing,
         "id 1000000000000000000000000000000000000000... (401 characters) is out of the 64-bit"},
        // Strict JSON, in the parts the loader does not read too.
        {"leading zero", wrapped({event("1", "01")}), Status::transient, "malformed JSON body"},
        {"bare fraction", wrapped({event("1", ".5")}), Status::transient, "malformed JSON body"},
        {"exponent without digits", wrapped({event("1", "1e")}), Status::transient, "expected a digit"},
        {"control character in a string", wrapped({event("1", "\"a\tb\"")}), Status::transient,
         "control character U+0009"},
        {"bad escape", wrapped({event("1", R"("\x41")")}), Status::transient, "invalid escape"},
        {"short unicode escape", wrapped({event("1", R"("\u12")")}), Status::transient, "invalid \\u escape"},
        {"lone low surrogate", wrapped({event("1", R"("\udc00")")}), Status::transient, "lone low surrogate"},
        {"overlong UTF-8", wrapped({event("1", "\"\xc0\xaf\"")}), Status::transient, "invalid UTF-8"},
        {"UTF-8 surrogate", wrapped({event("1", "\"\xed\xa0\x80\"")}), Status::transient, "invalid UTF-8"},
        {"UTF-8 past U+10FFFF", wrapped({event("1", "\"\xf4\x90\x80\x80\"")}), Status::transient, "invalid UTF-8"},
        {"UTF-8 cut short", wrapped({event("1", "\"\xe2\x82\"")}), Status::transient, "invalid UTF-8"},
        {"invalid UTF-8 in an ignored member", "{\"note\":\"\xff\",\"events\":[]}", Status::transient, "invalid UTF-8"},
        {"single quotes", "[{'id':1}]", Status::transient, "malformed JSON body"},
        {"trailing comma in an object", R"([{"id":1,"payload":1,}])", Status::transient, "a member name"},
        {"a NUL byte", std::string("[1,\0]", 5), Status::transient, "malformed JSON body"},
        {"a second line", "[\n  1,\n  x]", Status::transient, "line 3, column 3"},
    };
    for (const auto& c : cases) {
        INFO(c.name << ": " << c.body.substr(0, 200));
        const FetchResult r = parse_batch(c.body, c.after_id, c.limit, kDefaults);
        CHECK(r.status == c.status);
        CHECK_THAT(r.error, Catch::Contains(c.message));
        CHECK(printable_ascii(r.error));
        CHECK(r.events.empty());
    }
}

TEST_CASE("parse_batch counts the envelope in the depth limit", "[batch_parser]") {
    // {"events":[{"payload": ...}]} is 3 levels, so 61 more fit in 64.
    const std::string fits = wrapped({event("1", std::string(61, '[') + std::string(61, ']'))});
    CHECK(parse_batch(fits, 0, 10, kDefaults).status == Status::ok);
    const std::string deeper = wrapped({event("1", std::string(62, '{') + std::string(62, '}'))});
    CHECK(parse_batch(deeper, 0, 10, kDefaults).status == Status::transient);

    FetchLimits shallow;
    shallow.max_depth = 3;
    CHECK(parse_batch(wrapped({event("1", "1")}), 0, 10, shallow).status == Status::ok);
    const FetchResult r = parse_batch(wrapped({event("1", "[]")}), 0, 10, shallow);
    CHECK(r.status == Status::transient);
    CHECK_THAT(r.error, Catch::Contains("deeper than 3 levels (at byte 29)"));
}

TEST_CASE("parse_batch rejects hostile nesting quickly and without recursion", "[batch_parser]") {
    for (const std::string open : {"[", "{\"a\":"}) {
        std::string deep;
        for (int i = 0; i < 100000; ++i) deep += open;
        INFO("opening with " << open);
        const FetchResult bare = parse_batch(deep, 0, 10, kDefaults);
        CHECK(bare.status == Status::transient);
        CHECK_THAT(bare.error, Catch::Contains("nested deeper than 64 levels"));
        const FetchResult inside = parse_batch(wrapped({event("1", deep)}), 0, 10, kDefaults);
        CHECK(inside.status == Status::transient);
    }
    const std::string million = std::string(1000000, '[') + std::string(1000000, ']');
    CHECK(parse_batch(million, 0, 10, kDefaults).status == Status::transient);
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
        const FetchResult r = parse_batch(wrapped({event("1", c.payload)}), 0, 10, kDefaults);
        REQUIRE(r.status == Status::ok);
        REQUIRE(r.events.size() == 1);
        CHECK(r.events[0].payload == c.expected);
    }
}

TEST_CASE("parse_batch keeps every digit of numbers a double cannot hold", "[batch_parser]") {
    // A dump() would print 1.2345678901234568e+22 and 0.1; jsonb keeps them exact.
    for (const std::string number : {
             "12345678901234567890123", "-12345678901234567890123",
             "18446744073709551616",  // uint64 max + 1
             "0.1000000000000000055511151231257827", "3.141592653589793238462643383279502884197",
             "-99999999999999999999999999.000000000000000000001e-7",
             "2.5e-400",  // a double would make it 0.0
         }) {
        INFO(number);
        for (const std::string& payload : {number, R"({"n": )" + number + "}", "[" + number + ",1]"}) {
            const FetchResult r = parse_batch(wrapped({event("1", payload)}), 0, 10, kDefaults);
            REQUIRE(r.status == Status::ok);
            REQUIRE(r.events.size() == 1);
            CHECK(r.events[0].payload == payload);
        }
    }
}

TEST_CASE("parse_batch finds each payload, whatever the envelope looks like", "[batch_parser]") {
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
        {"escaped key", R"({"ev\u0065nts":[{"id":1,"pay\u006coad":{"a": 1}}]})", {R"({"a": 1})"}},
        {"nested payload and events keys are not the event's",
         R"({"meta":{"events":[]},"events":[{"id":1,"x":{"payload":0},"payload":"mine"}]})",
         {R"("mine")"}},
        {"byte order mark", "\xEF\xBB\xBF[{\"id\":1,\"payload\":{\"a\": 1}}]", {R"({"a": 1})"}},
        {"the limit cuts the right events",
         wrapped({event("1", "[ 1 ]"), event("2", "{ }"), event("3", "3")}),
         {"[ 1 ]", "{ }"},
         2},
    };
    for (const auto& c : cases) {
        INFO(c.name << ": " << c.body);
        const FetchResult r = parse_batch(c.body, 0, c.limit, kDefaults);
        REQUIRE(r.status == Status::ok);
        std::vector<std::string> payloads;
        for (const auto& e : r.events) payloads.push_back(e.payload);
        CHECK(payloads == c.expected);
    }
}

TEST_CASE("parse_batch reads only the envelope's own members and refuses U+0000 anywhere in a payload",
          "[batch_parser]") {
    struct Case {
        const char* name;
        std::string body;
        std::vector<std::int64_t> expected;
        std::vector<std::string> payloads;
    };
    const std::vector<Case> accepted = {
        {"look-alike keys deeper down are not the envelope's",
         R"({"meta":{"events":[1],"remaining":"x","id":"y"},)"
         R"("events":[{"x":{"id":"s","payload":"\u0000"},"id":1,"payload":{"id":"s","events":[],"payload":{}}}],)"
         R"("tail":[[{"id":"no"}],{"payload":"\u0000"},5]})",
         {1},
         {R"({"id":"s","events":[],"payload":{}})"}},
        {"containers inside an event's other members",
         R"([{"a":[{"id":"x"},[]],"id":3,"b":{"payload":null},"payload":[]}])",
         {3},
         {"[]"}},
        {"duplicates inside a payload are jsonb's to resolve",
         R"([{"id":1,"payload":{"a":1,"a":2}}])",
         {1},
         {R"({"a":1,"a":2})"}},
    };
    for (const auto& c : accepted) {
        INFO(c.name << ": " << c.body);
        const FetchResult r = parse_batch(c.body, 0, 10, kDefaults);
        REQUIRE(r.status == Status::ok);
        CHECK(ids(r) == c.expected);
        std::vector<std::string> payloads;
        for (const auto& e : r.events) payloads.push_back(e.payload);
        CHECK(payloads == c.payloads);
    }

    struct Rejected {
        const char* name;
        std::string body;
        Status status;
        std::string message;
    };
    const std::vector<Rejected> rejected = {
        {"a syntax error after a bad event", R"([{"id":"x","payload":1},])", Status::transient, "column 25"},
        {"the first bad event of several", wrapped({event("1", "1"), event("true", "1"), R"({"payload":1})"}),
         Status::failing, "event #1: id is a boolean"},
        {"a bad event beats an earlier id out of order",
         wrapped({event("2", "1"), event("1", "1"), event("3", "\"\\u0000\"")}), Status::failing,
         "event #2 (id 3): payload has U+0000"},
        // The payload is stored as its text, duplicates and all, and jsonb
        // refuses U+0000 even under a key that a later duplicate replaces.
        {"U+0000 under a replaced key inside the payload", R"([{"id":1,"payload":{"a":"\u0000","a":1}}])",
         Status::failing, "event #0 (id 1): payload has U+0000 in a string value"},
        {"U+0000 in a repeated key inside the payload", R"([{"id":1,"payload":{"a\u0000":1,"a\u0000":2}}])",
         Status::failing, "event #0 (id 1): payload has U+0000 in a key"},
        {"U+0000 in a value and a key", R"([{"id":1,"payload":{"b":"\u0000","a\u0000":1}}])", Status::failing,
         "payload has U+0000 in a string value"},
    };
    for (const auto& c : rejected) {
        INFO(c.name << ": " << c.body);
        const FetchResult r = parse_batch(c.body, 0, 10, kDefaults);
        CHECK(r.status == c.status);
        CHECK_THAT(r.error, Catch::Contains(c.message));
    }
}

TEST_CASE("parse_batch passes numbers on as text, whatever their size", "[batch_parser]") {
    // jsonb stores all of these; a parser reading them as doubles could not.
    for (const std::string& number : std::vector<std::string>{
             "1e309", "-1e400", "1E400", "2.5e-400", "1" + std::string(400, '0'), "123456789012345678901234567890"}) {
        for (const std::string& payload : {number, R"({"x": )" + number + "}", "[" + number + "]"}) {
            INFO(payload.substr(0, 60));
            const FetchResult r = parse_batch(wrapped({R"({"id":7,"ts":)" + number + R"(,"payload":)" + payload + "}"}),
                                              0, 10, kDefaults);
            REQUIRE(r.status == Status::ok);
            REQUIRE(r.events.size() == 1);
            CHECK(r.events[0].payload == payload);
        }
    }
    const FetchResult r = parse_batch(R"({"events":[],"next":1e400,"remaining":1e400})", 0, 10, kDefaults);
    CHECK(r.status == Status::ok);
    CHECK_FALSE(r.backlog);
}

TEST_CASE("parse_owned_batch cuts a large payload out of the body, the same text", "[batch_parser]") {
    const std::string big = R"({"k":")" + std::string(1000, 'x') + R"("})";
    for (const std::string& body :
         {wrapped({event("1", big)}), wrapped({event("1", "1"), event("2", big), event("3", "[]")}),
          "[" + event("1", " " + big + " ") + "]"}) {
        const FetchResult borrowed = parse_batch(body, 0, 10, kDefaults);
        const FetchResult owned = tributary::parse_owned_batch(std::string(body), 0, 10, kDefaults);
        REQUIRE(owned.status == Status::ok);
        REQUIRE(ids(owned) == ids(borrowed));
        for (std::size_t i = 0; i < owned.events.size(); ++i)
            CHECK(owned.events[i].payload == borrowed.events[i].payload);
    }
}

TEST_CASE("parse_batch passes on the backlog the source reports, saturating", "[batch_parser]") {
    constexpr auto kMax = INT64_MAX;
    const std::string two = event("1", "1") + "," + event("2", "2");
    struct Case {
        const char* name;
        std::string body;
        std::optional<std::int64_t> expected;
        int limit = 10;
        std::int64_t after_id = 0;
    };
    const std::vector<Case> cases = {
        {"remaining", R"({"remaining":5,"events":[)" + two + "]}", 5},
        {"remaining plus the events the limit drops", R"({"events":[)" + two + R"(],"remaining":5})", 6, 1},
        {"head_id past the last event", R"({"events":[)" + two + R"(],"head_id":10})", 8},
        {"head_id past the last event kept", R"({"events":[)" + two + R"(],"head_id":10})", 9, 1},
        {"head_id past the cursor with no events", R"({"events":[],"head_id":10})", 7, 10, 3},
        {"head_id behind", R"({"events":[)" + two + R"(],"head_id":1})", 0},
        {"negative remaining falls back to head_id", R"({"events":[],"remaining":-1,"head_id":4})", 4},
        {"remaining not an integer", R"({"events":[],"remaining":1.5})", std::nullopt},
        {"remaining a string", R"({"events":[],"remaining":"5"})", std::nullopt},
        {"remaining a container", R"({"events":[],"remaining":[5],"head_id":{"a":1}})", std::nullopt},
        {"remaining beyond int64 falls back", R"({"events":[],"remaining":9223372036854775808,"head_id":2})", 2},
        {"head_id beyond int64 is ignored", R"({"events":[],"head_id":9223372036854775808})", std::nullopt},
        {"only the top level's",
         R"({"meta":{"remaining":5,"head_id":9},"events":[{"id":1,"payload":{"remaining":3}}]})", std::nullopt},
        {"none with a bare array", "[" + two + "]", std::nullopt},
        {"remaining plus dropped saturates", R"({"events":[)" + two + R"(],"remaining":9223372036854775807})", kMax, 1},
        {"head_id far past a negative cursor saturates", R"({"events":[],"head_id":9223372036854775807})", kMax, 10,
         -10},
        {"head_id far behind", R"({"events":[],"head_id":-9223372036854775808})", 0, 10, 5},
    };
    for (const auto& c : cases) {
        INFO(c.name << ": " << c.body);
        const FetchResult r = parse_batch(c.body, c.after_id, c.limit, kDefaults);
        REQUIRE(r.status == Status::ok);
        CHECK(r.backlog == c.expected);
    }
}

namespace {

long peak_rss_kb() {
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    return usage.ru_maxrss;
}

}  // namespace

TEST_CASE("parse_batch validates a hostile body in memory far below its document's", "[batch_parser]") {
    // One event whose payload is 5 million empty containers: 15 MB of text,
    // which as a document took 25 bytes per byte of text (about 370 MB), and
    // in nlohmann's SAX lexer about its size again. With limit 0 nothing is
    // kept, and the reader itself keeps nothing of the text. The peak is the
    // process's so far, so this can only miss growth, never invent it.
    for (const std::string unit : {"[],", "{},"}) {
        std::string body = R"({"events":[{"id":1,"payload":[)";
        body.reserve(15'100'000);
        for (int i = 0; i < 5'000'000; ++i) body += unit;
        body += "[]]}]}";
        const long before = peak_rss_kb();
        const FetchResult r = parse_batch(body, 0, 0, kDefaults);
        const long grown_kb = peak_rss_kb() - before;
        INFO("unit " << unit << ": peak grew by " << grown_kb << " KiB");
        CHECK(r.status == Status::ok);
        CHECK(grown_kb < static_cast<long>(body.size() / 1024) / 10);
    }
}

namespace {

// The document-based parse_batch() this replaced, kept as the oracle: the
// new one must say the same of any body, bar the deliberate differences
// (see the cross-check below).
namespace dom_oracle {

using nlohmann::json;

std::string without_tag(const char* what) {
    std::string_view s(what);
    if (!s.empty() && s.front() == '[') {
        const auto end = s.find("] ");
        if (end != std::string_view::npos) s.remove_prefix(end + 2);
    }
    std::string out(s);
    for (char& c : out)
        if (c < 0x20 || c > 0x7e) c = '?';
    return out;
}

std::string describe(const json& v) {
    switch (v.type()) {
        case json::value_t::null: return "null";
        case json::value_t::object: return "an object";
        case json::value_t::array: return "an array";
        case json::value_t::string: return "a string";
        case json::value_t::boolean: return "a boolean";
        case json::value_t::number_float: return "a floating-point number";
        case json::value_t::number_integer:
        case json::value_t::number_unsigned: return "an integer";
        default: return "an unexpected value";
    }
}

const json* event_list(const json& doc, std::string& why) {
    if (doc.is_array()) return &doc;
    if (!doc.is_object()) {
        why = "top-level JSON is " + describe(doc) + ", expected an object with \"events\" or an array of events";
        return nullptr;
    }
    const auto events = doc.find("events");
    if (events == doc.end()) {
        why = "top-level object has no \"events\" member";
        return nullptr;
    }
    if (!events->is_array()) {
        why = "\"events\" is " + describe(*events) + ", expected an array";
        return nullptr;
    }
    return &*events;
}

std::optional<std::string> id_problem(const json& id, std::int64_t& out) {
    constexpr auto kMax = std::numeric_limits<std::int64_t>::max();
    if (id.is_number_unsigned()) {
        const auto u = id.get<std::uint64_t>();
        if (u > static_cast<std::uint64_t>(kMax))
            return "id " + std::to_string(u) + " is out of the 64-bit signed integer range";
        out = static_cast<std::int64_t>(u);
        return std::nullopt;
    }
    if (id.is_number_integer()) {
        out = id.get<std::int64_t>();
        return std::nullopt;
    }
    if (id.is_number_float()) {
        const double d = id.get<double>();
        if (std::trunc(d) == d && (d >= 0x1p63 || d <= -0x1p63))
            return "id " + id.dump() + " is out of the 64-bit signed integer range";
        return "id is a floating-point number (" + id.dump() + "), expected an integer";
    }
    return "id is " + describe(id) + ", expected an integer";
}

std::optional<std::string> nul_problem(const json& payload) {
    std::vector<const json*> pending{&payload};
    while (!pending.empty()) {
        const json& v = *pending.back();
        pending.pop_back();
        if (v.is_string()) {
            if (v.get_ref<const std::string&>().find('\0') != std::string::npos) return "a string value";
        } else if (v.is_object()) {
            for (auto it = v.begin(); it != v.end(); ++it) {
                if (it.key().find('\0') != std::string::npos) return "a key";
                pending.push_back(&it.value());
            }
        } else if (v.is_array()) {
            for (const auto& element : v) pending.push_back(&element);
        }
    }
    return std::nullopt;
}

std::optional<std::string> read_event(const json& element, std::size_t index, tributary::Event& out) {
    const std::string at = "event #" + std::to_string(index);
    if (!element.is_object())
        return at + " is " + describe(element) + ", expected an object with \"id\" and \"payload\"";
    const auto id = element.find("id");
    if (id == element.end()) return at + ": id is missing";
    if (auto why = id_problem(*id, out.id)) return at + ": " + *why;
    const std::string named = at + " (id " + std::to_string(out.id) + ")";
    const auto payload = element.find("payload");
    if (payload == element.end()) return named + ": payload is missing";
    if (auto where = nul_problem(*payload))
        return named + ": payload has U+0000 in " + *where + ", which PostgreSQL jsonb cannot store";
    return std::nullopt;
}

std::optional<std::int64_t> reported_backlog(const json& doc, std::int64_t last_id, std::size_t dropped) {
    if (!doc.is_object()) return std::nullopt;
    const auto extra = static_cast<std::int64_t>(dropped);
    if (const auto remaining = doc.find("remaining");
        remaining != doc.end() && remaining->is_number_integer() && remaining->get<std::int64_t>() >= 0)
        return remaining->get<std::int64_t>() + extra;
    if (const auto head = doc.find("head_id"); head != doc.end() && head->is_number_integer())
        return head->get<std::int64_t>() <= last_id ? 0 : head->get<std::int64_t>() - last_id;
    return std::nullopt;
}

FetchResult parse_batch(std::string_view body, std::int64_t after_id, int limit) {
    json doc;
    try {
        doc = json::parse(body.begin(), body.end());
    } catch (const json::exception& e) {
        return FetchResult::failure(Status::transient, "malformed JSON body: " + without_tag(e.what()));
    }
    std::string why;
    const json* list = event_list(doc, why);
    if (list == nullptr) return FetchResult::failure(Status::transient, why);
    tributary::EventBatch events(list->size());
    for (std::size_t i = 0; i < list->size(); ++i) {
        if (auto problem = read_event((*list)[i], i, events[i])) {
            // The hint for an API's own records read as today's protocol.
            const std::string missing = ": payload is missing";
            if (problem->size() >= missing.size() &&
                problem->compare(problem->size() - missing.size(), missing.size(), missing) == 0)
                *problem += doc.is_array() ? ": an API's own records? --records \"\" stores each of a bare array whole"
                                           : ": an API's own records? --records /events stores each whole";
            return FetchResult::failure(Status::failing, *problem);
        }
    }
    if (auto violation = tributary::batch_violation(events, after_id))
        return FetchResult::failure(Status::failing, *violation);
    const auto keep = static_cast<std::size_t>(std::max(limit, 0));
    const std::size_t dropped = events.size() > keep ? events.size() - keep : 0;
    if (dropped) events.resize(keep);
    // The payload as the document read it; the reader's text must read the same.
    for (std::size_t i = 0; i < events.size(); ++i) events[i].payload = (*list)[i].at("payload").dump();
    const auto backlog = reported_backlog(doc, events.empty() ? after_id : events.back().id, dropped);
    auto result = FetchResult::batch(std::move(events));
    result.backlog = backlog;
    return result;
}

}  // namespace dom_oracle

// Random bodies that reach every branch of the checks: both shapes and
// wrong ones, names written with escapes, ids of every kind and order,
// U+0000 in payload keys and strings, look-alike keys deeper down, backlog
// members, and now and then a body cut short or spoiled, or a byte order
// mark. No member the loader reads appears twice (the document keeps the
// last, the reader refuses: tested above), and no number beyond the range of
// a double (the document cannot read it).
class BodyGenerator {
public:
    explicit BodyGenerator(unsigned seed) : rng_(seed) {}

    int pick(int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng_); }
    bool chance(int percent) { return pick(100) < percent; }

    std::string body(std::int64_t after_id) {
        std::string out = chance(3) ? "\xEF\xBB\xBF" : "";
        out += ws();
        const int shape = pick(100);
        if (shape < 25) out += list(after_id);
        else if (shape < 30) out += value(2);
        else out += envelope(after_id);
        out += ws();
        if (chance(8)) spoil(out);
        return out;
    }

private:
    std::string ws() { return chance(80) ? "" : std::vector<std::string>{" ", "\n", " \t", "\r\n "}[pick(4)]; }

    std::string envelope(std::int64_t after_id) {
        std::vector<std::string> members;
        const std::string events = chance(20) ? "\"ev\\u0065nts\":" : R"("events":)";
        if (chance(92)) members.push_back(events + (chance(92) ? list(after_id) : value(2)));
        if (chance(30)) members.push_back(R"("remaining":)" + (chance(15) ? "9223372036854775808" : backlog_value()));
        if (chance(30)) members.push_back(R"("head_id":)" + backlog_value());
        for (int n = pick(3); n > 0; --n) members.push_back(other_key() + ":" + value(2));
        std::shuffle(members.begin(), members.end(), rng_);
        return object_of(members);
    }

    // Beyond int64 only for "remaining", where both ignore it; the
    // document's head_id wrapped it to a negative number and overflowed.
    std::string backlog_value() {
        switch (pick(8)) {
            case 0: return "-" + std::to_string(pick(5));
            case 1:
            case 2: return value(1);
            default: return std::to_string(pick(20));
        }
    }

    std::string list(std::int64_t after_id) {
        std::vector<std::string> elements;
        std::int64_t next = after_id + 1 + pick(2);
        for (int n = pick(6); n > 0; --n) elements.push_back(element(next));
        std::string out = "[" + ws();
        for (std::size_t i = 0; i < elements.size(); ++i) out += (i ? "," + ws() : "") + elements[i] + ws();
        return out + "]";
    }

    std::string element(std::int64_t& next) {
        if (chance(6)) return value(2);
        std::vector<std::string> members;
        if (chance(95)) members.push_back(R"("id":)" + id(next));
        if (chance(95)) members.push_back((chance(8) ? "\"pay\\u006coad\":" : R"("payload":)") + value(3));
        for (int n = pick(3); n > 0; --n) members.push_back(other_key() + ":" + value(2));
        std::shuffle(members.begin(), members.end(), rng_);
        return object_of(members);
    }

    std::string id(std::int64_t& next) {
        const int what = pick(100);
        if (what < 85) return std::to_string(next += 1 + pick(3));
        if (what < 90) return std::to_string(next - pick(3));  // repeated or going back
        return std::vector<std::string>{"\"5\"",
                                        "1.5",
                                        "2.0",
                                        "1e3",
                                        "true",
                                        "null",
                                        "{}",
                                        "[1]",
                                        "9223372036854775808",
                                        "-9223372036854775809",
                                        "99999999999999999999999",
                                        "-0",
                                        "9223372036854775807"}[pick(13)];
    }

    std::string key() {
        return std::vector<std::string>{R"("id")",      R"("payload")", R"("events")",  R"("remaining")",
                                        R"("head_id")", R"("x")",       R"("a\u0000")", R"("")"}[pick(8)];
    }

    std::string other_key() {
        return std::vector<std::string>{R"("x")", R"("a\u0000")", R"("")", R"("ids")", R"("Payload")"}[pick(5)];
    }

    std::string value(int depth) {
        switch (depth > 0 ? pick(8) : pick(4)) {
            case 0: return number();
            case 1: return string();
            case 2: return std::vector<std::string>{"true", "false", "null"}[pick(3)];
            case 3: return chance(50) ? "[]" : "{}";
            case 4:
            case 5: {
                std::vector<std::string> elements;
                for (int n = pick(4); n > 0; --n) elements.push_back(value(depth - 1));
                std::string out = "[";
                for (std::size_t i = 0; i < elements.size(); ++i) out += (i ? "," : "") + elements[i];
                return out + "]";
            }
            default: {
                std::vector<std::string> members;
                for (int n = pick(4); n > 0; --n) members.push_back(key() + ":" + ws() + value(depth - 1));
                return object_of(members);
            }
        }
    }

    std::string number() {
        return std::vector<std::string>{"0", "-7", "42", "1.5", "2.5e-400", "12345678901234567890123"}[pick(6)];
    }

    std::string string() {
        return std::vector<std::string>{R"("")",   R"("text")",      R"("\u0000")",  R"("a\"b")",
                                        R"("[{")", R"("caf\u00e9")", "\"\xc3\xa9\"", R"("events")"}[pick(8)];
    }

    std::string object_of(const std::vector<std::string>& members) {
        std::string out = "{" + ws();
        for (std::size_t i = 0; i < members.size(); ++i) out += (i ? "," + ws() : "") + members[i] + ws();
        return out + "}";
    }

    // Cut short, or a stray byte somewhere.
    void spoil(std::string& body) {
        if (body.empty()) return;
        const auto at = static_cast<std::size_t>(pick(static_cast<int>(body.size())));
        if (chance(50)) body.resize(at);
        else body.insert(at, std::vector<std::string>{",", "]", "}", "x", "\"", "\xff"}[pick(6)]);
    }

    std::mt19937 rng_;
};

}  // namespace

namespace {

// The same verdict in different words: the reader quotes a number as the
// source wrote it (1e3), the document as it read it (1000.0); syntax errors
// are worded by each parser its own way.
bool same_message(std::string got, std::string expected) {
    // An integer beyond int64 is an integer to the reader, a double to the document.
    const std::string floating = "is a floating-point number, expected", integer = "is an integer, expected";
    for (std::string* text : {&got, &expected})
        if (const auto at = text->find(floating); at != std::string::npos) text->replace(at, floating.size(), integer);
    if (got == expected) return true;
    const auto before = [](const std::string& s, const char* mark) { return s.substr(0, s.find(mark)); };
    for (const char* kind : {"id is a floating-point number", "is out of the 64-bit signed integer range"})
        if (got.find(kind) != std::string::npos && expected.find(kind) != std::string::npos)
            return before(got, ": ") == before(expected, ": ");
    const std::string malformed = "malformed JSON body";
    return got.rfind(malformed, 0) == 0 && expected.rfind(malformed, 0) == 0;
}

}  // namespace

TEST_CASE("parse_batch says what the document-based parser said, on random bodies", "[batch_parser]") {
    // Deliberate differences: U+0000 anywhere in a payload's text is
    // refused, even under a key that a later duplicate replaces (jsonb
    // refuses it there too, but a document had dropped it); when a payload
    // has U+0000 in both a key and a string, which one is named may differ
    // (now the first in the text).
    BodyGenerator gen(20240917);
    std::size_t ok = 0, transient = 0, failing = 0, nul_under_duplicates = 0, duplicates = 0;
    for (int round = 0; round < 20000; ++round) {
        const std::int64_t after_id = gen.pick(4) - 1;
        const int limit = gen.pick(5);
        const std::string body = gen.body(after_id);
        INFO("round " << round << ", after_id " << after_id << ", limit " << limit << ": " << body);
        const FetchResult expected = dom_oracle::parse_batch(body, after_id, limit);
        const FetchResult got = parse_batch(body, after_id, limit, kDefaults);
        CHECK(printable_ascii(got.error));
        INFO("got: " << got.error << "; expected: " << expected.error);
        if (got.error.find("duplicate member") != std::string::npos) {
            // A member the loader reads, twice (from a value standing in for
            // an envelope or an event): the document took the last.
            CHECK(got.status == Status::failing);
            ++duplicates;
            continue;
        }
        const std::string nul = "payload has U+0000 in ";
        const auto got_nul = got.error.find(nul);
        if (got_nul != std::string::npos &&
            got.error.compare(0, got_nul + nul.size(), expected.error, 0, got_nul + nul.size()) != 0) {
            // U+0000 under a key that a later duplicate replaces, in this or
            // an earlier event than the document named: the document dropped
            // it, but the stored text keeps it and jsonb refuses it.
            CHECK(body.find(R"(\u0000)") != std::string::npos);
            ++nul_under_duplicates;
            continue;
        }
        CHECK(got.status == expected.status);
        const auto cut = expected.error.find(nul);
        if (cut != std::string::npos)
            CHECK(got.error.substr(0, cut + nul.size()) == expected.error.substr(0, cut + nul.size()));
        else CHECK(same_message(got.error, expected.error));
        CHECK(ids(got) == ids(expected));
        for (std::size_t i = 0; i < got.events.size() && i < expected.events.size(); ++i)
            CHECK(nlohmann::json::parse(got.events[i].payload).dump() == expected.events[i].payload);
        CHECK(got.backlog == expected.backlog);
        (got.status == Status::ok ? ok : got.status == Status::transient ? transient : failing)++;
    }
    // The generator must reach every outcome often, or the check says little.
    INFO("ok " << ok << ", transient " << transient << ", failing " << failing << ", U+0000 under duplicates "
               << nul_under_duplicates << ", duplicates " << duplicates);
    CHECK(ok > 2000);
    CHECK(transient > 2000);
    CHECK(failing > 2000);
}

TEST_CASE("parse_page with today's layout spelt out reads what parse_batch reads, on random bodies",
          "[batch_parser][page_parser]") {
    // --records /events --key /id --payload /payload, after-id: the generic
    // paths over the same bodies. Only the words and, for a body of the
    // wrong shape, the status differ: a configured --records that is not
    // there is the source's fault (failing), today's protocol says transient.
    tributary::Source spelt;
    spelt.layout.records = "/events";
    spelt.layout.payload = "/payload";
    BodyGenerator gen(20261124);
    std::size_t ok = 0;
    for (int round = 0; round < 20000; ++round) {
        const std::int64_t after_id = gen.pick(4) - 1;
        const int limit = gen.pick(5);
        const std::string body = gen.body(after_id);
        INFO("round " << round << ", after_id " << after_id << ", limit " << limit << ": " << body);
        const FetchResult expected = parse_batch(body, after_id, limit, kDefaults);
        const tributary::ParsedPage got =
            tributary::parse_borrowed_page(body, spelt, tributary::Cursor::at_id(after_id), limit, kDefaults);
        INFO("got: " << got.batch.error << "; expected: " << expected.error);
        CHECK(printable_ascii(got.batch.error));
        const bool syntax =
            expected.error.rfind("malformed JSON body", 0) == 0 || expected.error.find("deeper") != std::string::npos;
        const bool shape = expected.status == Status::transient && !syntax;
        const bool bare = expected.status == Status::ok && got.batch.error == "no records array at /events";
        if (syntax) CHECK(got.batch.status == Status::transient);
        else if (shape || bare) CHECK(got.batch.status == Status::failing);
        else CHECK(got.batch.status == expected.status);
        if (expected.status != Status::ok || bare) continue;
        ++ok;
        CHECK(ids(got.batch) == ids(expected));
        for (std::size_t i = 0; i < got.batch.events.size() && i < expected.events.size(); ++i)
            CHECK(got.batch.events[i].payload == expected.events[i].payload);
    }
    CHECK(ok > 2000);
}
