#include "support/login_role.h"

#include <catch2/catch.hpp>

#include <pqxx/pqxx>

namespace tributary::testing {

std::string as_user(const std::string& url, const std::string& user) {
    const auto scheme_end = url.find("://") + 3;
    const auto at = url.find('@', scheme_end);
    return url.substr(0, scheme_end) + user + url.substr(at);
}

LoginRole::LoginRole(const TestDatabase& db, const std::string& suffix)
    : name_(db.scalar("SELECT current_database()") + "_" + suffix), db_url_(db.url()) {
    db.exec("CREATE ROLE " + name_ + " LOGIN");
}

LoginRole::~LoginRole() {
    try {
        pqxx::connection c(db_url_);
        pqxx::nontransaction tx(c);
        tx.exec("DROP OWNED BY " + name_);
        tx.exec("DROP ROLE " + name_);
    } catch (...) {
        // Still a member somewhere, or the database is gone first: the
        // cluster is thrown away at the end of the run.
    }
}

bool denied(const std::string& url, const std::string& sql) {
    try {
        pqxx::connection c(url);
        pqxx::nontransaction tx(c);
        tx.exec(sql);
        return false;
    } catch (const pqxx::sql_error& e) {
        INFO(e.what());
        CHECK(std::string(e.what()).find("permission denied") != std::string::npos);
        return true;
    }
}

}  // namespace tributary::testing
