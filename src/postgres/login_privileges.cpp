#include "login_privileges.h"

#include <pqxx/pqxx>

#include "core/errors.h"
#include "postgres/statements.h"
#include "session_settings.h"

namespace tributary::postgres {

namespace sql = statements::login;

namespace {

/// How many missing privileges a refusal names; the rest are counted.
constexpr std::size_t kNamed = 3;

std::string listed(const std::vector<std::string>& missing) {
    std::string text;
    for (std::size_t i = 0; i < missing.size() && i < kNamed; ++i) text += (i ? ", " : "") + missing[i];
    if (missing.size() > kNamed) text += " and " + std::to_string(missing.size() - kNamed) + " more";
    return text;
}

}  // namespace

LoginPrivileges login_privileges(const std::string& conninfo, const std::string& group_role) {
    try {
        pqxx::connection connection(with_connection_defaults(conninfo));
        pqxx::read_transaction tx(connection);
        const auto who = tx.exec_params1(sql::whoami, group_role);
        LoginPrivileges out{who[0].as<std::string>(), who[1].as<bool>(), {}};
        for (const auto& row : tx.exec_params(sql::missing_privileges, group_role))
            out.missing.push_back(row[0].as<std::string>());
        return out;
    } catch (const pqxx::broken_connection& e) {
        throw DatabaseUnavailable(std::string("cannot connect to PostgreSQL: ") + e.what());
    }
}

void require_privileges_of(const std::string& conninfo, const std::string& group_role) {
    const auto login = login_privileges(conninfo, group_role);
    if (login.missing.empty()) return;
    throw PermissionDenied("permission denied: role " + login.user + " lacks " + listed(login.missing) +
                           " (privileges of " + group_role + ")");
}

}  // namespace tributary::postgres
