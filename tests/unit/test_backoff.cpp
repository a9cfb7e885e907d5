#include <catch2/catch.hpp>

#include "core/backoff.h"
#include "core/batch_rules.h"

using namespace tributary;
using namespace std::chrono_literals;

TEST_CASE("exponential ceilings double and stop at the cap") {
    CHECK(exponential_ceiling(1000ms, 60s, 1) == 1000ms);
    CHECK(exponential_ceiling(1000ms, 60s, 2) == 2000ms);
    CHECK(exponential_ceiling(1000ms, 60s, 6) == 32000ms);
    CHECK(exponential_ceiling(1000ms, 60s, 7) == 60000ms);
    CHECK(exponential_ceiling(1000ms, 60s, 1000000) == 60000ms);
}

TEST_CASE("transient delays are full-jitter, failing delays long") {
    Backoff backoff(BackoffPolicy{}, 42);
    for (int failures = 1; failures < 40; ++failures) {
        const auto t = backoff.transient(failures);
        CHECK(t >= 0ms);
        CHECK(t <= exponential_ceiling(1000ms, 60s, failures));
        const auto f = backoff.failing(failures);
        CHECK(f >= 30s);
        CHECK(f <= 30min);
    }
}

TEST_CASE("batch rules: strictly increasing ids above the cursor") {
    CHECK_FALSE(batch_violation({}, 5));
    CHECK_FALSE(batch_violation({{6, "1"}, {9, "1"}}, 5));
    CHECK(batch_violation({{5, "1"}}, 5)->find("not greater than the cursor 5") != std::string::npos);
    CHECK(batch_violation({{6, "1"}, {6, "1"}}, 5)->find("not strictly increasing") != std::string::npos);
    CHECK(batch_violation({{7, "1"}, {6, "1"}}, 5)->find("event #1 has id 6 after id 7") != std::string::npos);
}

TEST_CASE("batch rules: messages name the parameter sent and hint at the likely fix") {
    const SentCursor since{"since_id", false};
    CHECK(*batch_violation({{1, "1"}}, 5, since) ==
          "event #0 has id 1, not greater than the cursor 5 (since_id): the API may ignore since_id (set "
          "--cursor-param to the parameter it reads)");
    CHECK(*batch_violation({{5, "1"}}, 5, since) ==
          "event #0 has id 5, not greater than the cursor 5 (since_id): if the parameter is inclusive, add "
          "--inclusive");
    const SentCursor gte{"id_gte", true};
    CHECK_FALSE(batch_violation({{5, "1"}, {6, "1"}}, 5, gte));
    CHECK(batch_violation({{5, "1"}, {5, "1"}}, 5, gte));
    CHECK(batch_violation({{6, "1"}, {5, "1"}}, 5, gte));
}
