#include "maintainer_fence.h"

#include "postgres/statements.h"
#include "sql_errors.h"

namespace tributary::postgres {
namespace {

namespace sql = statements::maintainer;

constexpr const char* kLimits = "maintainer_limits";
constexpr const char* kFence = "maintainer_fence";

}  // namespace

MaintainerFence::MaintainerFence(PostgresSession& session, std::chrono::milliseconds lease)
    : session_(session),
      statement_timeout_ms_(std::to_string(std::max<std::int64_t>(lease.count() / 2, 1))),
      idle_timeout_ms_(std::to_string(std::max<std::int64_t>(lease.count() / 3, 1))) {
    session_.prepare(kLimits, sql::limits);
    session_.prepare(kFence, sql::fence);
}

void MaintainerFence::begin(pqxx::work& tx, const maintenance::MaintainerLease& lease,
                            const std::string& statement_timeout_ms) {
    tx.exec_prepared(kLimits, statement_timeout_ms, idle_timeout_ms_);
    tx.exec_prepared(kFence, lease.holder, lease.token);
}

void MaintainerFence::translate(const pqxx::sql_error& e) { throw_if_maintainer_error(e); }

void throw_if_maintainer_error(const pqxx::sql_error& e) {
    if (e.sqlstate() == "TR001") throw maintenance::LeaseLost(server_message(e));
    // What to grant is said by whoever catches it: `maintain` stops with the refusal, `run` warns.
    if (is_permission_denied(e)) throw maintenance::MaintainerForbidden(server_message(e));
}

}  // namespace tributary::postgres
