#include "postgres_group_admin.h"

#include "api_call.h"
#include "core/group_log.h"
#include "optional_field.h"
#include "postgres/statements.h"
#include "sql_errors.h"

namespace tributary::postgres {

namespace {

// Administration is rare: plain parameterised statements, not prepared.
namespace sql = statements::group_admin;

const char* null_or(const std::optional<std::string>& value) { return value ? value->c_str() : nullptr; }

}  // namespace

int PostgresGroupAdmin::create(const GroupSpec& spec) {
    return api_call(session_, [&](pqxx::nontransaction& tx) {
        return tx
            .exec_params(sql::create_group, spec.name, spec.pattern, spec.from, spec.max_deliveries, spec.lease,
                         spec.ordered, spec.lanes)[0][0]
            .as<int>();
    });
}

void PostgresGroupAdmin::reset(const std::string& name, const std::string& to) {
    api_call(session_, [&](pqxx::nontransaction& tx) { return tx.exec_params(sql::reset_group, name, to).size(); });
}

bool PostgresGroupAdmin::remove(const std::string& name) {
    return api_call(session_,
                    [&](pqxx::nontransaction& tx) { return tx.exec_params(sql::delete_group, name)[0][0].as<bool>(); });
}

std::vector<GroupStatus> PostgresGroupAdmin::status() { return select_status(std::nullopt); }

std::optional<GroupStatus> PostgresGroupAdmin::status(const std::string& name) {
    auto rows = select_status(name);
    if (rows.empty()) return std::nullopt;
    return rows.front();
}

std::optional<std::int64_t> PostgresGroupAdmin::lease_ms(const std::string& name) {
    try {
        return api_call(session_, [&](pqxx::nontransaction& tx) {
            return std::optional<std::int64_t>(tx.exec_params1(sql::lease, name)[0].as<std::int64_t>());
        });
    } catch (const GroupNotFound&) {
        return std::nullopt;
    }
}

std::vector<GroupStatus> PostgresGroupAdmin::select_status(const std::optional<std::string>& name) {
    return api_call(session_, [&](pqxx::nontransaction& tx) {
        std::vector<GroupStatus> out;
        for (const auto& row : tx.exec_params(sql::status, null_or(name))) {
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
            s.lanes = row[10].as<int>();
            s.unheld_lanes = row[11].as<int>();
            out.push_back(std::move(s));
        }
        return out;
    });
}

std::vector<LaneStatus> PostgresGroupAdmin::lanes(const std::string& group) {
    return api_call(session_, [&](pqxx::nontransaction& tx) {
        std::vector<LaneStatus> out;
        for (const auto& row : tx.exec_params(sql::lanes, group)) {
            LaneStatus l;
            l.lane = row[0].as<int>();
            l.holder = optional_field<std::string>(row[1]);
            l.events_behind = row[2].as<std::int64_t>();
            l.oldest_unprocessed_seconds = optional_field<double>(row[3]);
            l.batches_in_flight = row[4].as<int>();
            l.retries_waiting = row[5].as<int>();
            out.push_back(std::move(l));
        }
        return out;
    });
}

std::vector<DeadLetter> PostgresGroupAdmin::dead_letters(const std::string& group) {
    return api_call(session_, [&](pqxx::nontransaction& tx) {
        if (tx.exec_params(sql::group_exists, group).empty())
            throw GroupNotFound("no consumer group named '" + group + "' (see `tributary group list`)");
        std::vector<DeadLetter> out;
        for (const auto& row : tx.exec_params(sql::dead_letters, group))
            out.push_back(
                DeadLetter{row[0].as<std::int64_t>(), row[1].as<std::string>(), optional_field<std::int64_t>(row[2]),
                           row[3].as<std::string>(), row[4].as<std::string>(), row[5].as<int>(),
                           row[6].is_null() ? std::string() : row[6].as<std::string>(), row[7].as<std::string>()});
        return out;
    });
}

int PostgresGroupAdmin::replay(const std::string& group, std::optional<std::int64_t> seq) {
    return api_call(session_, [&](pqxx::nontransaction& tx) {
        const std::string seq_text = seq ? std::to_string(*seq) : std::string();
        return tx.exec_params(sql::replay, group, seq ? seq_text.c_str() : static_cast<const char*>(nullptr))[0][0]
            .as<int>();
    });
}

}  // namespace tributary::postgres
