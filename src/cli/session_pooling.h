#pragma once

#include <stdexcept>
#include <string>

#include "postgres/session_keeping.h"

namespace tributary::cli {

/// Where the docs say how to run each command behind a connection pooler: the section the
/// refusal below links to, in the installed package and in the source tree.
constexpr const char* kPoolerDocs =
    "\"Behind a connection pooler\" in /usr/share/doc/tributary/docs/operations.md "
    "(docs/operations.md#behind-a-connection-pooler in the source)";

/// A command that needs sessions of its own, and what it keeps on them.
struct OwnSessions {
    std::string command;  ///< e.g. "run"
    std::string holds;    ///< e.g. "advisory locks, LISTEN and prepared statements"
};

/// Thrown by require_own_sessions: the command needs sessions of its own and the database URL
/// leads to a pooler that shares them. Nothing was taken or changed on the database.
class SharedSessionsRefused : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

/// Probes how `db` keeps sessions (postgres::probe_session_keeping) before a command takes any
/// session state: throws SharedSessionsRefused, whose message says what to do, when they are
/// shared; says so in the log when a proxy that keeps them is in between. DatabaseUnavailable
/// passes through.
void require_own_sessions(const std::string& db, const OwnSessions& needs);

/// The probe alone, for commands that can work on shared sessions in some modes (consume
/// --poll-only); logs a proxy that keeps sessions like require_own_sessions.
postgres::SessionProbe probe_and_log(const std::string& db);

/// The refusal's message for `command`.
std::string shared_sessions_refusal(const std::string& db, const OwnSessions& needs, const std::string& evidence,
                                    const std::string& instead = "");

}  // namespace tributary::cli
