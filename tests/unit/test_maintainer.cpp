// The elected maintainer (ElectedRole, (src/maintenance/elected_role.h) against the fake lease store: one holder at a
// time, steps in order, renewal between steps, no action after the lease is lost.

#include <catch2/catch.hpp>

#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "maintenance/elected_role.h"
#include "support/fake_lease_store.h"
#include "support/fakes.h"

using namespace tributary;
using namespace std::chrono_literals;
using maintenance::ElectedRole;
using maintenance::MaintainerLease;

namespace {

/// A step that acts only through the fence, as the real ones do, and records "name@token".
class RecordingStep : public maintenance::MaintenanceStep {
public:
    RecordingStep(std::string name, fakes::FakeLeaseStore& store, std::vector<std::string>& acted)
        : name_(std::move(name)), store_(store), acted_(acted) {}
    const char* name() const override { return name_.c_str(); }
    void run(const MaintainerLease& lease) override {
        if (before) before();
        store_.fence(lease);
        if (fails) throw std::runtime_error("step broke");
        acted_.push_back(name_ + "@" + std::to_string(lease.token));
    }
    std::function<void()> before;
    bool fails = false;

private:
    std::string name_;
    fakes::FakeLeaseStore& store_;
    std::vector<std::string>& acted_;
};

class ForbiddenStore : public maintenance::LeaseStore {
public:
    std::optional<std::int64_t> acquire(const std::string&, std::chrono::milliseconds) override {
        throw maintenance::MaintainerForbidden("permission denied for function maintainer_acquire");
    }
    void release(const MaintainerLease&) override {}
};

const maintenance::ElectionTimings kTimings{30s, 60s};

}  // namespace

TEST_CASE("maintainer: one holder at a time; its pass runs every step in order", "[maintainer]") {
    fakes::FakeClock clock;
    fakes::FakeLeaseStore store(clock);
    std::vector<std::string> acted;
    RecordingStep observe("observe", store, acted), ahead("ahead", store, acted);
    ElectedRole a("maintainer", store, {&observe, &ahead}, "a", kTimings),
        b("maintainer", store, {&observe, &ahead}, "b", kTimings);

    REQUIRE(a.hold());
    CHECK_FALSE(b.hold());
    CHECK(a.pass());
    CHECK(acted == std::vector<std::string>{"observe@1", "ahead@1"});
    CHECK(a.hold());  // renewing keeps the token
    CHECK(a.lease()->token == 1);
    CHECK_FALSE(b.lease());
}

TEST_CASE("maintainer: renews between steps, so slow steps do not cost the lease", "[maintainer]") {
    fakes::FakeClock clock;
    fakes::FakeLeaseStore store(clock);
    std::vector<std::string> acted;
    RecordingStep one("one", store, acted), two("two", store, acted), three("three", store, acted);
    for (auto* step : {&one, &two, &three}) step->before = [&] { clock.advance(20s); };
    ElectedRole a("maintainer", store, {&one, &two, &three}, "a", kTimings);
    REQUIRE(a.hold());
    CHECK(a.pass());
    CHECK(acted == std::vector<std::string>{"one@1", "two@1", "three@1"});
}

TEST_CASE("maintainer: a step that fails is logged and the pass goes on", "[maintainer]") {
    fakes::FakeClock clock;
    fakes::FakeLeaseStore store(clock);
    std::vector<std::string> acted;
    RecordingStep broken("broken", store, acted), next("next", store, acted);
    broken.fails = true;
    ElectedRole a("maintainer", store, {&broken, &next}, "a", kTimings);
    REQUIRE(a.hold());
    CHECK(a.pass());
    CHECK(acted == std::vector<std::string>{"next@1"});
}

TEST_CASE("maintainer: once its lease lapsed and another took it, it acts no more", "[maintainer]") {
    fakes::FakeClock clock;
    fakes::FakeLeaseStore store(clock);
    std::vector<std::string> acted;
    RecordingStep first("first", store, acted), second("second", store, acted);
    ElectedRole a("maintainer", store, {&first, &second}, "a", kTimings),
        b("maintainer", store, {&first, &second}, "b", kTimings);
    REQUIRE(a.hold());
    // a stalls inside its first step past its lease; b takes over meanwhile.
    bool stalled = false;
    first.before = [&] {
        if (stalled) return;
        stalled = true;
        clock.advance(31s);
        REQUIRE(b.hold());
    };
    CHECK_FALSE(a.pass());
    CHECK_FALSE(a.lease());
    CHECK(acted.empty());  // a's fenced step was refused, and it ran no further step
    CHECK(b.pass());
    CHECK(acted == std::vector<std::string>{"first@2", "second@2"});
    CHECK_FALSE(a.hold());
}

TEST_CASE("maintainer: a released lease is free for the next at once", "[maintainer]") {
    fakes::FakeClock clock;
    fakes::FakeLeaseStore store(clock);
    ElectedRole a("maintainer", store, {}, "a", kTimings), b("maintainer", store, {}, "b", kTimings);
    REQUIRE(a.hold());
    a.release();
    CHECK_FALSE(a.lease());
    REQUIRE(b.hold());
    CHECK(b.lease()->token == 2);
}

TEST_CASE("maintainer: a role that may not maintain is an error, not a lease held by another", "[maintainer]") {
    ForbiddenStore store;
    ElectedRole a("maintainer", store, {}, "a", kTimings);
    CHECK_THROWS_AS(a.hold(), maintenance::MaintainerForbidden);
}
