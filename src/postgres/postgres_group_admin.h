#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "group_records.h"
#include "postgres_session.h"

namespace tributary::postgres {

/// Administration of consumer groups and their dead letters through the SQL
/// API (group_create, group_reset, group_delete, dead_letter_replay,
/// group_lanes_status and the views group_status and dead_letters). Errors: InvalidRequest for bad
/// arguments and GroupNotFound for an unknown group (sql_errors.h,
/// core/group_log.h), DatabaseUnavailable, std::runtime_error with the
/// server's message for anything else (e.g. a name that exists).
class PostgresGroupAdmin {
public:
    explicit PostgresGroupAdmin(PostgresSession& session) : session_(session) {}

    int create(const GroupSpec& spec);
    void reset(const std::string& name, const std::string& to);
    /// False when there was no such group.
    bool remove(const std::string& name);
    std::vector<GroupStatus> status();
    std::optional<GroupStatus> status(const std::string& name);
    /// The group's lease in milliseconds, nothing when there is no such group: unlike
    /// status(), it counts no backlog (on Citus, every lane's worker would be asked).
    std::optional<std::int64_t> lease_ms(const std::string& name);
    /// The lanes of a group of lanes, in order (none for a group of one lane). Throws
    /// GroupNotFound for an unknown group.
    std::vector<LaneStatus> lanes(const std::string& group);
    /// Throws GroupNotFound for an unknown group.
    std::vector<DeadLetter> dead_letters(const std::string& group);
    /// Puts dead letters back as retries due now (all, or the one `seq`);
    /// returns how many.
    int replay(const std::string& group, std::optional<std::int64_t> seq);

private:
    std::vector<GroupStatus> select_status(const std::optional<std::string>& name);

    PostgresSession& session_;
};

}  // namespace tributary::postgres
