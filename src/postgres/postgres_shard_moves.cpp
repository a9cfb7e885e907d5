#include "postgres_shard_moves.h"

#include "api_call.h"
#include "postgres/statements.h"

namespace tributary::postgres {

namespace {

namespace sql = statements::shard_moves;

}  // namespace

std::vector<ShardLane> PostgresShardMoves::list() {
    return api_call(session_, [](pqxx::nontransaction& tx) {
        std::vector<ShardLane> lanes;
        for (const auto& r : tx.exec(sql::list))
            lanes.push_back({r[0].as<int>(), r[1].as<std::int64_t>(), r[2].as<std::string>(), r[3].as<std::string>()});
        return lanes;
    });
}

ShardMovePlan PostgresShardMoves::begin(int lane, const std::string& host, int port) {
    return api_call(session_, [&](pqxx::nontransaction& tx) {
        const auto r = tx.exec_params1(sql::move_begin, lane, host, port);
        return ShardMovePlan{r[0].as<std::int64_t>(), r[1].as<std::string>(""), r[2].as<std::string>(""),
                             r[3].as<bool>()};
    });
}

std::pair<std::string, std::string> PostgresShardMoves::prepare(int lane, std::int64_t margin_ids) {
    return api_call(session_, [&](pqxx::nontransaction& tx) {
        const auto r = tx.exec_params1(sql::move_prepare, lane, margin_ids);
        return std::make_pair(r[0].as<std::string>(), r[1].as<std::string>());
    });
}

void PostgresShardMoves::move_placement(std::int64_t shard_id, const std::pair<std::string, int>& from,
                                        const std::pair<std::string, int>& to, const std::string& transfer_mode) {
    api_call(session_, [&](pqxx::nontransaction& tx) {
        tx.exec_params(sql::move_placement, shard_id, from.first, from.second, to.first, to.second, transfer_mode);
        return 0;
    });
}

void PostgresShardMoves::abandon(int lane) {
    api_call(session_, [&](pqxx::nontransaction& tx) {
        tx.exec_params(sql::move_abandon, lane);
        return 0;
    });
}

ShardMoveEnd PostgresShardMoves::end(int lane, const std::string& prepared) {
    return api_call(session_, [&](pqxx::nontransaction& tx) {
        const auto r = tx.exec_params1(sql::move_end, lane, prepared.empty() ? nullptr : prepared.c_str());
        return ShardMoveEnd{r[0].as<std::string>(), r[1].as<std::string>(), r[2].as<bool>()};
    });
}

std::optional<std::string> PostgresShardMoves::adopt(int lane) {
    return api_call(session_, [&](pqxx::nontransaction& tx) {
        const auto r = tx.exec_params1(sql::adopt, lane);
        return r[0].is_null() ? std::nullopt : std::optional<std::string>(r[0].as<std::string>());
    });
}

}  // namespace tributary::postgres
