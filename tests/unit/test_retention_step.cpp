// RetentionStep (src/maintenance/retention_step.h) against a fake catalogue: what leaves, what
// stays and why, and that a lost lease stops it. The archive command is a real /bin/sh.

#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "maintenance/retention_step.h"

using namespace tributary;
using maintenance::DropOutcome;
using maintenance::MaintainerLease;
using maintenance::PartitionRetention;

namespace {

/// The catalogue as a list of partitions; records what the step did to each.
class FakeRetentionCatalog : public maintenance::RetentionCatalog {
public:
    std::vector<PartitionRetention> rows;
    std::vector<std::string> dropped;
    std::vector<std::string> archived;
    std::map<std::string, std::string> archive_errors;
    /// Partitions whose drop finds the log's lock busy this many more times.
    std::map<std::string, int> busy;
    std::vector<std::string> chunks = {"seq,source_id\n", "1,1\n", "2,1\n"};
    /// The lease the fake database holds: a change under another is refused.
    std::int64_t held_token = 1;

    std::vector<PartitionRetention> partitions() override { return rows; }
    void stream_partition(const std::string&, const std::string&,
                          const std::function<bool(const char*, std::size_t)>& sink) override {
        for (const auto& chunk : chunks)
            if (!sink(chunk.data(), chunk.size())) return;
    }
    void record_archived(const MaintainerLease& lease, const std::string& name) override {
        fence(lease);
        archived.push_back(name);
        row(name).state = "due";
    }
    int record_archive_failed(const MaintainerLease& lease, const std::string& name,
                              const std::string& error) override {
        fence(lease);
        archive_errors[name] = error;
        return ++row(name).archive_failures;
    }
    maintenance::DropResult drop(const MaintainerLease& lease, const std::string& name) override {
        fence(lease);
        if (busy[name] > 0) {
            --busy[name];
            return {DropOutcome::lock_busy, {}};
        }
        if (row(name).state != "due") return {};
        dropped.push_back(name);
        rows.erase(std::find_if(rows.begin(), rows.end(), [&](const auto& p) { return p.name == name; }));
        return {DropOutcome::dropped, {}};
    }

    PartitionRetention& row(const std::string& name) {
        return *std::find_if(rows.begin(), rows.end(), [&](const auto& p) { return p.name == name; });
    }

private:
    void fence(const MaintainerLease& lease) const {
        if (lease.token != held_token) throw maintenance::LeaseLost("another maintainer holds the lease");
    }
};

PartitionRetention partition(const std::string& name, const std::string& state) {
    PartitionRetention p;
    p.name = name;
    p.from_tx = "1";
    p.to_tx = "2";
    p.state = state;
    p.archive = state == "archive";
    return p;
}

const MaintainerLease kLease{"test", 1};

maintenance::LeaseRenewal no_renewal() { return {std::chrono::milliseconds(0), {}}; }

}  // namespace

TEST_CASE("retention drops what is due and leaves what is held, open, kept or waiting", "[retention]") {
    FakeRetentionCatalog catalog;
    catalog.rows = {partition("events_1", "held"), partition("events_2", "due"), partition("events_3", "open"),
                    partition("events_4", "kept"), partition("events_5", "waiting")};
    catalog.rows[0].held_by = {"billing"};
    maintenance::RetentionStep step(catalog, {}, no_renewal());
    step.run(kLease);
    CHECK(catalog.dropped == std::vector<std::string>{"events_2"});

    // The group caught up: the next pass drops it.
    catalog.rows[0].state = "due";
    catalog.rows[0].held_by.clear();
    step.run(kLease);
    CHECK(catalog.dropped == std::vector<std::string>{"events_2", "events_1"});
}

