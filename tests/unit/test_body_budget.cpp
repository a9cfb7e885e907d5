#include <catch2/catch.hpp>

#include <chrono>
#include <thread>

#include "core/stop_signal.h"
#include "http/body_budget.h"

using tributary::BodyAllowance;
using tributary::BodyBudget;
using tributary::StopSignal;
using namespace std::chrono_literals;

namespace {

// A deadline that has passed: whoever must wait gives up at once.
std::chrono::steady_clock::time_point passed() { return std::chrono::steady_clock::now() - 1s; }
std::chrono::steady_clock::time_point far() { return std::chrono::steady_clock::now() + 1h; }

}  // namespace

TEST_CASE("a body budget gives out no more than it has", "[body_budget]") {
    BodyBudget budget(100);
    StopSignal stop;
    CHECK(budget.try_take(60));
    CHECK_FALSE(budget.try_take(41));
    CHECK_FALSE(budget.take(41, passed(), stop));
    CHECK(budget.try_take(40));
    budget.give_back(100);
    CHECK(budget.try_take(100));
}

TEST_CASE("an allowance waits only while it holds nothing, and gives all back when dropped", "[body_budget]") {
    BodyBudget budget(100);
    StopSignal stop;
    {
        BodyAllowance first(&budget);
        CHECK(first.grow_to(70, far(), stop));
        CHECK(first.held() == 70);
        BodyAllowance second(&budget);
        // Holding nothing, it may wait; here for nothing, as the deadline has passed.
        CHECK_FALSE(second.grow_to(40, passed(), stop));
        CHECK(second.held() == 0);
        CHECK(second.grow_to(30, far(), stop));
        // Holding some, it never waits, whatever the deadline: two holders
        // waiting for each other would wait for ever.
        CHECK_FALSE(second.grow_to(31, far(), stop));
        CHECK(second.held() == 30);
        first.shrink_to(10);
        CHECK(second.grow_to(90, far(), stop));
        BodyAllowance moved(std::move(second));
        CHECK(moved.held() == 90);
        CHECK(second.held() == 0);
    }
    CHECK(budget.try_take(100));
}

TEST_CASE("a waiting allowance gets what another gives back, and a stop ends the wait", "[body_budget]") {
    BodyBudget budget(100);
    StopSignal stop;
    REQUIRE(budget.try_take(100));
    std::thread giver([&] {
        std::this_thread::sleep_for(50ms);
        budget.give_back(100);
    });
    BodyAllowance waiting(&budget);
    CHECK(waiting.grow_to(80, far(), stop));
    giver.join();

    BodyAllowance stopped(&budget);
    std::thread stopper([&] {
        std::this_thread::sleep_for(50ms);
        stop.request_stop();
    });
    CHECK_FALSE(stopped.grow_to(80, far(), stop));
    stopper.join();
}

TEST_CASE("an allowance without a budget only counts", "[body_budget]") {
    StopSignal stop;
    BodyAllowance free;
    CHECK(free.grow_to(std::size_t{1} << 40, passed(), stop));
    CHECK(free.held() == std::size_t{1} << 40);
}
