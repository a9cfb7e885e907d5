#include "support/test_database.h"

#include <atomic>
#include <cstdlib>
#include <stdexcept>

#include <unistd.h>
#include <pqxx/pqxx>

#include "postgres/migrator.h"

namespace tributary::testing {

namespace {

/// The URL of another database on the same cluster: replaces the path of a
/// postgresql:// URI.
std::string with_database(const std::string& url, const std::string& database) {
    const auto scheme_end = url.find("://");
    if (scheme_end == std::string::npos) return url + " dbname=" + database;
    const auto path = url.find('/', scheme_end + 3);
    const auto query = url.find('?', scheme_end + 3);
    std::string base = url.substr(0, std::min(path, query));
    return base + "/" + database + (query == std::string::npos ? "" : url.substr(query));
}

}  // namespace

std::string cluster_url() {
    const char* url = std::getenv("TRIBUTARY_TEST_DATABASE_URL");
    if (!url || !*url)
        throw std::runtime_error(
            "TRIBUTARY_TEST_DATABASE_URL is not set: run the tests with scripts/test, which starts a throwaway "
            "cluster");
    return url;
}

TestDatabase::TestDatabase(bool migrated) {
    static std::atomic<int> counter{0};
    name_ = "t_" + std::to_string(getpid()) + "_" + std::to_string(counter++);
    {
        pqxx::connection admin(cluster_url());
        pqxx::nontransaction tx(admin);
        tx.exec("DROP DATABASE IF EXISTS " + name_ + " WITH (FORCE)");
        tx.exec("CREATE DATABASE " + name_);
    }
    url_ = with_database(cluster_url(), name_);
    if (migrated) postgres::Migrator(url_).migrate();
}

TestDatabase::~TestDatabase() {
    try {
        pqxx::connection admin(cluster_url());
        pqxx::nontransaction tx(admin);
        tx.exec("DROP DATABASE IF EXISTS " + name_ + " WITH (FORCE)");
    } catch (...) {
        // The cluster is thrown away at the end of the run anyway.
    }
}

std::string TestDatabase::scalar(const std::string& sql) const {
    pqxx::connection c(url_);
    pqxx::nontransaction tx(c);
    const auto rows = tx.exec(sql);
    if (rows.empty()) return "";
    return rows[0][0].is_null() ? "NULL" : rows[0][0].as<std::string>();
}

void TestDatabase::exec(const std::string& sql) const {
    pqxx::connection c(url_);
    pqxx::nontransaction tx(c);
    tx.exec(sql);
}

}  // namespace tributary::testing
