#include "postgres_log_announcer.h"

#include <sstream>
#include <string>

#include "maintainer_fence.h"
#include "postgres/statements.h"

namespace tributary::postgres {
namespace {

constexpr const char* kAnnounce = "herald_announce_nodes";

/// The watermarks as the statement takes and gives them: decimal numbers separated by commas
/// (libpqxx 6.4 converts no arrays).
std::string joined(const std::vector<std::uint64_t>& watermarks) {
    std::string text;
    for (const auto w : watermarks) {
        if (!text.empty()) text += ',';
        text += std::to_string(w);
    }
    return text;
}

std::vector<std::uint64_t> split(const std::string& text) {
    std::vector<std::uint64_t> watermarks;
    std::istringstream in(text);
    for (std::string item; std::getline(in, item, ',');) watermarks.push_back(std::stoull(item));
    return watermarks;
}

}  // namespace

PostgresLogAnnouncer::PostgresLogAnnouncer(PostgresSession& session) : session_(session) {
    session_.prepare(kAnnounce, statements::herald::announce);
}

maintenance::Announcement PostgresLogAnnouncer::announce(const maintenance::MaintainerLease& lease,
                                                         const std::vector<std::uint64_t>& since) {
    // Unknown travels as NULL (a null pointer).
    const std::string since_text = joined(since);
    const auto row = session_.run([&](pqxx::connection& c) {
        try {
            pqxx::nontransaction tx(c);
            return tx.exec_prepared1(kAnnounce, lease.holder, lease.token,
                                     since.empty() ? static_cast<const char*>(nullptr) : since_text.c_str());
        } catch (const pqxx::sql_error& e) {
            throw_if_maintainer_error(e);
            throw;
        }
    });
    if (row[0].is_null())
        throw maintenance::LeaseLost("herald \"" + lease.holder + "\" no longer holds the lease (token " +
                                     std::to_string(lease.token) + ")");
    return {split(row[0].c_str()), row[1].as<bool>()};
}

bool PostgresLogAnnouncer::log_is_distributed() {
    return session_.run([&](pqxx::connection& c) {
        pqxx::nontransaction tx(c);
        return tx.exec1(statements::herald::log_is_distributed)[0].as<bool>();
    });
}

}  // namespace tributary::postgres
