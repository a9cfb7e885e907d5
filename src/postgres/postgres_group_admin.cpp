#include "postgres_group_admin.h"

#include "core/group_log.h"
#include "sql_errors.h"

namespace tributary::postgres {

namespace {

// Administration is rare: plain parameterised statements, not prepared.
constexpr const char* kCreateSql =
    "SELECT tributary.group_create($1, $2, $3, $4, $5::interval, $6)";
constexpr const char* kResetSql = "SELECT tributary.group_reset($1, $2)";
constexpr const char* kDeleteSql = "SELECT tributary.group_delete($1)";
constexpr const char* kStatusSql = R"sql(
SELECT name, pattern, ordered, max_deliveries, (extract(epoch FROM lease) * 1000)::bigint,
       events_behind, extract(epoch FROM oldest_unprocessed_age)::float8,
       batches_in_flight, retries_waiting, dead_letters
  FROM tributary.group_status
 WHERE $1::text IS NULL OR name = $1
 ORDER BY name)sql";
constexpr const char* kGroupExistsSql = "SELECT 1 FROM tributary.consumer_groups WHERE name = $1";
constexpr const char* kDeadLettersSql = R"sql(
SELECT seq, source, event_id, payload::text, deliveries, last_error, failed_at::text
  FROM tributary.dead_letters
 WHERE group_name = $1
 ORDER BY seq)sql";
constexpr const char* kReplaySql = "SELECT tributary.dead_letter_replay($1, $2)";

/// Runs `work` in one autocommit statement and turns the SQL API's errors
/// into domain errors.
template <typename Work>
auto api_call(PostgresSession& session, Work&& work) {
    try {
        return session.run([&](pqxx::connection& c) {
            pqxx::nontransaction tx(c);
            return work(tx);
        });
    } catch (const pqxx::sql_error& e) {
        throw_api_error(e);
    }
}

const char* null_or(const std::optional<std::string>& value) { return value ? value->c_str() : nullptr; }

}  // namespace

int PostgresGroupAdmin::create(const GroupSpec& spec) {
    return api_call(session_, [&](pqxx::nontransaction& tx) {
        return tx.exec_params(kCreateSql, spec.name, spec.pattern, spec.from, spec.max_deliveries, spec.lease,
                              spec.ordered)[0][0]
            .as<int>();
    });
}

void PostgresGroupAdmin::reset(const std::string& name, const std::string& to) {
    api_call(session_, [&](pqxx::nontransaction& tx) { return tx.exec_params(kResetSql, name, to).size(); });
}

bool PostgresGroupAdmin::remove(const std::string& name) {
    return api_call(session_,
                    [&](pqxx::nontransaction& tx) { return tx.exec_params(kDeleteSql, name)[0][0].as<bool>(); });
}

std::vector<GroupStatus> PostgresGroupAdmin::status() { return select_status(std::nullopt); }

std::optional<GroupStatus> PostgresGroupAdmin::status(const std::string& name) {
    auto rows = select_status(name);
    if (rows.empty()) return std::nullopt;
    return rows.front();
}

std::vector<GroupStatus> PostgresGroupAdmin::select_status(const std::optional<std::string>& name) {
    return api_call(session_, [&](pqxx::nontransaction& tx) {
        std::vector<GroupStatus> out;
        for (const auto& row : tx.exec_params(kStatusSql, null_or(name))) {
            GroupStatus s;
            s.name = row[0].as<std::string>();
            s.pattern = row[1].as<std::string>();
            s.ordered = row[2].as<bool>();
            s.max_deliveries = row[3].as<int>();
            s.lease_ms = row[4].as<std::int64_t>();
            s.events_behind = row[5].is_null() ? 0 : row[5].as<std::int64_t>();
            if (!row[6].is_null()) s.oldest_unprocessed_seconds = row[6].as<double>();
            s.batches_in_flight = row[7].is_null() ? 0 : row[7].as<int>();
            s.retries_waiting = row[8].is_null() ? 0 : row[8].as<int>();
            s.dead_letters = row[9].is_null() ? 0 : row[9].as<int>();
            out.push_back(std::move(s));
        }
        return out;
    });
}

std::vector<DeadLetter> PostgresGroupAdmin::dead_letters(const std::string& group) {
    return api_call(session_, [&](pqxx::nontransaction& tx) {
        if (tx.exec_params(kGroupExistsSql, group).empty())
            throw GroupNotFound("no consumer group named '" + group + "' (see `tributary group list`)");
        std::vector<DeadLetter> out;
        for (const auto& row : tx.exec_params(kDeadLettersSql, group))
            out.push_back(DeadLetter{row[0].as<std::int64_t>(), row[1].as<std::string>(),
                                     row[2].as<std::int64_t>(), row[3].as<std::string>(), row[4].as<int>(),
                                     row[5].is_null() ? std::string() : row[5].as<std::string>(),
                                     row[6].as<std::string>()});
        return out;
    });
}

int PostgresGroupAdmin::replay(const std::string& group, std::optional<std::int64_t> seq) {
    return api_call(session_, [&](pqxx::nontransaction& tx) {
        const std::string seq_text = seq ? std::to_string(*seq) : std::string();
        return tx.exec_params(kReplaySql, group, seq ? seq_text.c_str() : static_cast<const char*>(nullptr))[0][0]
            .as<int>();
    });
}

}  // namespace tributary::postgres
