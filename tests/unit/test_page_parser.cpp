#include <catch2/catch.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/batch_rules.h"
#include "http/batch_parser.h"
#include "http/page_parser.h"

using tributary::Cursor;
using tributary::FetchLimits;
using tributary::FetchResult;
using tributary::PagingStyle;
using tributary::ParsedPage;
using tributary::Source;
using Status = FetchResult::Status;

namespace {

const FetchLimits kDefaults{};

// A source keyed by text (after-key) reading `records`, with `key` parts
// and the whole record as payload unless `payload` says.
Source keyed_source(const std::string& records, std::vector<std::string> key = {"/id"},
                    std::optional<std::string> payload = std::nullopt) {
    Source source;
    source.paging.style = PagingStyle::after_key;
    source.layout.records = records;
    source.layout.key = std::move(key);
    source.layout.payload = std::move(payload);
    return source;
}

ParsedPage parse(const std::string& body, const Source& source, int limit = 1000,
                 const Cursor& cursor = Cursor::at("")) {
    return tributary::parse_borrowed_page(body, source, cursor, limit, kDefaults);
}

ParsedPage parse_id(const std::string& body, const Source& source, std::int64_t after_id = 0, int limit = 1000) {
    return tributary::parse_borrowed_page(body, source, Cursor::at_id(after_id), limit, kDefaults);
}

std::vector<std::string> keys(const ParsedPage& page) {
    std::vector<std::string> out;
    for (const auto& e : page.batch.events) out.push_back(e.key);
    return out;
}

std::vector<std::string> payloads(const ParsedPage& page) {
    std::vector<std::string> out;
    for (const auto& e : page.batch.events) out.push_back(e.payload);
    return out;
}

std::vector<std::int64_t> ids(const ParsedPage& page) {
    std::vector<std::int64_t> out;
    for (const auto& e : page.batch.events) out.push_back(e.id);
    return out;
}

bool printable_ascii(const std::string& s) {
    for (unsigned char c : s)
        if (c < 0x20 || c > 0x7e) return false;
    return true;
}

}  // namespace

TEST_CASE("parse_page finds the records wherever --records points", "[page_parser]") {
    struct Case {
        const char* name;
        std::string records;
        std::string body;
        std::vector<std::string> expected_keys;
    };
    const std::vector<Case> cases = {
        {"the body itself", "", R"([{"id":"a"},{"id":"b"}])", {"a", "b"}},
        {"a member", "/data", R"({"data":[{"id":"a"}],"other":[{"id":"x"}]})", {"a"}},
        {"nested members", "/response/items", R"({"response":{"count":1,"items":[{"id":"a"}]},"items":[]})", {"a"}},
        {"an array element", "/pages/1", R"({"pages":[[{"id":"x"}],[{"id":"a"},{"id":"b"}]]})", {"a", "b"}},
        {"an index token names a member in an object", "/1", R"({"1":[{"id":"a"}],"0":[]})", {"a"}},
        {"~1 is a slash", "/a~1b", R"({"a":[],"a/b":[{"id":"a"}]})", {"a"}},
        {"~0 is a tilde", "/m~0n", R"({"m~n":[{"id":"a"}],"m":[]})", {"a"}},
        {"the empty member name", "/", R"({"":[{"id":"a"}],"x":[]})", {"a"}},
        {"a name written with escapes", "/data", R"({"d\u0061ta":[{"\u0069d":"a"}]})", {"a"}},
        {"an empty array", "/data", R"({"data":[]})", {}},
        {"look-alikes elsewhere are not read",
         "/data",
         R"({"meta":{"data":[{"id":"x"}]},"data":[{"id":"a","x":{"id":"y"}}]})",
         {"a"}},
    };
    for (const auto& c : cases) {
        INFO(c.name << ": " << c.body);
        const ParsedPage page = parse(c.body, keyed_source(c.records));
        REQUIRE(page.batch.status == Status::ok);
        CHECK(keys(page) == c.expected_keys);
        for (const auto& e : page.batch.events) CHECK(e.id == 0);
    }
}

