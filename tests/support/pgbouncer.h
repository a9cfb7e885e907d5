#pragma once

#include <string>

namespace tributary::testing {

/// A real PgBouncer in front of the test cluster, started by scripts/pgbouncer-tmp
/// (TRIBUTARY_PGBOUNCER_TMP, set by scripts/test) and stopped at the end.
class PgBouncer {
public:
    /// Pools the server of `database_url` (a TestDatabase's); `mode` "transaction" or "session",
    /// `pool_size` server connections per database and user.
    PgBouncer(const std::string& database_url, const std::string& mode, int pool_size = 20);
    ~PgBouncer();
    PgBouncer(const PgBouncer&) = delete;
    PgBouncer& operator=(const PgBouncer&) = delete;

    /// `database_url`'s database through the pooler.
    const std::string& url() const { return url_; }

    /// Sends `sig` to the PgBouncer process (SIGSTOP: every session through it stops answering,
    /// with its connections left open; SIGCONT: it goes on).
    void signal(int sig) const;

private:
    std::string script_;
    std::string dir_;
    std::string url_;
};

}  // namespace tributary::testing
