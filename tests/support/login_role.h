#pragma once

// A LOGIN role of a test's own, to call tributary as a user that holds only
// the privileges the test grants it (sql/privileges/).

#include <string>

#include "support/test_database.h"

namespace tributary::testing {

/// The same database as `url`, logged in as `user` (scripts/pg-tmp trusts
/// loopback connections).
std::string as_user(const std::string& url, const std::string& user);

/// A LOGIN role for one test, dropped at the end. Roles belong to the
/// cluster: the name carries the test database's.
class LoginRole {
public:
    LoginRole(const TestDatabase& db, const std::string& suffix);
    ~LoginRole();
    LoginRole(const LoginRole&) = delete;
    LoginRole& operator=(const LoginRole&) = delete;

    const std::string& name() const { return name_; }

private:
    std::string name_;
    std::string db_url_;
};

/// Whether PostgreSQL refuses `sql` for lack of a privilege (libpqxx 6.4
/// leaves sqlstate() empty for these: the message says it). Any other error
/// fails the test.
bool denied(const std::string& url, const std::string& sql);

}  // namespace tributary::testing