TEST_CASE("parse_page: a leading-zero token names no array element", "[page_parser]") {
    const ParsedPage page = parse(R"({"pages":[[],[{"id":"a"}]]})", keyed_source("/pages/01"));
    CHECK(page.batch.status == Status::failing);
    CHECK(page.batch.error == "no records array at /pages/01");
}

TEST_CASE("parse_page reads keys and payloads at their pointers within a record", "[page_parser]") {
    struct Case {
        const char* name;
        std::vector<std::string> key;
        std::optional<std::string> payload;
        std::string record;
        std::string expected_key;
        std::string expected_payload;
    };
    const std::vector<Case> cases = {
        {"the whole record by default", {"/id"}, std::nullopt, R"({"id":"a", "v" : 1})", "a", R"({"id":"a", "v" : 1})"},
        {"a payload member", {"/id"}, "/body", R"({"id":"a","body":{"x": [1]}})", "a", R"({"x": [1]})"},
        {"a nested payload",
         {"/id"},
         "/data/attributes",
         R"({"id":"a","data":{"attributes":"text"}})",
         "a",
         R"("text")"},
        {"a key inside the payload", {"/body/id"}, "/body", R"({"body":{"id":"a","v":2}})", "a", R"({"id":"a","v":2})"},
        {"a nested key", {"/meta/id"}, "", R"({"meta":{"id":"a"}})", "a", R"({"meta":{"id":"a"}})"},
        {"a key in an array", {"/ids/1"}, "/v", R"({"ids":["x","a"],"v":0})", "a", "0"},
        {"an escaped key name", {"/a~1b"}, "/v", R"({"a\/b":"a","v":0})", "a", "0"},
        {"an integer key as sent", {"/id"}, "/v", R"({"id":-0,"v":0})", "-0", "0"},
        {"an integer beyond int64",
         {"/id"},
         "/v",
         R"({"id":123456789012345678901234567890,"v":0})",
         "123456789012345678901234567890",
         "0"},
        {"a string key decoded",
         {"/id"},
         "/v",
         R"({"id":"caf\u00e9 \"x\" \ud83d\ude00","v":0})",
         "caf\xc3\xa9 \"x\" \xf0\x9f\x98\x80",
         "0"},
        {"a composite key",
         {"/id", "/updated_at"},
         "/v",
         R"({"updated_at":"2024-01-01T00:00:00Z","id":123,"v":0})",
         R"([123,"2024-01-01T00:00:00Z"])",
         "0"},
        {"a composite key re-encodes strings minimally",
         {"/a", "/b", "/c"},
         "/v",
         R"({"a":"caf\u00e9","b":"q\"\/\u0041\n","c":"\u001f","v":0})",
         "[\"caf\xc3\xa9\",\"q\\\"/A\\n\",\"\\u001f\"]",
         "0"},
        {"the same pointer twice", {"/id", "/id"}, "/v", R"({"id":"a","v":0})", R"(["a","a"])", "0"},
    };
    for (const auto& c : cases) {
        INFO(c.name << ": " << c.record);
        const ParsedPage page = parse(R"({"data":[)" + c.record + "]}", keyed_source("/data", c.key, c.payload));
        REQUIRE(page.batch.status == Status::ok);
        REQUIRE(page.batch.events.size() == 1);
        CHECK(page.batch.events[0].key == c.expected_key);
        CHECK(page.batch.events[0].payload == c.expected_payload);
        CHECK(page.batch.events[0].id == 0);
    }
}

TEST_CASE("parse_page keeps every record of a page keyed by text: the paging strategy decides", "[page_parser]") {
    const std::string body = R"({"data":[{"id":"c"},{"id":"a"},{"id":"b"},{"id":"a"}]})";
    const ParsedPage page = parse(body, keyed_source("/data"), 2);
    REQUIRE(page.batch.status == Status::ok);
    CHECK(keys(page) == std::vector<std::string>{"c", "a", "b", "a"});
    CHECK_FALSE(page.batch.backlog);
}

