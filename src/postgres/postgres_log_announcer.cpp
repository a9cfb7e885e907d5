#include "postgres_log_announcer.h"

#include <string>

#include "maintainer_fence.h"
#include "postgres/statements.h"

namespace tributary::postgres {
namespace {

constexpr const char* kAnnounce = "herald_announce";

}  // namespace

PostgresLogAnnouncer::PostgresLogAnnouncer(PostgresSession& session) : session_(session) {
    session_.prepare(kAnnounce, statements::herald::announce);
}

maintenance::Announcement PostgresLogAnnouncer::announce(const maintenance::MaintainerLease& lease,
                                                         std::optional<std::uint64_t> since) {
    // xid8 travels as text (a null pointer: NULL); libpqxx 6.4 converts no std::optional.
    const std::string since_text = since ? std::to_string(*since) : "";
    const auto row = session_.run([&](pqxx::connection& c) {
        try {
            pqxx::nontransaction tx(c);
            return tx.exec_prepared1(kAnnounce, lease.holder, lease.token,
                                     since ? since_text.c_str() : static_cast<const char*>(nullptr));
        } catch (const pqxx::sql_error& e) {
            throw_if_maintainer_error(e);
            throw;
        }
    });
    if (row[0].is_null())
        throw maintenance::LeaseLost("herald \"" + lease.holder + "\" no longer holds the lease (token " +
                                     std::to_string(lease.token) + ")");
    return {std::stoull(row[0].c_str()), row[1].as<bool>()};
}

}  // namespace tributary::postgres
