#include <catch2/catch.hpp>

#include <cstddef>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "http/json_spans.h"

using nlohmann::json;
using tributary::payload_spans;
using tributary::unescape_json_string;

namespace {

// (index, text) of each span, for readable comparisons.
using Found = std::vector<std::pair<std::size_t, std::string>>;

std::optional<Found> found(const std::string& body) {
    const auto spans = payload_spans(body);
    if (!spans) return std::nullopt;
    Found out;
    for (const auto& s : *spans) out.emplace_back(s.index, std::string(s.in(body)));
    return out;
}

// The events list as nlohmann sees it, the truth the spans must agree with.
const json& nlohmann_events(const json& doc) { return doc.is_array() ? doc : doc.at("events"); }

// Every span must parse to the very value nlohmann gave the payload, with no
// whitespace around it, and there must be one for each element with a payload.
void check_against_nlohmann(const std::string& body) {
    INFO("body: " << body);
    const json doc = json::parse(body);
    const json& events = nlohmann_events(doc);
    const auto spans = payload_spans(body);
    REQUIRE(spans);
    std::size_t next = 0;
    for (std::size_t i = 0; i < events.size(); ++i) {
        if (!events[i].is_object() || !events[i].contains("payload")) continue;
        REQUIRE(next < spans->size());
        const auto& span = (*spans)[next++];
        CHECK(span.index == i);
        const std::string_view text = span.in(body);
        REQUIRE(!text.empty());
        CHECK(std::string(" \t\r\n").find(text.front()) == std::string::npos);
        CHECK(std::string(" \t\r\n").find(text.back()) == std::string::npos);
        CHECK(json::parse(text) == events[i]["payload"]);
    }
    CHECK(next == spans->size());
}

}  // namespace

TEST_CASE("payload_spans finds each payload as written", "[json_spans]") {
    struct Case {
        const char* name;
        std::string body;
        Found expected;
    };
    const std::vector<Case> cases = {
        {"object shape", R"({"events":[{"id":1,"payload":{"a": 1}},{"id":2,"payload":[ 1 ,2 ]}]})",
         {{0, R"({"a": 1})"}, {1, "[ 1 ,2 ]"}}},
        {"bare array", R"([{"id":1,"payload":"x"}])", {{0, R"("x")"}}},
        {"empty lists", R"({"events":[]})", {}},
        {"whitespace everywhere is left out",
         " \r\n[ \t{ \"id\" : 1 ,\n \"payload\" \t:\r\n { \"k\" : [ 1 , 2 ] }\n\t} , { \"payload\" : 7 } ]\n ",
         {{0, R"({ "k" : [ 1 , 2 ] })"}, {1, "7"}}},
        {"scalars end at the delimiter", R"([{"payload":12},{"payload":-1.5e+3 },{"payload":true},{"payload":null}])",
         {{0, "12"}, {1, "-1.5e+3"}, {2, "true"}, {3, "null"}}},
        {"big numbers keep every digit",
         R"([{"payload":12345678901234567890123},{"payload":0.1000000000000000055511151231257827},)"
         R"({"payload":{"n":-99999999999999999999999999.000000000000000000001e-7}}])",
         {{0, "12345678901234567890123"},
          {1, "0.1000000000000000055511151231257827"},
          {2, R"({"n":-99999999999999999999999999.000000000000000000001e-7})"}}},
        {"payload before id", R"([{"payload":[],"id":1}])", {{0, "[]"}}},
        {"brackets and quotes inside strings",
         R"([{"id":"}]","payload":{"a\"]}":"[{\\","b":"\\\\"},"x":"\\"}])",
         {{0, R"({"a\"]}":"[{\\","b":"\\\\"})"}}},
        {"string ending in an escaped backslash", R"([{"payload":"a\\"}])", {{0, R"("a\\")"}}},
        {"unicode as written", "[{\"payload\":\"caf\\u00e9 \xe2\x98\x83 \\ud83d\\ude00\"}]",
         {{0, "\"caf\\u00e9 \xe2\x98\x83 \\ud83d\\ude00\""}}},
        {"elements without a payload give none", R"([1,{"id":1},{"payload":2},[{"payload":3}],"payload"])",
         {{2, "2"}}},
        {"a nested payload is not the event's", R"([{"meta":{"payload":1},"payload":2,"x":[{"payload":3}]}])",
         {{0, "2"}}},
        {"a nested events is not the list", R"({"meta":{"events":[{"payload":1}]},"events":[{"payload":2}]})",
         {{0, "2"}}},
        {"other top-level members before and after", R"({"a":[{"payload":0}],"events":[{"payload":1}],"z":{}})",
         {{0, "1"}}},
        {"duplicate payload: the last wins", R"([{"payload":1,"id":1,"payload":{"b":2}}])", {{0, R"({"b":2})"}}},
        {"duplicate events: the last wins", R"({"events":[{"payload":1}],"events":[{"payload":2},{"payload":3}]})",
         {{0, "2"}, {1, "3"}}},
        {"escaped key names match",
         R"({"\u0065vents":[{"pay\u006coad":1},{"\u0070\u0061yload":2},{"pay\u006Coad":3}]})",
         {{0, "1"}, {1, "2"}, {2, "3"}}},
        {"an escaped duplicate wins too", R"([{"payload":1,"pay\u006coad":2},{"pay\u006coad":3,"payload":4}])",
         {{0, "2"}, {1, "4"}}},
        {"near-miss keys do not match", R"([{"payloads":1,"Payload":2,"pay\"load":3,"payload\u0000":4,"pay\\load":5}])",
         {}},
        {"byte order mark", "\xEF\xBB\xBF{\"events\":[{\"payload\":1}]}", {{0, "1"}}},
    };
    for (const auto& c : cases) {
        INFO(c.name << ": " << c.body);
        REQUIRE(json::accept(c.body));  // the scanner's precondition
        CHECK(found(c.body) == std::optional<Found>(c.expected));
        check_against_nlohmann(c.body);
    }
}