TEST_CASE("parse_page reads --next, --has-more and --end-of-stream from the top of the body", "[page_parser]") {
    Source source = keyed_source("/data");
    source.paging.style = PagingStyle::cursor;
    source.paging.next = "/paging/next";
    source.paging.has_more = "/has_more";
    source.paging.end_of_stream = "/meta/0/eos";
    struct Case {
        const char* name;
        std::string members;
        std::optional<std::string> next;
        std::optional<bool> has_more;
        std::optional<bool> end_of_stream;
    };
    const std::vector<Case> cases = {
        {"none", "", std::nullopt, std::nullopt, std::nullopt},
        {"a string decoded", R"("paging":{"next":"abc\u003d\/x"},"has_more":true,"meta":[{"eos":false}])", "abc=/x",
         true, false},
        {"an integer as sent", R"("paging":{"next":120},"has_more":false,"meta":[{"eos":true}])", "120", false, true},
        {"a number as sent", R"("paging":{"next":1.5e3})", "1.5e3", std::nullopt, std::nullopt},
        {"nulls", R"("paging":{"next":null},"has_more":null,"meta":[{"eos":null}])", std::nullopt, std::nullopt,
         std::nullopt},
        {"an empty string", R"("paging":{"next":""})", "", std::nullopt, std::nullopt},
        {"deeper look-alikes are not read", R"("x":{"paging":{"next":"no"},"has_more":"no"},"meta":[{},{"eos":1}])",
         std::nullopt, std::nullopt, std::nullopt},
        {"after the records", R"("has_more":true)", std::nullopt, true, std::nullopt},
    };
    for (const auto& c : cases) {
        const std::string body =
            c.members.empty() ? R"({"data":[{"id":"a"}]})" : "{" + c.members + R"(,"data":[{"id":"a"}]})";
        INFO(c.name << ": " << body);
        const ParsedPage page = parse(body, source);
        REQUIRE(page.batch.status == Status::ok);
        CHECK(page.next == c.next);
        CHECK(page.has_more == c.has_more);
        CHECK(page.end_of_stream == c.end_of_stream);
    }
    const ParsedPage last = parse(R"({"data":[{"id":"a"}],"has_more":false})", source);
    CHECK(last.has_more == false);
}

TEST_CASE("parse_page reads each record's time for --paginate time", "[page_parser]") {
    Source source = keyed_source("/data");
    source.paging.style = PagingStyle::time;
    source.paging.time_field = "/updated_at";
    const std::string body =
        R"({"data":[{"id":"a","updated_at":"2024-01-01T00:00:00\u002e5Z"},{"id":"b","updated_at":1700000000},)"
        R"({"updated_at":1.7e9,"id":"c"}]})";
    const ParsedPage page = parse(body, source);
    REQUIRE(page.batch.status == Status::ok);
    CHECK(page.times == std::vector<std::string>{"2024-01-01T00:00:00.5Z", "1700000000", "1.7e9"});

    SECTION("no times for other styles, nor without --time-field") {
        Source other = source;
        other.paging.style = PagingStyle::cursor;
        CHECK(parse(body, other).times.empty());
        Source zendesk = source;
        zendesk.paging.time_field.clear();
        zendesk.paging.next = "/end_time";
        const ParsedPage by_next = parse(R"({"data":[{"id":"a"}],"end_time":1700000000})", zendesk);
        REQUIRE(by_next.batch.status == Status::ok);
        CHECK(by_next.times.empty());
        CHECK(by_next.next == "1700000000");
    }
}

