#include "support/pgbouncer.h"

#include <csignal>
#include <cstdlib>
#include <fstream>
#include <stdexcept>

#include <unistd.h>

#include "support/child_process.h"

namespace tributary::testing {

namespace {

std::string pgbouncer_tmp() {
    const char* script = std::getenv("TRIBUTARY_PGBOUNCER_TMP");
    if (!script || !*script)
        throw std::runtime_error(
            "TRIBUTARY_PGBOUNCER_TMP is not set: run the tests with scripts/test, or set it to "
            "scripts/pgbouncer-tmp");
    return script;
}

std::string new_directory() {
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/pgbouncer-test.XXXXXX";
    if (!mkdtemp(pattern.data())) throw std::runtime_error("cannot create a directory for PgBouncer");
    return pattern;
}

}  // namespace

PgBouncer::PgBouncer(const std::string& database_url, const std::string& mode, int pool_size)
    : script_(pgbouncer_tmp()), dir_(new_directory()) {
    const auto started = run_program({script_, "start", dir_, database_url, mode, std::to_string(pool_size)});
    if (started.code != 0) throw std::runtime_error("pgbouncer-tmp start failed: " + started.err);
    url_ = started.out.substr(0, started.out.find('\n'));
}

PgBouncer::~PgBouncer() {
    signal(SIGCONT);  // a stopped PgBouncer cannot stop
    run_program({script_, "stop", dir_});
}

void PgBouncer::signal(int sig) const {
    std::ifstream file(dir_ + "/pid");
    pid_t pid = 0;
    if (file >> pid && pid > 0) ::kill(pid, sig);
}

}  // namespace tributary::testing
