#pragma once

#include <string>

namespace tributary::postgres {

/// Membership of login roles in tributary's group roles (tributary_loader,
/// tributary_consumer, tributary_admin: sql/privileges/20_roles.sql). Needs
/// a connection as a role that may grant them (CREATEROLE, or the admin
/// option on the group role).
class RoleMembership {
public:
    explicit RoleMembership(std::string conninfo) : conninfo_(std::move(conninfo)) {}

    /// Makes `member` a member of `group_role` (a full name, e.g.
    /// "tributary_consumer"), or with `revoke` no longer one. Throws with a
    /// message that says what to do when either role does not exist.
    void set(const std::string& group_role, const std::string& member, bool revoke);

private:
    std::string conninfo_;
};

}  // namespace tributary::postgres