TEST_CASE("parse_page refuses what cannot be stored, naming it", "[page_parser]") {
    Source timed = keyed_source("/data");
    timed.paging.style = PagingStyle::time;
    timed.paging.time_field = "/t";
    Source paged = keyed_source("/data");
    paged.paging.style = PagingStyle::cursor;
    paged.paging.next = "/next";
    paged.paging.has_more = "/more";
    paged.paging.end_of_stream = "/end";
    const Source composite = keyed_source("/data", {"/id", "/v"});
    const Source nested = keyed_source("/data", {"/meta/id"});
    const Source bodied = keyed_source("/data", {"/id"}, "/body");
    const std::string long_text(tributary::kMaxKeyBytes + 1, 'k');
    struct Case {
        const char* name;
        Source source;
        std::string body;
        std::string message;
    };
    const Source plain = keyed_source("/data");
    const std::vector<Case> cases = {
        {"no records", plain, R"({"items":[]})", "no records array at /data"},
        {"no records: the body is an array", plain, R"([{"id":"a"}])", "no records array at /data"},
        {"records not an array", plain, R"({"data":{"id":"a"}})", "records at /data is an object, expected an array"},
        {"records null", plain, R"({"data":null})", "records at /data is null, expected an array"},
        {"the body not an array", keyed_source(""), R"({"data":[]})",
         "the body is an object, expected an array of records (--records \"\")"},
        {"a record not an object", plain, R"({"data":[{"id":"a"},"b"]})", "record #1 is a string, expected an object"},
        {"a key missing", plain, R"({"data":[{"id":"a"},{"id":"b"},{"id":"c"},{"ID":"d"}]})",
         "record #3: key /id is missing"},
        {"a nested key missing", nested, R"({"data":[{"meta":{}}]})", "record #0: key /meta/id is missing"},
        {"a nested key's parent not an object", nested, R"({"data":[{"meta":"x"}]})",
         "record #0: key /meta/id is missing"},
        {"a key boolean", plain, R"({"data":[{"id":true}]})",
         "record #0: key /id is a boolean, expected a string or an integer"},
        {"a key null", plain, R"({"data":[{"id":null}]})",
         "record #0: key /id is null, expected a string or an integer"},
        {"a key object", plain, R"({"data":[{"id":{}}]})",
         "record #0: key /id is an object, expected a string or an integer"},
        {"a key array", plain, R"({"data":[{"id":[1]}]})",
         "record #0: key /id is an array, expected a string or an integer"},
        {"a key floating", plain, R"({"data":[{"id":1.5}]})",
         "record #0: key /id is a floating-point number (1.5), expected a string or an integer"},
        {"a key empty", plain, R"({"data":[{"id":""}]})", "record #0: key /id is an empty string"},
        {"a key too long", plain, R"({"data":[{"id":")" + long_text + R"("}]})",
         "record #0: key /id is longer than the 1024 bytes a key may have"},
        {"a key too long once decoded", plain,
         R"({"data":[{"id":")" + std::string(tributary::kMaxKeyBytes - 1, 'k') + R"(\u00e9"}]})",
         "record #0: key /id is longer than the 1024 bytes"},
        {"a key of escapes that fits once decoded", plain,
         R"({"data":[{"id":")" + std::string(1000, 'k') + std::string(R"(\u0041)") + R"("}]})", ""},
        {"an integer key too long", plain, R"({"data":[{"id":1)" + std::string(1024, '0') + "}]}",
         "record #0: key /id is longer than the 1024 bytes"},
        {"a composite key too long", composite,
         R"({"data":[{"id":")" + std::string(600, 'a') + R"(","v":")" + std::string(600, 'b') + R"("}]})",
         "record #0: the key [\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa... (1207 characters) is 1207 bytes, more than "
         "the "
         "1024 a key may have"},
        {"a key with U+0000", plain, R"({"data":[{"id":"a\u0000"}]})",
         "record #0: key /id holds U+0000, which PostgreSQL cannot store"},
        {"a composite part missing", composite, R"({"data":[{"id":1}]})", "record #0: key /v is missing"},
        {"a composite part boolean", composite, R"({"data":[{"id":1,"v":false}]})",
         "record #0: key /v is a boolean, expected a string or an integer"},
        {"a payload missing", bodied, R"({"data":[{"id":"a"}]})", "record #0 (key a): payload /body is missing"},
        {"a payload with U+0000 in a value", plain, R"({"data":[{"id":"a","x":"\u0000"}]})",
         "record #0 (key a): payload has U+0000 in a string value, which PostgreSQL jsonb cannot store"},
        {"a payload with U+0000 in a name", bodied, R"({"data":[{"id":"a","body":{"\u0000":1}}]})",
         "record #0 (key a): payload /body has U+0000 in a key"},
        {"U+0000 outside the payload is not stored", bodied, R"({"data":[{"id":"a","x":"\u0000","body":1}]})", ""},
        {"a time missing", timed, R"({"data":[{"id":"a","t":1},{"id":"b"}]})",
         "record #1 (key b): time field /t is missing"},
        {"a time boolean", timed, R"({"data":[{"id":"a","t":true}]})",
         "record #0 (key a): time field /t is a boolean, expected a string or a number"},
        {"a time null", timed, R"({"data":[{"id":"a","t":null}]})",
         "record #0 (key a): time field /t is null, expected a string or a number"},
        {"next a boolean", paged, R"({"data":[],"next":true})",
         "--next /next is a boolean, expected a string, a number or null"},
        {"next an object", paged, R"({"data":[],"next":{"a":1}})", "--next /next is an object"},
        {"next with U+0000", paged, R"({"data":[],"next":"a\u0000"})", "--next /next holds U+0000"},
        {"has-more a string", paged, R"({"data":[],"more":"false"})",
         "--has-more /more is a string, expected a boolean or null"},
        {"end-of-stream a number", paged, R"({"data":[],"end":1})",
         "--end-of-stream /end is an integer, expected a boolean or null"},
        // Ambiguity on a path read: refused, escapes decoded.
        {"records twice", plain, R"({"data":[],"d\u0061ta":[{"id":"a"}]})",
         "duplicate member \"data\" in the top-level object"},
        {"next twice, nested",
         [] {
             Source s = keyed_source("/data");
             s.paging.style = PagingStyle::cursor;
             s.paging.next = "/paging/next";
             return s;
         }(),
         R"({"data":[],"paging":{"next":"a","next":"b"}})", "duplicate member \"next\" in the object at /paging"},
        {"a parent on the path twice", nested, R"({"data":[{"meta":{"id":"a"},"meta":{"id":"b"}}]})",
         "record #0: duplicate member \"meta\""},
        {"a key twice", plain, R"({"data":[{"id":"a","id":"b"}]})", "record #0: duplicate member \"id\""},
        {"a nested key twice", nested, R"({"data":[{"meta":{"id":"a","i\u0064":"b"}}]})",
         "record #0: duplicate member \"id\" in /meta"},
        {"a payload twice", bodied, R"({"data":[{"id":"a","body":1,"body":2}]})",
         "record #0: duplicate member \"body\""},
        {"the first problem of several", plain, R"({"data":[{"id":"a"},{"id":1.5},{}]})",
         "record #1: key /id is a floating-point number"},
        // A layout that cannot be read.
        {"a pointer from the top within the records",
         [] {
             Source s = keyed_source("/data");
             s.paging.style = PagingStyle::cursor;
             s.paging.next = "/data/0/next";
             return s;
         }(),
         R"({"data":[]})", "--next /data/0/next lies within the records (--records /data)"},
        {"no key", keyed_source("/data", {}), R"({"data":[]})", "a record needs a key: no --key is set"},
        {"a pointer that is none", keyed_source("data"), R"({"data":[]})", "--records 'data' is no JSON pointer"},
        {"a bad escape", keyed_source("/data", {"/a~2"}), R"({"data":[]})", "--key '/a~2' is no JSON pointer"},
    };
    for (const auto& c : cases) {
        INFO(c.name << ": " << c.body.substr(0, 200));
        const ParsedPage page = parse(c.body, c.source);
        if (c.message.empty()) {
            CHECK(page.batch.error == "");
            CHECK(page.batch.status == Status::ok);
            continue;
        }
        CHECK(page.batch.status == Status::failing);
        CHECK(page.batch.cause == FetchResult::Cause::invalid_batch);
        CHECK_THAT(page.batch.error, Catch::Contains(c.message));
        CHECK(printable_ascii(page.batch.error));
        CHECK(page.batch.events.empty());
        CHECK(page.times.empty());
    }
}

