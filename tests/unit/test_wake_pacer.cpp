// A NOTIFY flood becomes at most one wake-up per window, and the last
// notification of a burst is never lost.

#include <catch2/catch.hpp>

#include "core/wake_pacer.h"

using tributary::WakePacer;
using namespace std::chrono_literals;

TEST_CASE("a flood of notifications wakes once per window, and the last one is never lost") {
    WakePacer pacer(50ms);
    const WakePacer::time_point start{};
    int wakes = 0;
    // 120 000 notifications in 1.2 s (one per 10 µs), each looked at as the
    // listening thread does: at arrival, then when the owed wake-up is due.
    WakePacer::time_point now = start;
    for (int i = 0; i < 120000; ++i) {
        now = start + std::chrono::microseconds(10 * i);
        pacer.notified();
        if (pacer.wake_now(now)) ++wakes;
    }
    CHECK(wakes <= 1200 / 50 + 1);
    REQUIRE(pacer.due());
    CHECK(*pacer.due() > now);
    CHECK_FALSE(pacer.wake_now(*pacer.due() - 1us));
    CHECK(pacer.wake_now(*pacer.due()));  // the burst's tail gets its wake-up
    ++wakes;
    CHECK_FALSE(pacer.due());
    CHECK(wakes <= 1200 / 50 + 2);
}

TEST_CASE("a lone notification after a quiet window wakes at once") {
    WakePacer pacer(50ms);
    const WakePacer::time_point t0{};
    CHECK_FALSE(pacer.wake_now(t0));  // nothing owed
    pacer.notified();
    CHECK(pacer.wake_now(t0));
    pacer.notified();
    CHECK_FALSE(pacer.wake_now(t0 + 49ms));
    CHECK(pacer.wake_now(t0 + 50ms));
    pacer.notified();
    CHECK(pacer.wake_now(t0 + 500ms));
}
