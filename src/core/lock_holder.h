#pragma once

#include <string>

namespace tributary {

/// A session that holds a source's lock without being a loader in a turn:
/// while it does, no loader can ask that source. Anyone who can connect to
/// the database can take an advisory lock, so this is said loudly (log,
/// metric, status), since nothing else about the source looks wrong.
struct LockHolder {
    int pid = 0;              ///< its server process
    std::string user;         ///< its database role
    std::string application;  ///< its application_name (anyone can set it)
    std::string since;        ///< when its session last changed state; empty when the database does not say
    std::string why;          ///< why it is not a loader in a turn
};

}  // namespace tributary