TEST_CASE("parse_page: duplicates off every path are not the loader's", "[page_parser]") {
    Source source = keyed_source("/data", {"/meta/id"}, "/body");
    source.paging.style = PagingStyle::cursor;
    source.paging.next = "/paging/next";
    const std::string body = R"({"x":1,"x":2,"paging":{"prev":1,"prev":2,"next":"n"},)"
                             R"("data":[{"meta":{"id":"a","v":1,"v":2},"other":1,"other":2,"body":{"k":1,"k":2}}]})";
    const ParsedPage page = parse(body, source);
    REQUIRE(page.batch.status == Status::ok);
    CHECK(keys(page) == std::vector<std::string>{"a"});
    CHECK(payloads(page) == std::vector<std::string>{R"({"k":1,"k":2})"});
    CHECK(page.next == "n");
}

TEST_CASE("parse_page keeps malformed, too deep and too large bodies transient, whatever the layout", "[page_parser]") {
    const Source source = keyed_source("/data");
    for (const std::string& body : {std::string(R"({"data":[{"id":"a"},]})"), std::string(R"({"data":[{"id":"a"})"),
                                    R"({"data":[)" + std::string(70, '[') + std::string(70, ']') + "]}"}) {
        INFO(body);
        const ParsedPage page = parse(body, source);
        CHECK(page.batch.status == Status::transient);
        CHECK(page.batch.events.empty());
    }
    FetchLimits small;
    small.max_body_bytes = 4;
    const ParsedPage page = tributary::parse_borrowed_page(R"({"data":[]})", source, Cursor::at(""), 10, small);
    CHECK(page.batch.status == Status::transient);
    CHECK_THAT(page.batch.error, Catch::Contains("larger than 4 bytes"));
}

