// parse_byte_size (src/cli/byte_size.h): `retention set --max-size`.

#include <catch2/catch.hpp>

#include "cli/byte_size.h"
#include "cli/usage_error.h"

using tributary::cli::parse_byte_size;
using tributary::cli::UsageError;

TEST_CASE("parse_byte_size reads plain bytes and decimal units as powers of 1000", "[byte_size]") {
    CHECK(parse_byte_size("1048576") == 1048576);
    CHECK(parse_byte_size("7B") == 7);
    CHECK(parse_byte_size("2kB") == 2000);
    CHECK(parse_byte_size("3MB") == 3000000);
    CHECK(parse_byte_size("500GB") == 500000000000LL);
    CHECK(parse_byte_size("1TB") == 1000000000000LL);
}

TEST_CASE("parse_byte_size reads binary units as powers of 1024, any case, spaces allowed", "[byte_size]") {
    CHECK(parse_byte_size("1KiB") == 1024);
    CHECK(parse_byte_size("20 GiB") == 20LL * 1024 * 1024 * 1024);
    CHECK(parse_byte_size("1mib") == 1024 * 1024);
    CHECK(parse_byte_size("2 TiB") == 2LL * 1024 * 1024 * 1024 * 1024);
}

TEST_CASE("parse_byte_size refuses what is not a positive size", "[byte_size]") {
    CHECK_THROWS_AS(parse_byte_size(""), UsageError);
    CHECK_THROWS_AS(parse_byte_size("GB"), UsageError);
    CHECK_THROWS_AS(parse_byte_size("0"), UsageError);
    CHECK_THROWS_AS(parse_byte_size("-5GB"), UsageError);
    CHECK_THROWS_AS(parse_byte_size("5 parsecs"), UsageError);
    CHECK_THROWS_AS(parse_byte_size("1.5GB"), UsageError);
    CHECK_THROWS_AS(parse_byte_size("9000000TiB"), UsageError);  // past 8 EiB
    CHECK_THROWS_AS(parse_byte_size("1234567890123456"), UsageError);
}