TEST_CASE("payload_spans gives nothing for a body without an events array", "[json_spans]") {
    for (const std::string body : {
             "",
             "   ",
             "42",
             "\"events\"",
             "null",
             R"({"data":[]})",
             R"({"events":{"payload":1}})",
             R"({"events":[{"payload":1}],"events":7})",  // the last "events" is not an array
             R"({"events":[{"payload":1}])",              // cut short
             R"([{"payload":1}] [])",                     // trailing garbage
             R"([{"payload":1},])",
             R"([{"payload":"unterminated}])",
             R"([{"payload"1}])",
             R"([{"payload":[1,2}])",
             "\xEF\xBB[]",
         }) {
        INFO(body);
        CHECK_FALSE(payload_spans(body));
    }
}

TEST_CASE("payload_spans gives spans only for the first events asked for", "[json_spans]") {
    const std::string body = R"({"events":[{"payload":1},{"payload":[2]},7,{"payload":3}],"x":[{"payload":9}]})";
    const auto spans = [&](std::size_t first) {
        const auto found = payload_spans(body, first);
        REQUIRE(found);
        std::vector<std::string> out;
        for (const auto& s : *found) out.emplace_back(s.in(body));
        return out;
    };
    CHECK(spans(0).empty());
    CHECK(spans(1) == std::vector<std::string>{"1"});
    CHECK(spans(2) == std::vector<std::string>{"1", "[2]"});
    CHECK(spans(3) == std::vector<std::string>{"1", "[2]"});  // element 2 has no payload
    CHECK(spans(4) == std::vector<std::string>{"1", "[2]", "3"});
    CHECK(spans(100) == spans(4));
    // The rest of the body is still walked, so a broken one still gives nothing.
    CHECK_FALSE(payload_spans(R"([{"payload":1},{"payload":2}] [])", 1));
    CHECK_FALSE(payload_spans(R"({"events":[{"payload":1}],"events":7})", 1));
}

TEST_CASE("payload_spans skips deep nesting without recursion", "[json_spans]") {
    const std::string deep = std::string(200000, '[') + "\"]\"" + std::string(200000, ']');
    const std::string body = R"([{"payload":)" + deep + "}]";
    const auto spans = payload_spans(body);
    REQUIRE(spans);
    REQUIRE(spans->size() == 1);
    CHECK((*spans)[0].in(body) == deep);
}