TEST_CASE("parse_page reads a page that comes newest first in reverse", "[page_parser]") {
    SECTION("keyed by text, with times") {
        Source source = keyed_source("/messages", {"/ts"});
        source.layout.newest_first = true;
        source.paging.style = PagingStyle::time;
        source.paging.time_field = "/ts";
        const ParsedPage page = parse(R"({"messages":[{"ts":"3"},{"ts":"2"},{"ts":"1"}]})", source, 2);
        REQUIRE(page.batch.status == Status::ok);
        CHECK(keys(page) == std::vector<std::string>{"1", "2", "3"});
        CHECK(page.times == std::vector<std::string>{"1", "2", "3"});
    }
    SECTION("keyed by id: ids must decrease, and the oldest `limit` are kept") {
        Source source;
        source.layout.newest_first = true;
        const std::string body = R"([{"id":9,"payload":"c"},{"id":7,"payload":"b"},{"id":4,"payload":"a"}])";
        const ParsedPage page = parse_id(body, source, 3, 2);
        REQUIRE(page.batch.status == Status::ok);
        CHECK(ids(page) == std::vector<std::int64_t>{4, 7});
        CHECK(payloads(page) == std::vector<std::string>{R"("a")", R"("b")"});

        const ParsedPage all = parse_id(body, source, 3, 10);
        CHECK(ids(all) == std::vector<std::int64_t>{4, 7, 9});

        const ParsedPage rising = parse_id(R"([{"id":1,"payload":1},{"id":2,"payload":2}])", source);
        CHECK(rising.batch.status == Status::failing);
        CHECK_THAT(rising.batch.error, Catch::Contains("ids not strictly decreasing (records come newest first): "
                                                       "event #1 has id 2 after id 1"));
        const ParsedPage old = parse_id(body, source, 5);
        CHECK(old.batch.status == Status::failing);
        CHECK_THAT(old.batch.error, Catch::Contains("event #2 has id 4, not greater than the cursor 5"));
    }
}

TEST_CASE("parse_page for today's protocol is parse_batch, keyed by id", "[page_parser]") {
    const Source source;
    const std::string body =
        R"({"events":[{"id":5,"payload":{"a":1}},{"id":6,"payload":[2]},{"id":9,"payload":3}],"remaining":4})";
    const ParsedPage page = parse_id(body, source, 4, 2);
    const FetchResult batch = tributary::parse_batch(body, 4, 2, kDefaults);
    REQUIRE(page.batch.status == Status::ok);
    CHECK(ids(page) == std::vector<std::int64_t>{5, 6});
    CHECK(payloads(page) == std::vector<std::string>{R"({"a":1})", "[2]"});
    CHECK(keys(page) == std::vector<std::string>{"", ""});
    CHECK(page.batch.backlog == 5);
    CHECK(batch.backlog == page.batch.backlog);
    CHECK(page.times.empty());
    CHECK_FALSE(page.next);
    CHECK_FALSE(page.has_more);

    SECTION("a position cursor is refused, not thrown") {
        const ParsedPage wrong = parse(body, source, 10, Cursor::at("x"));
        CHECK(wrong.batch.status == Status::failing);
        CHECK_THAT(wrong.batch.error, Catch::Contains("the cursor is a position"));
    }
    SECTION("after-id takes one key") {
        Source two;
        two.layout.key = {"/id", "/x"};
        const ParsedPage wrong = parse_id(body, two);
        CHECK(wrong.batch.status == Status::failing);
        CHECK_THAT(wrong.batch.error, Catch::Contains("--paginate after-id takes exactly one --key"));
    }
    SECTION("today's messages") {
        CHECK(parse_id(R"({"events":[{"id":"1","payload":1}]})", source).batch.error ==
              "event #0: id is a string, expected an integer");
        CHECK(parse_id(R"({"data":[]})", source).batch.error == "top-level object has no \"events\" member");
        CHECK(parse_id(R"({"data":[]})", source).batch.status == Status::transient);
    }
}

