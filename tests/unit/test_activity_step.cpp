// ActivityStep (src/maintenance/activity_step.h) against a fake fold: it folds until a call
// folds fewer than a chunk, stops at its time budget with more to fold, and lets a lost lease out.

#include <catch2/catch.hpp>

#include <algorithm>
#include <vector>

#include "maintenance/activity_step.h"

using namespace tributary;
using maintenance::MaintainerLease;

namespace {

/// A log of `backlog` events to fold; records each call's `max`.
class FakeFold : public maintenance::ActivityFold {
public:
    long long backlog = 0;
    std::vector<int> calls;
    bool lease_lost = false;

    int fold(const MaintainerLease&, int max) override {
        if (lease_lost) throw maintenance::LeaseLost("lost");
        calls.push_back(max);
        const int n = static_cast<int>(std::min<long long>(backlog, max));
        backlog -= n;
        return n;
    }
};

}  // namespace

TEST_CASE("the activity step folds in chunks until a call folds fewer than a chunk", "[activity]") {
    FakeFold fold;
    fold.backlog = 250;
    maintenance::ActivityStep step(fold, {100, std::chrono::hours(1)});
    step.run({"m", 1});
    CHECK(fold.backlog == 0);
    CHECK(fold.calls == std::vector<int>{100, 100, 100});

    fold.calls.clear();
    step.run({"m", 1});  // nothing new: one call
    CHECK(fold.calls.size() == 1);
}

TEST_CASE("the activity step leaves the rest to the next pass once its budget is spent", "[activity]") {
    FakeFold fold;
    fold.backlog = 1000000;
    maintenance::ActivityStep step(fold, {10, std::chrono::milliseconds(0)});
    step.run({"m", 1});
    CHECK(fold.calls.size() == 1);
    CHECK(fold.backlog == 1000000 - 10);
}

TEST_CASE("the activity step lets a lost lease out", "[activity]") {
    FakeFold fold;
    fold.lease_lost = true;
    maintenance::ActivityStep step(fold);
    CHECK_THROWS_AS(step.run({"m", 1}), maintenance::LeaseLost);
}

TEST_CASE("the activity step keeps the lease through a budget longer than the lease", "[activity]") {
    FakeFold fold;
    fold.backlog = 250;
    int renewals = 0;
    maintenance::ActivityStep step(fold, {100, std::chrono::hours(1)},
                                   {std::chrono::milliseconds(0), [&](const MaintainerLease&) { ++renewals; }});
    step.run({"m", 1});
    CHECK(fold.backlog == 0);
    CHECK(renewals == 3);  // before each call, `every` being 0

    fold.backlog = 250;
    maintenance::ActivityStep losing(
        fold, {100, std::chrono::hours(1)},
        {std::chrono::milliseconds(0), [](const MaintainerLease&) { throw maintenance::LeaseLost("lapsed"); }});
    CHECK_THROWS_AS(losing.run({"m", 1}), maintenance::LeaseLost);
    CHECK(fold.backlog == 250);  // nothing folded once the lease is gone
}
