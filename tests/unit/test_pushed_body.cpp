// A pushed request's body read into its events (src/webhook/pushed_body):
// the shapes (one object, an array, NDJSON said or found), the keys (the key
// header, one pointer, a composite) and every hostile body refused whole.
#include <catch2/catch.hpp>

#include <string>

#include "core/batch_rules.h"
#include "webhook/jsonb_number.h"
#include "webhook/pushed_body.h"

using namespace tributary::webhook;

namespace {

PushedSource source_keyed_by(std::vector<std::string> key) {
    PushedSource source;
    source.id = 1;
    source.name = "orders";
    source.key = std::move(key);
    return source;
}

PushedBody read(std::string_view body, std::string_view content_type = "application/json",
                std::optional<std::string> header = std::nullopt, std::vector<std::string> key = {"/id"}) {
    return read_pushed_body(body, content_type, source_keyed_by(std::move(key)), header);
}

std::string refusal_of(std::string_view body, std::string_view content_type = "application/json") {
    const auto out = read(body, content_type);
    CHECK(out.events.empty());
    REQUIRE(out.refusal);
    return *out.refusal;
}

}  // namespace

TEST_CASE("one JSON object is one event, its payload the exact text", "[webhook]") {
    const auto out = read("  {\"id\": \"a-1\", \"n\": 1.50}\n");
    REQUIRE_FALSE(out.refusal);
    REQUIRE(out.events.size() == 1);
    CHECK(out.events[0].key == "a-1");
    CHECK(out.events[0].payload == "{\"id\": \"a-1\", \"n\": 1.50}");
}

TEST_CASE("a JSON array is its elements, each one event; an empty array none", "[webhook]") {
    const auto out = read("[{\"id\":1},{\"id\":\"x\\u0041\"} , {\"id\":3,\"a\":[1,{\"id\":9}]}]");
    REQUIRE_FALSE(out.refusal);
    REQUIRE(out.events.size() == 3);
    CHECK(out.events[0].key == "1");
    CHECK(out.events[1].key == "xA");
    CHECK(out.events[1].payload == "{\"id\":\"x\\u0041\"}");
    CHECK(out.events[2].key == "3");
    CHECK(out.events[2].payload == "{\"id\":3,\"a\":[1,{\"id\":9}]}");

    const auto empty = read(" [ ] ");
    CHECK_FALSE(empty.refusal);
    CHECK(empty.events.empty());
}

TEST_CASE("NDJSON: by content type, or found when the body is no one value", "[webhook]") {
    const std::string lines = "{\"id\":1}\r\n\n  \n[{\"id\":2}]\n{\"id\":3}";
    SECTION("said so") {
        auto out = read(lines, "application/x-ndjson; charset=utf-8", "k");
        REQUIRE_FALSE(out.refusal);
        REQUIRE(out.events.size() == 3);
        CHECK(out.events[1].payload == "[{\"id\":2}]");  // a line is one event, even an array
        CHECK(out.events[2].key == "k#2");
        out = read("{\"id\":1}", "Application/JSONL");
        CHECK(out.events.size() == 1);
        CHECK(read("", "application/x-ndjson").events.empty());
        CHECK_FALSE(read("", "application/x-ndjson").refusal);
    }
    SECTION("found") {
        const auto out = read("{\"id\":1}\n{\"id\":2}\n", "application/json");
        REQUIRE_FALSE(out.refusal);
        REQUIRE(out.events.size() == 2);
        CHECK(out.events[1].key == "2");
        CHECK(out.events[1].payload == "{\"id\":2}");
    }
    SECTION("a broken line is named when the body is NDJSON from its first line") {
        CHECK(refusal_of("{\"id\":1}\n{\"id\":2\n") ==
              "line 2 is not JSON: unexpected end of input; expected ',' or "
              "'}' at byte 7");
        CHECK(refusal_of("{\"id\":1}\n{\"id\":2\n", "application/x-ndjson").rfind("line 2 is not JSON", 0) == 0);
    }
    SECTION("events are counted across lines") {
        CHECK(refusal_of("{\"id\":1}\n\n{\"id\":null}\n", "application/x-ndjson") ==
              "event #1: key /id is null, expected a string or an integer");
    }
    SECTION("a pretty-printed value that is broken is told as one value") {
        CHECK(refusal_of("{\n \"id\": 1,\n}\n").rfind("the body is not JSON: ", 0) == 0);
        CHECK(refusal_of("").rfind("the body is not JSON: unexpected end of input", 0) == 0);
        CHECK(refusal_of("\n\n").rfind("the body is not JSON: unexpected end of input", 0) == 0);
    }
}