TEST_CASE("parse_page keyed by id with a layout of its own", "[page_parser]") {
    Source source;
    source.layout.records = "/items";
    source.layout.key = {"/seq"};
    const std::string body = R"({"items":[{"seq":11,"v":1},{"seq":12,"v":2},{"seq":13,"v":3}],"remaining":7})";
    const ParsedPage page = parse_id(body, source, 10, 2);
    REQUIRE(page.batch.status == Status::ok);
    CHECK(ids(page) == std::vector<std::int64_t>{11, 12});
    CHECK(payloads(page) == std::vector<std::string>{R"({"seq":11,"v":1})", R"({"seq":12,"v":2})"});
    CHECK(keys(page) == std::vector<std::string>{"", ""});
    CHECK_FALSE(page.batch.backlog);  // "remaining" is today's protocol's word only

    struct Case {
        std::string body;
        std::string message;
    };
    for (const auto& c : std::vector<Case>{
             {R"({"items":[{"seq":"11"}]})", "record #0: key /seq is a string, expected an integer"},
             {R"({"items":[{"v":1}]})", "record #0: key /seq is missing"},
             {R"({"items":[{"seq":9}]})", "event #0 has id 9, not greater than the cursor 10"},
             {R"({"items":[{"seq":12},{"seq":11}]})", "ids not strictly increasing"},
             {R"({"items":[{"seq":99999999999999999999}]})", "key /seq 99999999999999999999 is out of the 64-bit"},
             {R"({"data":[]})", "no records array at /items"},
         }) {
        INFO(c.body);
        const ParsedPage bad = parse_id(c.body, source, 10);
        CHECK(bad.batch.status == Status::failing);
        CHECK_THAT(bad.batch.error, Catch::Contains(c.message));
    }
}

TEST_CASE("parse_page cuts a large payload out of the body it owns, the same text", "[page_parser]") {
    const std::string big = R"({"k":")" + std::string(1000, 'x') + R"("})";
    const Source source = keyed_source("/data", {"/id"}, "/body");
    for (const std::string& body :
         {R"({"data":[{"id":"a","body":)" + big + "}]}",
          R"({"data":[{"id":"a","body":1},{"id":"b","body": )" + big + R"( },{"id":"c","body":[]}]})"}) {
        const ParsedPage borrowed = parse(body, source);
        const ParsedPage owned = tributary::parse_page(std::string(body), source, Cursor::at(""), 1000, kDefaults);
        REQUIRE(owned.batch.status == Status::ok);
        CHECK(keys(owned) == keys(borrowed));
        CHECK(payloads(owned) == payloads(borrowed));
    }
}

TEST_CASE("parse_page reads today's protocol keyed by text for the other styles", "[page_parser]") {
    Source source;
    source.paging.style = PagingStyle::after_key;
    const std::string body = R"({"events":[{"id":"b","payload":{"x":1}},{"id":7,"payload":2}],"remaining":3})";
    const ParsedPage page = parse(body, source, 1);
    REQUIRE(page.batch.status == Status::ok);
    CHECK(keys(page) == std::vector<std::string>{"b", "7"});
    CHECK(payloads(page) == std::vector<std::string>{R"({"x":1})", "2"});
    CHECK(page.batch.backlog == 3);
    CHECK(keys(parse(R"([{"id":"a","payload":1}])", source)) == std::vector<std::string>{"a"});

    const ParsedPage shape = parse(R"({"data":[]})", source);
    CHECK(shape.batch.status == Status::transient);
    CHECK(shape.batch.error == "top-level object has no \"events\" member");
    const ParsedPage missing = parse(R"({"events":[{"id":"a"}]})", source);
    CHECK(missing.batch.status == Status::failing);
    CHECK(missing.batch.error ==
          "record #0 (key a): payload is missing: an API's own records? --records /events stores each whole");
    const ParsedPage no_key = parse(R"({"events":[{"payload":1}]})", source);
    CHECK(no_key.batch.error == "record #0: key /id is missing");
}