TEST_CASE("retention archives first and drops only after the command exits 0", "[retention]") {
    FakeRetentionCatalog catalog;
    catalog.rows = {partition("events_1", "archive")};

    SECTION("no archive command: it stays") {
        maintenance::RetentionStep step(catalog, {}, no_renewal());
        step.run(kLease);
        step.run(kLease);
        CHECK(catalog.dropped.empty());
        CHECK(catalog.archived.empty());
        CHECK(catalog.archive_errors.empty());
    }
    SECTION("a failing command: it stays, the failure is counted, a later working command archives and drops") {
        maintenance::RetentionStep failing(catalog, {"cat >/dev/null; echo disk full >&2; exit 1", "csv"},
                                           no_renewal());
        failing.run(kLease);
        CHECK(catalog.dropped.empty());
        CHECK(catalog.archived.empty());
        CHECK(catalog.row("events_1").archive_failures == 1);
        CHECK(catalog.archive_errors["events_1"].find("disk full") != std::string::npos);
        CHECK(catalog.archive_errors["events_1"].find("status 1") != std::string::npos);

        maintenance::RetentionStep working(catalog, {"cat >/dev/null", "csv"}, no_renewal());
        working.run(kLease);
        CHECK(catalog.archived == std::vector<std::string>{"events_1"});
        CHECK(catalog.dropped == std::vector<std::string>{"events_1"});
    }
    SECTION("a command that stops reading early is a failure, not a crash") {
        catalog.chunks.assign(2000, std::string(4096, 'x'));
        maintenance::RetentionStep early(catalog, {"head -c 10 >/dev/null", "csv"}, no_renewal());
        early.run(kLease);
        CHECK(catalog.dropped.empty());
        CHECK(catalog.row("events_1").archive_failures == 1);
    }
}

TEST_CASE("retention tries a drop again on a later pass when the log's lock was busy", "[retention]") {
    FakeRetentionCatalog catalog;
    catalog.rows = {partition("events_1", "due")};
    catalog.busy["events_1"] = 1;
    maintenance::RetentionStep step(catalog, {}, no_renewal());
    step.run(kLease);
    CHECK(catalog.dropped.empty());
    step.run(kLease);
    CHECK(catalog.dropped == std::vector<std::string>{"events_1"});
}

TEST_CASE("retention stops acting when the lease is lost", "[retention]") {
    FakeRetentionCatalog catalog;
    catalog.rows = {partition("events_1", "due"), partition("events_2", "due")};

    SECTION("the drop is refused: LeaseLost, nothing dropped") {
        catalog.held_token = 2;
        maintenance::RetentionStep step(catalog, {}, no_renewal());
        CHECK_THROWS_AS(step.run(kLease), maintenance::LeaseLost);
        CHECK(catalog.dropped.empty());
    }
    SECTION("lost while an archive streams: the archive is abandoned unrecorded, nothing dropped") {
        catalog.rows = {partition("events_1", "archive")};
        int renewals = 0;
        maintenance::LeaseRenewal renewal{std::chrono::milliseconds(0), [&](const MaintainerLease&) {
                                              if (++renewals == 2) throw maintenance::LeaseLost("lapsed");
                                          }};
        maintenance::RetentionStep step(catalog, {"cat >/dev/null", "csv"}, renewal);
        CHECK_THROWS_AS(step.run(kLease), maintenance::LeaseLost);
        CHECK(renewals == 2);
        CHECK(catalog.archived.empty());
        CHECK(catalog.archive_errors.empty());
        CHECK(catalog.dropped.empty());
    }
}

TEST_CASE("retention renews the lease between the chunks of an archive", "[retention]") {
    FakeRetentionCatalog catalog;
    catalog.rows = {partition("events_1", "archive")};
    int renewals = 0;
    maintenance::LeaseRenewal renewal{std::chrono::milliseconds(0), [&](const MaintainerLease&) { ++renewals; }};
    maintenance::RetentionStep step(catalog, {"cat >/dev/null", "csv"}, renewal);
    step.run(kLease);
    CHECK(renewals == 3);  // one per chunk
    CHECK(catalog.dropped == std::vector<std::string>{"events_1"});
}