TEST_CASE("unescape_json_string decodes as nlohmann does", "[json_spans]") {
    for (const std::string token : {
             R"("")",
             R"("plain")",
             R"("\"\\\/\b\f\n\r\t")",
             R"("pay\u006coad")",
             R"("\u00e9\u00E9\u2603\uFFFF\u0000\u007f")",
             R"("\ud83d\ude00 \uDBFF\uDFFF \ud800\udc00")",
             "\"raw \xc3\xa9 \xf0\x9f\x98\x80\"",
         }) {
        INFO(token);
        const auto decoded = unescape_json_string(token);
        REQUIRE(decoded);
        CHECK(*decoded == json::parse(token).get<std::string>());
    }
    for (const std::string token : {
             "",
             "\"",
             "x",
             R"("abc)",
             R"(abc")",
             R"("\")",
             R"("\x")",
             R"("\u12")",
             R"("\u12g4")",
             R"("\ud800")",
             R"("\ud800x")",
             R"("\ud800\u0041")",
             R"("\udc00\ud800")",
             R"("a"b")",
         }) {
        INFO(token);
        CHECK_FALSE(unescape_json_string(token));
    }
}

namespace {

// Random valid JSON text, made to trip a scanner: whitespace anywhere it is
// allowed, numbers no double holds, every escape, raw and escaped unicode,
// brackets and quotes inside strings, keys that are "payload" in disguise.
class Generator {
public:
    explicit Generator(unsigned seed) : rng_(seed) {}

    int pick(int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng_); }
    bool chance(int percent) { return pick(100) < percent; }

    std::string ws() {
        std::string out;
        for (int n = pick(4); n > 0; --n) out += one_of(" \t\n\r");
        return out;
    }

    std::string value(int depth) {
        switch (depth > 0 ? pick(7) : pick(3)) {
            case 0: return number();
            case 1: return string();
            case 2: return std::vector<std::string>{"true", "false", "null"}[pick(3)];
            case 3:
            case 4: return array(depth - 1);
            default: return object(depth - 1);
        }
    }

    std::string number() {
        std::string out = chance(30) ? "-" : "";
        out += chance(15) ? "0" : one_of("123456789") + digits(chance(30) ? 40 : 6);  // 40: beyond uint64
        if (chance(40)) out += "." + one_of("0123456789") + digits(chance(30) ? 40 : 4);    // beyond a double
        if (chance(25)) out += one_of("eE") + (chance(50) ? "" : one_of("+-")) + "1" + digits(2);
        return out;
    }

    std::string string() {
        std::string out = "\"";
        for (int n = pick(8); n > 0; --n) out += string_piece();
        return out + "\"";
    }

    // "payload"/"events" written plainly or with some letters escaped.
    std::string disguised(const std::string& name) {
        std::string out = "\"";
        for (char c : name) {
            if (chance(25)) {
                static const char* kHex = "0123456789abcdef0123456789ABCDEF";
                const int upper = chance(50) ? 16 : 0;
                out += "\\u00";
                out += kHex[upper + (c >> 4)];
                out += kHex[upper + (c & 15)];
            } else {
                out += c;
            }
        }
        return out + "\"";
    }

    std::string key() {
        switch (pick(6)) {
            case 0: return disguised("payload");
            case 1: return disguised("events");
            case 2: return "\"pay\\\"load\"";
            default: return string();
        }
    }

    std::string array(int depth) {
        std::string out = "[" + ws();
        for (int n = pick(4), i = 0; i < n; ++i) out += (i ? "," + ws() : "") + value(depth) + ws();
        return out + "]";
    }

    std::string object(int depth) {
        std::string out = "{" + ws();
        for (int n = pick(4), i = 0; i < n; ++i)
            out += (i ? "," + ws() : "") + key() + ws() + ":" + ws() + value(depth) + ws();
        return out + "}";
    }