TEST_CASE("keys from the key header: the value, or value#index", "[webhook]") {
    auto out = read("{\"no\":\"id\"}", "application/json", "delivery-7");
    REQUIRE(out.events.size() == 1);
    CHECK(out.events[0].key == "delivery-7");

    out = read("[1, \"two\", {\"id\":3}]", "application/json", "d");
    REQUIRE(out.events.size() == 3);
    CHECK(out.events[0].key == "d#0");
    CHECK(out.events[2].key == "d#2");
    CHECK(out.events[1].payload == "\"two\"");

    CHECK(*read("{}", "application/json", "").refusal == "the Idempotency-Key header is empty");
    CHECK(read("[]", "application/json", "").events.empty());
    CHECK_FALSE(read("[]", "application/json", "").refusal);
    const std::string long_value(tributary::kMaxKeyBytes - 1, 'k');
    CHECK_FALSE(read("{}", "application/json", long_value).refusal);
    CHECK(read("[{},{}]", "application/json", long_value).refusal);  // "#1" makes it too long
    CHECK(*read("{}", "application/json", std::string("\xff\xfe")).refusal ==
          "the Idempotency-Key header is not valid UTF-8");
}

TEST_CASE("keys from pointers: as a pulled source's", "[webhook]") {
    SECTION("a string decoded, an integer's digits, a nested pointer and an array index") {
        auto out = read("[{\"id\":\"\\u00e9\"},{\"id\":-12}]");
        REQUIRE(out.events.size() == 2);
        CHECK(out.events[0].key == "\xc3\xa9");
        CHECK(out.events[1].key == "-12");
        out = read("{\"data\":{\"object\":{\"id\":\"evt_1\"}}}", "application/json", std::nullopt, {"/data/object/id"});
        REQUIRE(out.events.size() == 1);
        CHECK(out.events[0].key == "evt_1");
        out = read("{\"ids\":[5,6]}", "application/json", std::nullopt, {"/ids/1"});
        CHECK(out.events.at(0).key == "6");
        out = read("\"whole\"", "application/json", std::nullopt, {""});
        CHECK(out.events.at(0).key == "whole");
    }
    SECTION("a composite key is the JSON array of its parts") {
        const auto out = read("{\"a\":7,\"b\":\"x\\\"y\"}", "application/json", std::nullopt, {"/a", "/b"});
        REQUIRE(out.events.size() == 1);
        CHECK(out.events[0].key == "[7,\"x\\\"y\"]");
    }
    SECTION("no key: the request is refused, naming the event and the pointer") {
        CHECK(refusal_of("[{\"id\":1},{\"idx\":2}]") == "event #1: key /id is missing");
        CHECK(refusal_of("{\"id\":null}") == "event #0: key /id is null, expected a string or an integer");
        CHECK(refusal_of("{\"id\":true}") == "event #0: key /id is a boolean, expected a string or an integer");
        CHECK(refusal_of("{\"id\":\"\"}") == "event #0: key /id is an empty string");
        CHECK(refusal_of("{\"id\":1.5}").find("floating-point") != std::string::npos);
        CHECK(refusal_of("{\"id\":{\"a\":1}}") == "event #0: key /id is an object, expected a string or an integer");
        CHECK(refusal_of("{\"id\":\"" + std::string(tributary::kMaxKeyBytes + 1, 'x') + "\"}") ==
              "event #0: key /id is longer than the 1024 bytes a key may have");
        CHECK(refusal_of("[1]") == "event #0: key /id is missing");
    }
    SECTION("a composite key longer than a key may be") {
        const std::string part(600, 'x');
        const auto out =
            read("{\"a\":\"" + part + "\",\"b\":\"" + part + "\"}", "application/json", std::nullopt, {"/a", "/b"});
        REQUIRE(out.refusal);
        CHECK(out.refusal->find("more than the 1024 a key may have") != std::string::npos);
    }
    SECTION("a member on a key's way twice is ambiguous") {
        CHECK(refusal_of("{\"id\":1,\"i\\u0064\":2}") ==
              "event #0: member \"id\" appears twice on the way of a key "
              "pointer");
        CHECK_FALSE(read("{\"id\":1,\"other\":2,\"other\":3}").refusal);  // off the way: not ours to judge
    }
}

