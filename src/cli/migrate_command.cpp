#include <iostream>

#include "command.h"
#include "postgres/migrator.h"
#include "session_pooling.h"

namespace tributary::cli {

void add_migrate_command(CLI::App& app, const GlobalOptions& global, Action& action) {
    auto* cmd =
        app.add_subcommand("migrate", "Apply the embedded schema migrations (idempotent, safe to run concurrently)");
    cmd->callback([&global, &action] {
        action = [&global] {
            require_own_sessions(global.database_url(), {"migrate", "an advisory lock"});
            postgres::Migrator migrator(global.database_url());
            const auto applied = migrator.migrate();
            if (applied.empty()) std::cout << "schema is up to date\n";
            for (const auto& name : applied) std::cout << "applied " << name << "\n";
            return 0;
        };
    });
}

}  // namespace tributary::cli
