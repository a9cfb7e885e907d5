#include <iostream>
#include <map>
#include <memory>

#include "command.h"
#include "postgres/role_membership.h"
#include "usage_error.h"

namespace tributary::cli {

namespace {

/// The group roles by the short names the command takes (the full names
/// are accepted too).
const std::map<std::string, std::string> kGroupRoles = {
    {"loader", "tributary_loader"},     {"consumer", "tributary_consumer"},   {"admin", "tributary_admin"},
    {"receiver", "tributary_receiver"}, {"publisher", "tributary_publisher"}, {"maintainer", "tributary_maintainer"},
    {"console", "tributary_console"},
};

std::string group_role(const std::string& name) {
    for (const auto& [short_name, full_name] : kGroupRoles)
        if (name == short_name || name == full_name) return full_name;
    throw UsageError("unknown role '" + name +
                     "': use loader, consumer, admin, receiver, publisher, maintainer or console");
}

struct GrantOptions {
    std::string role;
    std::string user;
    bool revoke = false;
};

}  // namespace

void add_grant_command(CLI::App& app, const GlobalOptions& global, Action& action) {
    auto options = std::make_shared<GrantOptions>();
    auto* cmd = app.add_subcommand("grant", "Make a PostgreSQL login role a member of one of tributary's group roles");
    cmd->add_option("ROLE", options->role, "loader, consumer, admin, receiver, publisher, maintainer or console")
        ->required();
    cmd->add_option("USER", options->user, "the login role (PostgreSQL user) to grant it to")->required();
    cmd->add_flag("--revoke", options->revoke, "take the membership away instead");
    cmd->callback([&global, &action, options] {
        action = [&global, options] {
            const auto role = group_role(options->role);
            postgres::RoleMembership(global.database_url()).set(role, options->user, options->revoke);
            std::cout << (options->revoke ? "revoked " + role + " from " : "granted " + role + " to ") << options->user
                      << "\n";
            return 0;
        };
    });
}

}  // namespace tributary::cli