TEST_CASE("parse_page passes a next token on whole, whatever its size: the paging style judges it", "[page_parser]") {
    Source source = keyed_source("/data");
    source.paging.style = PagingStyle::cursor;
    source.paging.next = "/meta/a~1b/~0c";
    const std::string token(9000, 't');
    const ParsedPage page = parse(R"({"data":[],"meta":{"a\/b":{"~c":")" + token + R"("}}})", source);
    REQUIRE(page.batch.status == Status::ok);
    CHECK(page.next == token);
    CHECK(page.batch.events.empty());
}

TEST_CASE("a page kept whole may hold ten times the limit, or 10 000 records, and no more", "[page_parser]") {
    const auto body = [](int n) {
        std::string out = "{\"data\":[";
        for (int i = 0; i < n; ++i) out += (i ? ",{\"id\":" : "{\"id\":") + std::to_string(i) + "}";
        return out + "]}";
    };
    const auto source = keyed_source("/data");
    CHECK(parse(body(10000), source, 100).batch.events.size() == 10000);
    const auto over = parse(body(10001), source, 100);
    CHECK(over.batch.status == Status::failing);
    CHECK_THAT(over.batch.error, Catch::Contains("10001 records, more than 10000") && Catch::Contains("--batch-size"));
    CHECK(parse(body(20000), source, 2000).batch.events.size() == 20000);
    CHECK(parse(body(20001), source, 2000).batch.status == Status::failing);
}

TEST_CASE("parse_page: a bare array of an API's own records read as today's protocol hints at --records \"\"",
          "[page_parser]") {
    const Source source;
    const ParsedPage page = parse_id(R"([{"id":1,"kind":"order"}])", source);
    CHECK(page.batch.status == Status::failing);
    CHECK(page.batch.error ==
          "event #0 (id 1): payload is missing: an API's own records? --records \"\" stores each of a bare array "
          "whole");
}

TEST_CASE("parse_page keyed by id: an inclusive cursor's page may start at the cursor, and keeps limit + 1",
          "[page_parser]") {
    Source source = keyed_source("");
    source.paging.style = PagingStyle::after_id;
    source.paging.cursor_param = "id_gte";
    const std::string body = R"([{"id":100},{"id":101},{"id":102},{"id":103}])";

    const ParsedPage exclusive = parse_id(body, source, 100, 2);
    CHECK(exclusive.batch.status == Status::failing);
    CHECK(exclusive.batch.error ==
          "event #0 has id 100, not greater than the cursor 100 (id_gte): if the parameter is inclusive, add "
          "--inclusive");

    source.paging.inclusive = true;
    const ParsedPage inclusive = parse_id(body, source, 100, 2);
    REQUIRE(inclusive.batch.status == Status::ok);
    CHECK(ids(inclusive) == std::vector<std::int64_t>{100, 101, 102});  // the strategy leaves 100 out

    const ParsedPage behind = parse_id(R"([{"id":7},{"id":8}])", source, 100, 2);
    CHECK(behind.batch.status == Status::failing);
    CHECK(behind.batch.error ==
          "event #0 has id 7, below the cursor 100 (id_gte, inclusive): the API may ignore id_gte (set "
          "--cursor-param to the parameter it reads)");
    // Only the first record may be the cursor's.
    const ParsedPage twice = parse_id(R"([{"id":100},{"id":100}])", source, 100, 2);
    CHECK(twice.batch.status == Status::failing);

    // Newest first, the cursor's record comes last.
    source.layout.newest_first = true;
    const ParsedPage newest = parse_id(R"([{"id":102},{"id":101},{"id":100}])", source, 100, 5);
    REQUIRE(newest.batch.status == Status::ok);
    CHECK(ids(newest) == std::vector<std::int64_t>{100, 101, 102});
}
