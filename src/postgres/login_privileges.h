#pragma once

#include <string>
#include <vector>

namespace tributary::postgres {

/// The login role a connection string logs in as, measured against one of
/// tributary's group roles (tributary_loader, ...: sql/privileges/20_roles.sql).
struct LoginPrivileges {
    std::string user;                  ///< session_user: whom `tributary grant` must name
    bool member = false;               ///< a member of the group role (directly or through others)
    std::vector<std::string> missing;  ///< the group role's privileges it lacks, e.g. SELECT on tributary.gates
};

/// Connects as `conninfo` and compares its privileges in schema tributary
/// with `group_role`'s (a full name). Reads only the catalogs. A group role
/// that does not exist has no privileges to miss. Throws
/// DatabaseUnavailable when it cannot connect.
LoginPrivileges login_privileges(const std::string& conninfo, const std::string& group_role);

/// For a long-running command, at start: throws PermissionDenied, naming
/// the first privileges missing, unless the login holds every privilege of
/// `group_role`, so that the command refuses once with what to grant
/// instead of failing at every pass. Throws DatabaseUnavailable too.
void require_privileges_of(const std::string& conninfo, const std::string& group_role);

}  // namespace tributary::postgres
