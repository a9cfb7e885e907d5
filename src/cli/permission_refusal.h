#pragma once

#include <string>

namespace tributary::cli {

/// Who may run a command: one of tributary's group roles, by the short name
/// `tributary grant` takes ("loader"), or the schema's owner.
struct CommandRole {
    std::string kind;         ///< "loader", "admin", ...; empty: none known
    std::string alternative;  ///< another group role that also may ("" if none)
    bool owner = false;       ///< the schema's owner's command (`migrate`, `grant`)
};

/// The role `command` (its path: "run", "group list") needs, inferred from
/// the command alone.
CommandRole role_for(const std::string& command);

/// What main prints (after "tributary: ") when PostgreSQL refused `command`
/// a privilege (SQLSTATE 42501): the refusal (`refused`, the server's
/// message), the role the command needs, and the one thing to run: the
/// exact `tributary grant KIND USER` for the login role that `conninfo`
/// logs in as, or `tributary migrate` when it holds the role already (the
/// role's privileges are not this database's yet). Asks the database who
/// the login role is; says USER when it cannot.
std::string permission_refusal(const std::string& command, const std::string& refused, const std::string& conninfo);

/// "tributary grant KIND USER" for the login role `conninfo` logs in as
/// (USER when the database cannot tell): for a warning about a role that a
/// command does without (`run` without tributary_maintainer).
std::string grant_to_run(const std::string& kind, const std::string& conninfo);

}  // namespace tributary::cli
