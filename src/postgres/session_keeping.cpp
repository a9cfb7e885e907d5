#include "session_keeping.h"

#include <set>
#include <vector>

#include "postgres/statements.h"
#include "postgres_session.h"

namespace tributary::postgres {

namespace {

constexpr int kRounds = 3;

struct ProbeSession {
    explicit ProbeSession(const std::string& conninfo) : session(conninfo, SessionKeeping::shared) {}

    /// The server process serving this session now; notes a login pid that differs.
    int backend_pid(bool& through_proxy) {
        return session.run([&](pqxx::connection& c) {
            pqxx::nontransaction tx(c);
            const int pid = tx.exec(statements::session::backend_pid)[0][0].as<int>();
            if (c.backendpid() != pid) through_proxy = true;
            return pid;
        });
    }

    PostgresSession session;
    std::vector<int> pids;
};

std::string joined(const std::vector<int>& pids) {
    std::string out;
    for (const int pid : pids) out += (out.empty() ? "" : ", ") + std::to_string(pid);
    return out;
}

}  // namespace

SessionProbe probe_session_keeping(const std::string& conninfo) {
    SessionProbe probe;
    ProbeSession first(conninfo), second(conninfo);
    for (int round = 0; round < kRounds; ++round) {
        first.pids.push_back(first.backend_pid(probe.through_proxy));
        second.pids.push_back(second.backend_pid(probe.through_proxy));
    }
    const std::set<int> of_first(first.pids.begin(), first.pids.end());
    const std::set<int> of_second(second.pids.begin(), second.pids.end());
    const bool one_each = of_first.size() == 1 && of_second.size() == 1;
    const bool apart = one_each && *of_first.begin() != *of_second.begin();
    probe.keeping = apart ? SessionKeeping::kept : SessionKeeping::shared;
    probe.evidence =
        "one session was served by server processes " + joined(first.pids) + ", the other by " + joined(second.pids);
    return probe;
}

}  // namespace tributary::postgres
