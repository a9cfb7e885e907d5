#include "permission_refusal.h"

#include <map>
#include <optional>

#include "postgres/login_privileges.h"

namespace tributary::cli {

namespace {

/// Each command's adapters send only the statements its group role was
/// granted for (sql/privileges/20_roles.sql; docs/operations.md, "Roles"),
/// so the command, not the statement PostgreSQL refused, says which role is
/// missing: `status` refused on the view foreign_locks needs the admin's
/// (or the loader's) role, not SELECT on that view. A command group
/// ("source", "group", ...) stands for all its subcommands.
const std::map<std::string, CommandRole> kCommandRoles = {
    {"migrate", {"", "", true}},      {"grant", {"", "", true}},       {"run", {"loader", ""}},
    {"status", {"admin", "loader"}},  {"source", {"admin", ""}},       {"group", {"admin", ""}},
    {"dlq", {"admin", ""}},           {"retention", {"admin", ""}},    {"log", {"admin", "loader"}},
    {"consume", {"consumer", ""}},    {"tail", {"consumer", "admin"}}, {"receive", {"receiver", ""}},
    {"maintain", {"maintainer", ""}}, {"console", {"console", ""}},
};

std::string full_name(const std::string& kind) { return "tributary_" + kind; }

/// The login role and whether it holds `role`'s membership already; nothing
/// when the database cannot tell (it went away since the refusal).
std::optional<postgres::LoginPrivileges> login(const std::string& conninfo, const CommandRole& role) {
    try {
        auto found = postgres::login_privileges(conninfo, full_name(role.kind));
        if (!found.member && !role.alternative.empty())
            found.member = postgres::login_privileges(conninfo, full_name(role.alternative)).member;
        return found;
    } catch (const std::exception&) {
        return std::nullopt;
    }
}

std::string owner_refusal(const std::string& command, const std::string& user) {
    if (command == "grant")
        return "  `tributary grant` makes roles members of tributary's group roles: run it as a role with "
               "CREATEROLE (the schema's owner that ran `tributary migrate`) or a superuser, not as " +
               user + "\n";
    return "  `tributary migrate` changes the schema: run it as the schema's owner (or a superuser), not as " + user +
           "\n";
}

}  // namespace

CommandRole role_for(const std::string& command) {
    const auto first = command.substr(0, command.find(' '));
    const auto found = kCommandRoles.find(first);
    return found == kCommandRoles.end() ? CommandRole{} : found->second;
}

std::string permission_refusal(const std::string& command, const std::string& refused, const std::string& conninfo) {
    const auto role = role_for(command);
    std::string text = refused + "\n";
    if (role.owner) {
        const auto who = login(conninfo, {"admin", "", false});  // for the login's name only
        return text + owner_refusal(command, who ? who->user : "this role");
    }
    if (role.kind.empty())
        return text + "  `tributary " + command + "` needs a group role: see `tributary grant --help`\n";
    const auto who = login(conninfo, role);
    const std::string user = who ? who->user : "USER";
    text += "  `tributary " + command + "` needs the role " + full_name(role.kind) +
            (role.alternative.empty() ? "" : " (or " + full_name(role.alternative) + ")");
    if (who && who->member)
        return text + ", which " + user +
               " holds, but the role lacks this privilege in this database: its privileges are applied by "
               "`migrate`.\n  As the schema's owner, run: tributary migrate\n";
    return text + (who ? ", which " + user + " does not hold" : "") +
           ".\n  As the schema's owner, run: tributary grant " + role.kind + " " + user + "\n";
}

std::string grant_to_run(const std::string& kind, const std::string& conninfo) {
    const auto who = login(conninfo, {kind, "", false});
    return "tributary grant " + kind + " " + (who ? who->user : "USER");
}

}  // namespace tributary::cli
