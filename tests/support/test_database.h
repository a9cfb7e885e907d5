#pragma once

#include <string>

namespace tributary::testing {

/// The cluster scripts/test started (TRIBUTARY_TEST_DATABASE_URL); fails
/// the test with a hint when it is not set.
std::string cluster_url();

/// A fresh, empty database on the test cluster for one test, dropped at the
/// end (with FORCE, so a test's leftover sessions cannot keep it alive).
class TestDatabase {
public:
    /// `migrated`: apply the embedded migrations first.
    explicit TestDatabase(bool migrated = true);
    ~TestDatabase();
    TestDatabase(const TestDatabase&) = delete;
    TestDatabase& operator=(const TestDatabase&) = delete;

    const std::string& url() const { return url_; }
    /// Runs one statement and returns the first column of the first row as
    /// text ("" when there is none, "NULL" for null).
    std::string scalar(const std::string& sql) const;
    void exec(const std::string& sql) const;

private:
    std::string name_;
    std::string url_;
};

}  // namespace tributary::testing
