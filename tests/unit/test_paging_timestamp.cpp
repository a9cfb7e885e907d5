#include <catch2/catch.hpp>

#include "paging/timestamp.h"

using namespace tributary;
using namespace std::chrono_literals;

namespace {

std::int64_t micros_of(const char* text) {
    const auto t = parse_timestamp(text);
    REQUIRE(t);
    return t->micros;
}

std::string moved_back(const char* text, std::chrono::seconds by) {
    const auto t = parse_timestamp(text);
    REQUIRE(t);
    return format_timestamp(t->minus(by));
}

constexpr std::int64_t kSecond = 1000000;

}  // namespace

TEST_CASE("timestamp: ISO 8601 instants in UTC") {
    CHECK(micros_of("1970-01-01T00:00:00Z") == 0);
    CHECK(micros_of("2001-09-09T01:46:40Z") == 1000000000 * kSecond);
    CHECK(micros_of("1969-12-31T23:59:59Z") == -kSecond);
    CHECK(micros_of("2023-11-14T22:13:20Z") == 1700000000 * kSecond);
}

TEST_CASE("timestamp: zone offsets name the same instant, in every spelling") {
    const auto utc = micros_of("2024-01-01T00:00:00Z");
    CHECK(micros_of("2024-01-01T01:00:00+01:00") == utc);
    CHECK(micros_of("2024-01-01T01:00:00+0100") == utc);
    CHECK(micros_of("2023-12-31T19:00:00-05:00") == utc);
    CHECK(micros_of("2023-12-31T19:00:00-0500") == utc);
    CHECK(micros_of("2024-01-01T05:30:00+05:30") == utc);
    CHECK(micros_of("2024-01-01 00:00:00Z") == utc);
    CHECK(micros_of("2024-01-01t00:00:00z") == utc);
    CHECK(micros_of("2024-01-01T00:00:00-00:00") == utc);
}

TEST_CASE("timestamp: leap years") {
    CHECK(parse_timestamp("2024-02-29T00:00:00Z"));
    CHECK(parse_timestamp("2000-02-29T00:00:00Z"));
    CHECK_FALSE(parse_timestamp("2023-02-29T00:00:00Z"));
    CHECK_FALSE(parse_timestamp("1900-02-29T00:00:00Z"));
    CHECK_FALSE(parse_timestamp("2024-04-31T00:00:00Z"));
    CHECK(micros_of("2024-03-01T00:00:00Z") - micros_of("2024-02-28T00:00:00Z") == 2 * 86400 * kSecond);
    CHECK(micros_of("2023-03-01T00:00:00Z") - micros_of("2023-02-28T00:00:00Z") == 86400 * kSecond);
}

TEST_CASE("timestamp: fractions to the microsecond, finer digits cut") {
    const auto base = micros_of("2024-01-01T00:00:00Z");
    auto t = parse_timestamp("2024-01-01T00:00:00.5Z");
    REQUIRE(t);
    CHECK(t->micros == base + 500000);
    CHECK(t->fraction_digits == 1);
    t = parse_timestamp("2024-01-01T00:00:00.123456789+00:00");
    REQUIRE(t);
    CHECK(t->micros == base + 123456);
    CHECK(t->fraction_digits == 6);
    CHECK(micros_of("2024-01-01T00:00:00,25Z") == base + 250000);
}

TEST_CASE("timestamp: a leap second is the first second of the next minute") {
    CHECK(micros_of("2016-12-31T23:59:60Z") == micros_of("2017-01-01T00:00:00Z"));
}

TEST_CASE("timestamp: Unix seconds, integer or decimal") {
    auto t = parse_timestamp("1700000000");
    REQUIRE(t);
    CHECK(t->micros == 1700000000 * kSecond);
    CHECK(t->format == Timestamp::Format::unix_seconds);
    CHECK(micros_of("1700000000.25") == 1700000000 * kSecond + 250000);
    CHECK(micros_of("0") == 0);
    CHECK(micros_of("253402300799") == micros_of("9999-12-31T23:59:59Z"));
}

TEST_CASE("timestamp: garbage is no timestamp") {
    for (const char* bad : {"",
                            "abc",
                            "2024-01-01",
                            "2024-01-01T00:00:00",
                            "2024-01-01T00:00Z",
                            "2024-13-01T00:00:00Z",
                            "2024-00-10T00:00:00Z",
                            "2024-01-00T00:00:00Z",
                            "2024-01-01T24:00:00Z",
                            "2024-01-01T00:60:00Z",
                            "2024-01-01T00:00:61Z",
                            "2024-01-01T00:00:00+24:00",
                            "2024-01-01T00:00:00+01",
                            "2024-01-01T00:00:00.Z",
                            "2024-01-01T00:00:00Z ",
                            " 2024-01-01T00:00:00Z",
                            "24-01-01T00:00:00Z",
                            "2024-1-01T00:00:00Z",
                            "-5",
                            "+5",
                            "1e9",
                            "1.",
                            ".5",
                            "1 ",
                            "0x10",
                            "1700000000000",
                            "253402300800",
                            "null",
                            "true",
                            "2024-01-01T00:00:00Zjunk"}) {
        INFO(bad);
        CHECK_FALSE(parse_timestamp(bad));
    }
    CHECK(parse_timestamp("2024-01-01T00:00:00." + std::string(40, '1') + "Z"));
    CHECK_FALSE(parse_timestamp("2024-01-01T00:00:00." + std::string(50, '1') + "Z"));
}

TEST_CASE("timestamp: ISO 8601 is written in UTC, its fraction's digits kept") {
    CHECK(moved_back("2024-01-01T01:00:00+01:00", 0s) == "2024-01-01T00:00:00Z");
    CHECK(moved_back("2024-01-01T00:00:30Z", 60s) == "2023-12-31T23:59:30Z");
    CHECK(moved_back("2024-03-01T00:00:00Z", 86400s) == "2024-02-29T00:00:00Z");
    CHECK(moved_back("2024-01-01T00:00:00.250Z", 1s) == "2023-12-31T23:59:59.250Z");
    CHECK(moved_back("2024-01-01T00:00:00.5-02:00", 0s) == "2024-01-01T02:00:00.5Z");
    CHECK(moved_back("2024-01-01T00:00:00.123456789Z", 0s) == "2024-01-01T00:00:00.123456Z");
    CHECK(moved_back("1969-12-31T23:59:59.5Z", 1s) == "1969-12-31T23:59:58.5Z");
}

TEST_CASE("timestamp: Unix seconds are written as whole seconds, rounded down") {
    CHECK(moved_back("1700000000", 300s) == "1699999700");
    CHECK(moved_back("1700000000.75", 60s) == "1699999940");
}

TEST_CASE("timestamp: moved back past the first instant it can write, it stays there") {
    CHECK(moved_back("30", 60s) == "0");
    CHECK(moved_back("0000-01-01T00:00:30Z", 60s) == "0000-01-01T00:00:00Z");
}

TEST_CASE("timestamp: what is written reads back as the same instant") {
    for (const char* text : {"2024-02-29T23:59:59.999999Z", "1999-12-31T23:59:59+01:00", "2100-03-01T00:00:00Z",
                             "0001-01-01T00:00:00Z", "9999-12-31T23:59:59Z", "1600-02-29T12:00:00.5Z"}) {
        INFO(text);
        const auto t = parse_timestamp(text);
        REQUIRE(t);
        const auto again = parse_timestamp(format_timestamp(*t));
        REQUIRE(again);
        CHECK(again->micros == t->micros);
    }
}
