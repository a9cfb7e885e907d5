#include <catch2/catch.hpp>

#include "http/total_count_header.h"

using tributary::total_count;

TEST_CASE("X-Total-Count: digits within int64, the first header only; anything else is no count") {
    CHECK(total_count({"8800"}) == 8800);
    CHECK(total_count({" 250 "}) == 250);
    CHECK(total_count({"0"}) == 0);
    CHECK(total_count({"12", "99"}) == 12);
    CHECK(total_count({"999999999999999999"}) == 999999999999999999);
    CHECK_FALSE(total_count({}));
    CHECK_FALSE(total_count({""}));
    CHECK_FALSE(total_count({"-1"}));
    CHECK_FALSE(total_count({"12a"}));
    CHECK_FALSE(total_count({"1 2"}));
    CHECK_FALSE(total_count({"1e3"}));
    CHECK_FALSE(total_count({"9999999999999999999"}));
}
