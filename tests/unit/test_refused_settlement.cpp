// How a consumer counts an ack or fail that the database refused.

#include <catch2/catch.hpp>

#include "core/refused_settlement.h"

using namespace tributary;
using namespace std::chrono_literals;

TEST_CASE("refused settlement: without a failed earlier try a refusal is a lost lease") {
    const auto now = std::chrono::steady_clock::now();
    CHECK(judge_refusal(false, now, now + 10s) == Refusal::lost);
    CHECK(judge_refusal(false, now, now - 10s) == Refusal::lost);
}

TEST_CASE("refused settlement: after a failed try, refused within the lease, the failed try settled it") {
    const auto now = std::chrono::steady_clock::now();
    CHECK(judge_refusal(true, now, now + 1ms) == Refusal::settled_by_us);
}

TEST_CASE("refused settlement: after a failed try, refused past the lease, another consumer may hold it") {
    const auto now = std::chrono::steady_clock::now();
    CHECK(judge_refusal(true, now, now) == Refusal::lost);
    CHECK(judge_refusal(true, now, now - 1ms) == Refusal::lost);
}
