#include "maintainer_fence.h"

#include "postgres/statements.h"
#include "sql_errors.h"

namespace tributary::postgres {
namespace {

namespace sql = statements::maintainer;

constexpr const char* kLimits = "maintainer_limits";
constexpr const char* kFence = "maintainer_fence";

/// 42501. libpqxx 6.4 leaves sqlstate() empty for some errors it raises as
/// insufficient_privilege: then the server's message says it.
bool is_permission_denied(const pqxx::sql_error& e) {
    if (e.sqlstate() == "42501") return true;
    return dynamic_cast<const pqxx::insufficient_privilege*>(&e) != nullptr ||
           (e.sqlstate().empty() && std::string(e.what()).find("permission denied") != std::string::npos);
}

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
    if (is_permission_denied(e))
        throw maintenance::MaintainerForbidden(
            server_message(e) +
            " (the maintainer's functions need a role in tributary_maintainer: tributary grant maintainer USER)");
}

}  // namespace tributary::postgres
