#include "role_membership.h"

#include <memory>
#include <stdexcept>

#include <pqxx/pqxx>

#include "core/errors.h"
#include "postgres/statements.h"
#include "session_settings.h"

namespace tributary::postgres {

namespace sql = statements::roles;

namespace {

bool role_exists(pqxx::transaction_base& tx, const std::string& role) {
    return tx.exec_params1(sql::role_exists, role)[0].as<bool>();
}

}  // namespace

void RoleMembership::set(const std::string& group_role, const std::string& member, bool revoke) {
    std::unique_ptr<pqxx::connection> connection;
    try {
        connection = std::make_unique<pqxx::connection>(with_connection_defaults(conninfo_));
    } catch (const pqxx::broken_connection& e) {
        throw DatabaseUnavailable(std::string("cannot connect to PostgreSQL: ") + e.what());
    }
    pqxx::work tx(*connection);
    if (!role_exists(tx, group_role))
        throw std::runtime_error("role " + group_role +
                                 " does not exist: run `tributary migrate` as a role with CREATEROLE, or create it "
                                 "(CREATE ROLE " +
                                 group_role + " NOLOGIN) and run `tributary migrate` again");
    if (!role_exists(tx, member))
        throw std::runtime_error("role " + member + " does not exist: create it first (CREATE ROLE " + member +
                                 " LOGIN ...)");
    tx.exec(tx.exec_params1(sql::membership, group_role, member, revoke)[0].as<std::string>());
    tx.commit();
}

}  // namespace tributary::postgres
