#include "postgres_activity.h"

#include "postgres/statements.h"

namespace tributary::postgres {
namespace {

constexpr const char* kFold = "maintainer_activity_fold";

}  // namespace

PostgresActivity::PostgresActivity(MaintainerFence& fence) : fence_(fence) {
    fence_.session().prepare(kFold, statements::activity::fold);
}

int PostgresActivity::fold(const maintenance::MaintainerLease& lease, int max) {
    int folded = 0;
    fence_.run(lease, [&](pqxx::work& tx) { folded = tx.exec_prepared1(kFold, max)[0].as<int>(); });
    return folded;
}

}  // namespace tributary::postgres
