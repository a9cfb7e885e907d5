#include "partition_steps.h"

#include <string>
#include <vector>

#include <spdlog/spdlog.h>

#include "postgres/statements.h"

namespace tributary::postgres {
namespace {

namespace sql = statements::maintainer;

constexpr const char* kObserve = "maintainer_observe_partitions";
constexpr const char* kAhead = "maintainer_partitions_ahead";

}  // namespace

ObservePartitionsStep::ObservePartitionsStep(MaintainerFence& fence) : fence_(fence) {
    fence_.session().prepare(kObserve, sql::observe_partitions);
}

void ObservePartitionsStep::run(const maintenance::MaintainerLease& lease) {
    fence_.run(lease, [](pqxx::work& tx) { tx.exec_prepared(kObserve); });
}

PartitionsAheadStep::PartitionsAheadStep(MaintainerFence& fence) : fence_(fence) {
    fence_.session().prepare(kAhead, sql::partitions_ahead);
}

void PartitionsAheadStep::run(const maintenance::MaintainerLease& lease) {
    std::vector<std::string> created;
    fence_.run(lease, [&](pqxx::work& tx) {
        created.clear();  // a retried transaction starts over
        for (const auto& row : tx.exec_prepared(kAhead)) created.push_back(row[0].as<std::string>());
    });
    // Logged once committed: a name from a transaction that rolled back was never created.
    for (const auto& name : created)
        spdlog::info("maintainer={} created partition {} (token {})", lease.holder, name, lease.token);
}

}  // namespace tributary::postgres