TEST_CASE("hostile bodies are refused whole, nothing kept", "[webhook]") {
    SECTION("deep nesting") {
        const std::string deep = "[" + std::string(100000, '[') + std::string(100000, ']') + "]";
        CHECK(refusal_of(deep).find("nested deeper than 64 levels") != std::string::npos);
        std::string nested = "{\"id\":1,\"a\":";
        for (int i = 0; i < 63; ++i) nested += "[";
        const std::string fine = nested + std::string(63, ']') + "}";
        CHECK_FALSE(read(fine).refusal);
        CHECK(read("[" + fine + "]").refusal);  // one more level: the array around it counts
    }
    SECTION("a raw NUL byte, invalid UTF-8, \\u0000") {
        CHECK(refusal_of(std::string("{\"id\":1,\"a\":\"x\0y\"}", 18)).find("control character U+0000") !=
              std::string::npos);
        CHECK(refusal_of("{\"id\":1,\"a\":\"\xc3\x28\"}").find("invalid UTF-8") != std::string::npos);
        CHECK(refusal_of("{\"id\":1,\"a\":\"\xed\xa0\x80\"}").find("invalid UTF-8") != std::string::npos);
        CHECK(refusal_of("[{\"id\":1},{\"id\":2,\"a\":[\"\\u0000\"]}]") ==
              "event #1: a string holds U+0000, which PostgreSQL jsonb cannot store");
        CHECK(refusal_of("{\"id\":1,\"\\u0000\":1}") ==
              "event #0: a member name holds U+0000, which PostgreSQL jsonb cannot store");
        CHECK(refusal_of("\"\\ud800\"").find("high surrogate") != std::string::npos);
    }
    SECTION("a number jsonb cannot store") {
        CHECK(refusal_of("{\"id\":1,\"n\":1e131072}") ==
              "event #0: the number 1e131072 is beyond what PostgreSQL jsonb stores");
        CHECK_FALSE(read("{\"id\":1,\"n\":1e131071}").refusal);
    }
    SECTION("trailing content, two values, a trailing comma") {
        CHECK(refusal_of("{\"id\":1} x").rfind("the body is not JSON", 0) == 0);
        CHECK(refusal_of("[{\"id\":1},]").rfind("the body is not JSON", 0) == 0);
    }
}

TEST_CASE("what jsonb's numeric takes (checked against PostgreSQL 15)", "[webhook]") {
    for (const char* taken : {"0", "-0", "1e131071", "123e131069", "1e-16383", "0e999999", "12.5e-3",
                              "-1.000000000000000000000000000001", "0.00001e5"})
        CHECK(jsonb_takes_number(taken));
    for (const char* refused : {"1e131072", "123e131070", "1e-16384", "0.1e-16383", "0.0000e-16383", "-1e131072",
                                "1e-1000000000", "0e99999999999"})
        CHECK_FALSE(jsonb_takes_number(refused));
}

TEST_CASE("a source whose key pointers cannot key anything is misconfigured", "[webhook]") {
    CHECK_FALSE(key_pointers_problem(source_keyed_by({"/id"})));
    CHECK(key_pointers_problem(source_keyed_by({})));
    CHECK(key_pointers_problem(source_keyed_by({"id"})));
    CHECK(key_pointers_problem(source_keyed_by(std::vector<std::string>(17, "/a"))));
}