    // One element of the events list; `payload` gets the text of the payload
    // nlohmann will keep (the last), or stays empty when there is none.
    std::string event(std::string& payload) {
        payload.clear();
        if (chance(10)) return chance(50) ? array(2) : number();
        std::vector<std::string> members;
        for (int n = pick(3); n > 0; --n) members.push_back(key_other() + ws() + ":" + ws() + value(2));
        if (chance(95)) members.insert(members.begin() + pick(static_cast<int>(members.size()) + 1),
                                       "\"id\"" + ws() + ":" + ws() + std::to_string(pick(1000)));
        // One payload, sometimes two or none; a later one goes after an
        // earlier one, so `payload` ends up holding the last.
        int first_free = 0;
        for (int n = chance(20) ? 2 : 1; n > 0; --n) {
            if (chance(5)) continue;
            payload = value(4);
            const int at = first_free + pick(static_cast<int>(members.size()) - first_free + 1);
            members.insert(members.begin() + at, disguised("payload") + ws() + ":" + ws() + payload);
            first_free = at + 1;
        }
        std::string out = "{" + ws();
        for (std::size_t i = 0; i < members.size(); ++i) out += (i ? "," + ws() : "") + members[i] + ws();
        return out + "}";
    }

    // A full body; `expected` gets (index, text) of each payload.
    std::string body(Found& expected) {
        expected.clear();
        std::string list = "[" + ws();
        const int n = pick(6);
        for (int i = 0; i < n; ++i) {
            std::string payload;
            list += (i ? "," + ws() : "") + event(payload) + ws();
            if (!payload.empty()) expected.emplace_back(static_cast<std::size_t>(i), payload);
        }
        list += "]";
        std::string out = chance(10) ? "\xEF\xBB\xBF" : "";
        out += ws();
        if (chance(30)) return out + list + ws();
        out += "{" + ws();
        if (chance(30)) out += disguised("events") + ws() + ":" + ws() + array(3) + ws() + "," + ws();  // overridden
        if (chance(50)) out += key_other() + ws() + ":" + ws() + value(3) + ws() + "," + ws();
        out += disguised("events") + ws() + ":" + ws() + list + ws();
        if (chance(50)) out += "," + ws() + key_other() + ws() + ":" + ws() + value(3) + ws();
        return out + "}" + ws();
    }

private:
    std::string one_of(const char* chars) {
        return std::string(1, chars[pick(static_cast<int>(std::char_traits<char>::length(chars)))]);
    }

    std::string digits(int max) {
        std::string out;
        for (int n = pick(max + 1); n > 0; --n) out += one_of("0123456789");
        return out;
    }

    // A key that is neither "payload" nor "events", so it cannot reorder them.
    std::string key_other() {
        std::string k;
        do k = string();
        while (unescape_json_string(k) == "payload" || unescape_json_string(k) == "events");
        return chance(20) ? "\"pay\\\"load\"" : k;
    }

    std::string string_piece() {
        switch (pick(10)) {
            case 0: return std::vector<std::string>{"\\\"", "\\\\", "\\/", "\\b", "\\f", "\\n", "\\r", "\\t"}[pick(8)];
            case 1:
                return std::vector<std::string>{"\\u00e9", "\\u2603", "\\uD83D\\uDE00",
                                                "\\u006c", "\\u0022", "\\u005C"}[pick(6)];
            case 2: return std::vector<std::string>{"\xc3\xa9", "\xe2\x98\x83", "\xf0\x9f\x98\x80"}[pick(3)];
            case 3: return one_of("[]{},:");
            case 4: return "\\\\\\\"";  // an escaped backslash, then an escaped quote
            default: return one_of("abcdefghijklmnopqrstuvwxyz0123456789 ");
        }
    }

    std::mt19937 rng_;
};

}  // namespace

TEST_CASE("payload_spans agrees with nlohmann on random bodies", "[json_spans]") {
    Generator gen(20240611);
    Found expected;
    for (int round = 0; round < 3000; ++round) {
        const std::string body = gen.body(expected);
        INFO("round " << round << ": " << body);
        REQUIRE(json::accept(body));
        CHECK(found(body) == std::optional<Found>(expected));
        check_against_nlohmann(body);
    }
}

TEST_CASE("unescape_json_string agrees with nlohmann on random keys", "[json_spans]") {
    Generator gen(7);
    for (int round = 0; round < 3000; ++round) {
        const std::string token = round % 2 ? gen.string() : gen.key();
        INFO(token);
        const auto decoded = unescape_json_string(token);
        REQUIRE(decoded);
        CHECK(*decoded == json::parse(token).get<std::string>());
    }
}
